"""Training and evaluation of the deck-completion models: the registry kinds ``deck_masked`` (the default: masked
diffusion over card tokens + neighbour retrieval) and ``deck_diffusion`` (the continuous Manamorphosis model).
Plain functions that ``manage.py train_completion`` / ``train_diffusion`` and the training runs (``ml.training``)
call; registered from ``MlConfig.ready``. Both train on the corpus decks first seen before the split date.
"""
from __future__ import annotations

import json
import time

import numpy as np

from decks.core.rules import FORMATS
from ml.completion.evaluate import compare
from ml.datasets import DEFAULT_SPLIT, card_tables, deck_arrays, names_sha1, split_day
from ml.diffusion.data import card_popularity, split_by_date
from ml.kinds import ConfigError, Kind, TrainingError, need, settle
from ml.models import ModelVersion
from ml.progress import Progress
from ml.registry import NoActiveModel, model_dir, save_version

MASKED = "deck_masked"
MASKED_FORMAT = "masked-v1"
MASKED_QUICK = {"steps": 40, "examples": 400, "batch": 16, "d_model": 32, "heads": 2, "layers": 1, "ff": 64,
                "candidates": 48}
MASKED_DEFAULTS = {"preset": "default", "seed": 0, "split_date": DEFAULT_SPLIT, "limit": None, "no_text_init": False,
                   "no_retrieval": False,
                   "resume": False, "time_budget": None, "notes": ""}
# model / training parameters and the MaskedConfig / TrainConfig fields they set
MODEL_OPTIONS = {"d_model": "d_model", "heads": "heads", "layers": "layers", "ff": "ff", "candidates": "candidates",
                 "head": "head"}
TRAIN_OPTIONS = {"steps": "steps", "batch": "batch", "lr": "lr", "examples": "examples"}

DIFFUSION = "deck_diffusion"
DIFFUSION_DEFAULTS = {"steps": 3000, "batch": 64, "lr": 5e-4, "warmup": 200, "d_model": 128, "heads": 4, "layers": 4,
                      "ff": 512, "side_layers": 2, "context_layers": 1, "prediction": "v", "seed": 0,
                      "eval_every": 500, "split_date": DEFAULT_SPLIT, "device": None, "resume": False, "limit": None,
                      "notes": ""}


def _active_embeddings():
    from ml.embeddings.service import active_embeddings  # noqa: PLC0415 torch: kept off Django start-up

    try:
        return active_embeddings()
    except NoActiveModel as exc:
        raise TrainingError(f"{exc} (run train_embeddings first)") from None


def _training_decks(arrays, split, seed: int, limit: int | None):
    """(training decks, held-out decks): split by first-seen date, at most ``limit`` training decks."""
    train_arrays, test_arrays = split_by_date(arrays, split)
    if limit:
        rng = np.random.default_rng(seed)
        pick = np.sort(rng.choice(len(train_arrays), size=min(limit, len(train_arrays)), replace=False))
        train_arrays = train_arrays.subset(pick)
    return train_arrays, test_arrays


# --- deck_masked ---------------------------------------------------------------------------------------------

def checkpoint_path(seed: int, retrieval: bool = True, head: str = "slot", split_date: str = DEFAULT_SPLIT):
    """Where an interrupted run of these settings resumes from (runs of other settings keep their own files)."""
    tag = f"seed{seed}-{head}-{split_date}{'' if retrieval else '-no-retrieval'}"
    return model_dir() / MASKED / "checkpoints" / f"train-{tag}.safetensors"


def train_masked(params: dict, progress: Progress, scope: str = "") -> ModelVersion:
    """Train the masked completer and register an inactive version. ``preset``: quick (a tiny model in seconds)
    or default (the dataclasses'); the model and training parameters override it."""
    # torch takes seconds to import, scipy a tenth: kept off Django start-up (MlConfig.ready imports this module)
    from ml.completion.retrieval import RetrievalParams  # noqa: PLC0415 scipy: kept off Django start-up
    from ml.diffusion.masked import MaskedConfig  # noqa: PLC0415 torch: kept off Django start-up
    from ml.diffusion.masked_sampler import SAMPLER_DEFAULTS  # noqa: PLC0415 torch: kept off Django start-up
    from ml.diffusion.masked_train import TrainConfig, prepare, train  # noqa: PLC0415 torch: kept off Django start-up

    p = settle(params, MASKED_DEFAULTS)
    if p["preset"] not in ("quick", "default"):
        raise TrainingError("parameter preset: quick or default")
    values = {**(MASKED_QUICK if p["preset"] == "quick" else {}), **{k: v for k, v in p.items() if (
        k in MODEL_OPTIONS or k in TRAIN_OPTIONS or k == "neighbours")}}
    for key in ("steps", "examples", "batch", "d_model", "heads", "layers", "ff", "candidates", "neighbours"):
        if key in values and values[key] < 1:
            raise TrainingError(f"--{key.replace('_', '-')} must be at least 1.")
    if values.get("head", "slot") not in ("slot", "token"):
        raise TrainingError(f"--head must be slot or token, not {values['head']!r}.")
    if p["time_budget"] is not None and p["time_budget"] <= 0:
        raise TrainingError("--time-budget must be a positive number of seconds.")
    emb = _active_embeddings()
    try:
        split = split_day(p["split_date"])
    except ValueError:
        raise TrainingError(f"--split-date {p['split_date']!r} is not a date (YYYY-MM-DD).") from None
    progress.expect(2)  # planning examples (retrieval), training
    started = time.perf_counter()
    names = emb.names
    arrays = deck_arrays(names)
    train_arrays, test_arrays = _training_decks(arrays, split, p["seed"], p["limit"])
    if len(train_arrays) < 2:
        raise TrainingError("Too few training decks: import the deck corpus first (manage.py import_decks).")
    progress.log(f"decks: {len(train_arrays)} train, {len(test_arrays)} held out (first seen >= {p['split_date']})")

    tables = card_tables(names)
    retrieval = RetrievalParams.from_dict({"neighbours": values["neighbours"]} if "neighbours" in values else {})
    prep = prepare(train_arrays, len(names), tables.legal, tables.copy_limit, tables.restricted, retrieval)
    mc = MaskedConfig.from_dict({**MaskedConfig().to_dict(), "formats": len(FORMATS),
                                 "vocab": len(prep.cards) + 1, "retrieval": not p["no_retrieval"],
                                 **{field: values[opt] for opt, field in MODEL_OPTIONS.items() if opt in values}})
    if mc.d_model % mc.heads:
        raise TrainingError(f"--d-model ({mc.d_model}) must be a multiple of --heads ({mc.heads}).")
    tc = TrainConfig.from_dict({**TrainConfig().to_dict(), "seed": p["seed"], "text_init": not p["no_text_init"],
                                **{field: values[opt] for opt, field in TRAIN_OPTIONS.items() if opt in values}})
    if p["preset"] == "quick":
        tc.val_examples = min(tc.val_examples, 64)
        tc.checkpoint_every = max(tc.steps, 1)
    progress.log(f"vocabulary: {len(prep.cards)} cards seen in the training decks; "
                 f"model {json.dumps(mc.to_dict())}; training {json.dumps(tc.to_dict())}")
    ckpt = checkpoint_path(p["seed"], mc.retrieval, mc.head, p["split_date"])
    if p["resume"] and not ckpt.exists():
        progress.log(f"no checkpoint at {ckpt}: starting from step 0")

    plan_bar = progress.bar(total=min(tc.examples, len(train_arrays)), desc="planning examples", unit="deck")

    def planned(done, total):
        plan_bar.n = done
        plan_bar.refresh()

    bar = None

    def report(step, total, loss, message):
        nonlocal bar
        if bar is None:
            plan_bar.n = plan_bar.total
            plan_bar.close()
            bar = progress.bar(total=total, desc="training", unit="step")
        bar.n = step
        bar.set_postfix(gate=message.removeprefix("gate ").strip(), loss=f"{loss:.4f}")  # loss: the run's metric
        bar.refresh()

    text_vectors = None if p["no_text_init"] else emb.E.float().numpy()
    try:
        state, metrics = train(prep, mc, tc, text_vectors=text_vectors, checkpoint=ckpt, resume=p["resume"],
                               progress=report, stop_after=p["time_budget"], plan_progress=planned)
    except (RuntimeError, ValueError) as exc:
        if p["resume"]:
            raise TrainingError(f"Cannot resume from {ckpt} ({exc}); run again without --resume.") from None
        raise
    finally:
        plan_bar.close()
        if bar is not None:
            bar.close()
    if not metrics["finished"]:
        raise TrainingError(
            f"Stopped at step {metrics['steps']} of {tc.steps} (--time-budget {p['time_budget']:g}s); the "
            f"checkpoint is {ckpt}: run the same command with --resume to go on. Nothing was registered.")
    model_config = metrics.pop("config")
    metrics.pop("train_config", None)
    metrics.update({"test_decks": len(test_arrays), "total_seconds": round(time.perf_counter() - started, 1),
                    "device": "cpu"})
    config = {"format": MASKED_FORMAT, "model": model_config, "retrieval": retrieval.to_dict(),
              "cards": [names[int(i)] for i in prep.cards], "names_sha1": names_sha1(names),
              "split_date": p["split_date"], "train": tc.to_dict(), "embeddings_version": emb.version_id,
              "sampler": dict(SAMPLER_DEFAULTS, chosen_on="validation month 2026-04 (bench/completion_gates.py)")}
    return save_version(MASKED, state, config, metrics=metrics, activate=False,
                        data_snapshot={"corpus_decks": len(arrays), "train_decks": len(train_arrays),
                                       "split_date": p["split_date"], "limit": p["limit"]},
                        metadata={"format": MASKED_FORMAT},
                        notes=p["notes"] or "")


def _held_out(names, split_date: str):
    """(training decks, held-out decks, card tables) of the corpus split at ``split_date``."""
    train_arrays, test = split_by_date(deck_arrays(names), split_day(split_date))
    if len(test) == 0:
        raise TrainingError("no held-out decks (first seen after the split date) to evaluate on")
    return train_arrays, test, card_tables(names)


def _compare_bar(bar):
    """``compare``'s progress callback, moving ``bar``."""
    def report(done, total, label):
        bar.total, bar.n = max(total, 1), done
        bar.set_description(label)
        bar.refresh()
    return report


def _recall_metrics(results: dict, keys, Ks, out: dict, progress: Progress) -> dict:
    for k, r in results.items():
        for key in keys:
            if key in r:
                out[f"{key}_k{k}"] = r[key]
    if f"main_recall_k{Ks[0]}" in out:
        progress.metric(f"main_recall_k{Ks[0]}", out[f"main_recall_k{Ks[0]}"])
    return out


def evaluate_masked(version: ModelVersion, params: dict, progress: Progress) -> dict:
    """eval_completion's measure (main/side recall at K, validity) on the decks first seen on or after the
    version's split date, with the retrieval index fitted on the decks before it (no leak)."""
    # torch takes seconds to import: kept off Django start-up (MlConfig.ready imports this module)
    from ml.completion_service import build_masked_completer  # noqa: PLC0415 torch: kept off Django start-up

    progress.expect(2)
    bar = progress.bar(total=1, desc="loading decks and fitting the retrieval index")
    names = _active_embeddings().names
    split = version.config.get("split_date") or DEFAULT_SPLIT
    train_arrays, test, tables = _held_out(names, split)
    completer = build_masked_completer(version=version, split_date=split)
    bar.update(1)
    n = int(params.get("n", 30))
    Ks = [int(k) for k in params.get("known", [10, 20])]
    report = _compare_bar(progress.bar(total=1, desc=f"completing {n} held-out decks"))
    started = time.perf_counter()
    results = compare({"masked": completer.complete_idx}, test, card_popularity(train_arrays, len(names)), Ks, n,
                      int(params.get("seed", 0)), tables.legal, tables.copy_limit, progress=report,
                      restricted=tables.restricted)
    out = {"decks": n, "formats": len(FORMATS), "split_date": split, "seconds": round(time.perf_counter() - started, 1)}
    return _recall_metrics(results["masked"], ("main_recall", "side_recall", "valid_share", "per_second"), Ks, out,
                           progress)


# --- deck_diffusion ------------------------------------------------------------------------------------------

def train_diffusion(params: dict, progress: Progress, scope: str = "") -> ModelVersion:
    """Train the Manamorphosis denoiser (set transformer DDPM over card embeddings); register an inactive version."""
    # torch takes seconds to import: kept off Django start-up (MlConfig.ready imports this module)
    from ml.completion_service import device as default_device  # noqa: PLC0415 torch: kept off Django start-up
    from ml.diffusion.model import DeckDenoiser, DenoiserConfig  # noqa: PLC0415 torch: kept off Django start-up
    from ml.diffusion.trainer import TrainConfig, train  # noqa: PLC0415 torch: kept off Django start-up

    p = settle(params, DIFFUSION_DEFAULTS)
    emb = _active_embeddings()
    started = time.perf_counter()
    arrays = deck_arrays(emb.names)
    train_arrays, test_arrays = _training_decks(arrays, split_day(p["split_date"]), p["seed"], p["limit"])
    if len(train_arrays) == 0:
        raise TrainingError("No training decks: import the deck corpus first (manage.py import_decks).")
    progress.log(f"decks: {len(train_arrays)} train, {len(test_arrays)} held out (first seen >= {p['split_date']})")

    mc = DenoiserConfig(dim=int(emb.E.shape[1]), d_model=p["d_model"], heads=p["heads"], layers=p["layers"],
                        ff=p["ff"], side_layers=p["side_layers"], context_layers=p["context_layers"],
                        prediction=p["prediction"])
    tc = TrainConfig(batch=p["batch"], lr=p["lr"], steps=p["steps"], warmup=min(p["warmup"], p["steps"] // 2),
                     seed=p["seed"], eval_every=p["eval_every"], val_decks=min(1024, max(len(test_arrays), 1)))
    parameters = DeckDenoiser(mc).parameter_count()
    progress.log(f"model: {parameters:,} parameters ({json.dumps(mc.to_dict())})")
    device = p["device"] or default_device()
    ckpt = model_dir() / DIFFUSION / "checkpoints" / f"train-seed{p['seed']}.safetensors"
    bar = progress.bar(total=tc.steps, desc="training", unit="step")

    def report(step, total, loss, val_loss):
        bar.n = step
        bar.set_postfix(loss=f"{loss:.4f}", **({"val": f"{val_loss:.4f}"} if val_loss is not None else {}))
        bar.refresh()

    state, metrics = train(train_arrays, test_arrays if len(test_arrays) else None, emb.E.numpy(), mc, tc,
                           checkpoint_path=ckpt, resume=p["resume"], progress=report, device=device)
    bar.close()
    metrics = {k: v for k, v in metrics.items() if k != "history"} | {
        "parameters": parameters, "train_decks": len(train_arrays), "test_decks": len(test_arrays),
        "seconds": round(time.perf_counter() - started, 1), "device": device}
    config = {"model": mc.to_dict(), "train": tc.to_dict(), "T": mc.T, "names_sha1": names_sha1(emb.names),
              "embeddings_version": emb.version_id, "split_date": p["split_date"]}
    return save_version(DIFFUSION, state, config, metrics=metrics, activate=False,
                        data_snapshot={"corpus_decks": len(arrays), "split_date": p["split_date"]}, notes=p["notes"])


class DiffusionMethod:
    """Adapter from the evaluation's index interface to the name-based Completer."""

    def __init__(self, completer, names, sampler: str, steps: int):
        self.completer, self.names, self.sampler, self.steps = completer, names, sampler, steps
        self.index = {n: i for i, n in enumerate(names)}

    def __call__(self, main_known, side_known, fmt, seed):
        def counts(idx):
            u, c = np.unique(np.asarray(idx, dtype=np.int64), return_counts=True)
            return [(self.names[i], int(n)) for i, n in zip(u, c)]
        done = self.completer.complete(counts(main_known), counts(side_known), FORMATS[int(fmt)], seed=int(seed),
                                       sampler=self.sampler, steps=self.steps)

        def expand(pairs):
            return np.array([self.index[n] for n, c in pairs for _ in range(c)], dtype=np.int64)
        return expand(done.main), expand(done.side)


def evaluate_diffusion(version: ModelVersion, params: dict, progress: Progress) -> dict:
    """eval_completion's measure (main/side recall at K, validity) on held-out corpus decks, for this version."""
    # torch takes seconds to import: kept off Django start-up (MlConfig.ready imports this module)
    from ml.completion_service import build_completer  # noqa: PLC0415 torch: kept off Django start-up

    progress.expect(2)
    bar = progress.bar(total=1, desc="loading decks and the model")
    names = _active_embeddings().names
    train_arrays, test, tables = _held_out(names, version.config.get("split_date") or DEFAULT_SPLIT)
    completer = build_completer(diffusion=version)
    n = int(params.get("n", 30))
    Ks = [int(k) for k in params.get("known", [10, 20])]
    method = DiffusionMethod(completer, names, params.get("sampler", "fast"), int(params.get("steps", 50)))
    bar.update(1)
    report = _compare_bar(progress.bar(total=1, desc=f"completing {n} held-out decks"))
    results = compare({"diffusion": method}, test, card_popularity(train_arrays, len(names)), Ks, n,
                      int(params.get("seed", 0)), tables.legal, tables.copy_limit, progress=report,
                      restricted=tables.restricted)
    return _recall_metrics(results["diffusion"], ("main_recall", "side_recall", "valid"), Ks,
                           {"decks": n, "formats": len(FORMATS)}, progress)


# --- the registry kinds --------------------------------------------------------------------------------------

def _state_shapes(build, what: str) -> dict:
    """The tensor shapes of the network ``build()`` makes on PyTorch's meta device (no memory, no computation)."""
    import torch  # noqa: PLC0415 kept off Django start-up

    try:
        with torch.device("meta"):
            model = build()
    except ConfigError:
        raise
    except (TypeError, ValueError, AssertionError, RuntimeError) as exc:
        raise ConfigError(f"the model config cannot build {what}: {exc}") from None
    return {name: tuple(t.shape) for name, t in model.state_dict().items()}


def diffusion_shapes(config: dict) -> dict:
    from ml.diffusion.model import DeckDenoiser, DenoiserConfig  # noqa: PLC0415 torch: kept off Django start-up

    need(config, "model")
    return _state_shapes(lambda: DeckDenoiser(DenoiserConfig.from_dict(config["model"])), "a denoiser")


def masked_shapes(config: dict) -> dict:
    from ml.diffusion.masked_train import denoiser_for  # noqa: PLC0415 torch: kept off Django start-up

    need(config, "model", "cards")
    if config.get("format", MASKED_FORMAT) != MASKED_FORMAT:
        raise ConfigError(f"unknown deck_masked format {config.get('format')!r} ({MASKED_FORMAT})")
    if not isinstance(config["model"], dict) or not isinstance(config["cards"], list):
        raise ConfigError("model must be a JSON object and cards a list of card names")

    def build():
        vocab = config["model"].get("vocab")
        if vocab != len(config["cards"]) + 1:
            raise ConfigError(f"model.vocab is {vocab} but cards lists {len(config['cards'])} names "
                              f"(the vocabulary is the cards plus token 0, unknown)")
        return denoiser_for(config["model"])
    return _state_shapes(build, "a masked denoiser")


def masked_metadata(config: dict) -> dict:
    def masked_format(value):
        return None if value == MASKED_FORMAT else f"metadata 'format' must be {MASKED_FORMAT!r}"
    return {"format": masked_format}


DECK_MASKED = Kind(
    MASKED, label="Deck completion: masked diffusion + retrieval", shapes=masked_shapes, metadata=masked_metadata, train=train_masked, evaluate=evaluate_masked,
    parameters={"preset": str, "steps": int, "examples": int, "batch": int, "lr": float, "d_model": int, "heads": int,
                "layers": int, "ff": int, "candidates": int, "neighbours": int, "seed": int, "split_date": str,
                "limit": int, "no_text_init": bool, "no_retrieval": bool, "time_budget": float, "head": str},
    evaluate_parameters={"n": int, "known": list, "seed": int},
    quick=lambda scope: MASKED_QUICK)

DECK_DIFFUSION = Kind(
    DIFFUSION, label="Deck completion diffusion", shapes=diffusion_shapes, train=train_diffusion, evaluate=evaluate_diffusion,
    parameters={"steps": int, "batch": int, "lr": float, "warmup": int, "d_model": int, "heads": int, "layers": int,
                "ff": int, "side_layers": int, "context_layers": int, "prediction": str, "seed": int,
                "eval_every": int, "split_date": str, "device": str, "limit": int},
    quick=lambda scope: {"steps": 60, "batch": 16, "d_model": 64, "heads": 4, "layers": 2, "ff": 128,
                         "side_layers": 1, "context_layers": 1, "eval_every": 30, "limit": 2000, "warmup": 10})
