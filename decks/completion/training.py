"""Training of the deck-completion models: the registry kinds ``deck_masked`` (the default: masked diffusion over
card tokens + neighbour retrieval) and ``deck_diffusion`` (the continuous Manamorphosis model). Plain functions
that the training runs (``ml.training``, ``manage.py models train KIND``) call through ``decks.kinds``. Both train
on the corpus decks first seen before the split date. Importing it loads no torch (``DecksConfig.ready`` does).
"""
from __future__ import annotations

import hashlib
import json
import time

import numpy as np

from decks.core.rules import FORMATS
from decks.completion.kind_names import DIFFUSION, MASKED, RANK
from decks.completion.datasets import DEFAULT_SPLIT, LATEST, card_tables, deck_arrays, names_sha1, resolve_split, split_day
from decks.completion.models.deck_arrays import split_by_date
from ml.kinds import TrainingError, settle
from ml.models import ModelVersion
from ml.progress import Progress
from ml.registry import NoActiveModel, model_dir, save_version
from common.device import DeviceUnavailable, resolve_device
from plumbing.device import device as default_device

MASKED_FORMAT = "masked-v1"
MASKED_QUICK = {"steps": 40, "examples": 400, "batch": 16, "d_model": 32, "heads": 2, "layers": 1, "ff": 64,
                "candidates": 48}
MASKED_DEFAULTS = {"preset": "default", "seed": 0, "split_date": DEFAULT_SPLIT, "limit": None, "no_text_init": False,
                   "no_retrieval": False, "device": None,
                   "resume": False, "time_budget": None, "notes": ""}
# model / training parameters and the MaskedConfig / TrainConfig fields they set
MODEL_OPTIONS = {"d_model": "d_model", "heads": "heads", "layers": "layers", "ff": "ff", "candidates": "candidates",
                 "head": "head"}
TRAIN_OPTIONS = {"steps": "steps", "batch": "batch", "lr": "lr", "examples": "examples"}

RANK_FORMAT = "deck-rank-v1"
# the recipe bench/rank_study.py chose on the validation month (4 months of examples, width 128, 2 attention layers,
# 6 epochs: +0.2 point of the top-15 proxy over the 2-month, width-64, 1-layer, 3-epoch recipe shipped before,
# p < 0.001 over 4,500 decks); the sideboard's retrieval 0.25 x the finished main deck + 0.75 x the user's cards
# (query_mix, chosen among 1 / 0.5 / 0.25 on the validation month: bench/results/rank_study_query_mix.md and
# docs/completion.md)
RANK_DEFAULTS = {"split_date": DEFAULT_SPLIT, "months": 4, "per_month": 6000, "val": 900, "epochs": 6, "batch": 64,
                 "lr": 2e-3, "width": 128, "layers": 2, "heads": 4, "slots": 64, "neighbours": 200,
                 "query_mix": 0.25, "no_card_features": False, "no_archetype_groups": False, "seed": 0, "notes": ""}
RANK_QUICK = {"months": 1, "per_month": 200, "val": 60, "epochs": 2, "width": 16, "layers": 1, "heads": 2}

DIFFUSION_DEFAULTS = {"steps": 3000, "batch": 64, "lr": 5e-4, "warmup": 200, "d_model": 128, "heads": 4, "layers": 4,
                      "ff": 512, "side_layers": 2, "context_layers": 1, "prediction": "v", "seed": 0,
                      "eval_every": 500, "split_date": DEFAULT_SPLIT, "device": None, "resume": False, "limit": None,
                      "notes": ""}


def training_device(asked: str | None) -> str:
    """The device of a training run: its ``device`` parameter (auto|cpu|cuda) or, unset, ``MTG_DEVICE``."""
    try:
        return resolve_device(asked) if asked else default_device()
    except (DeviceUnavailable, ValueError) as exc:
        raise TrainingError(str(exc)) from None


def training_embeddings():
    from decks.embeddings.service import active_embeddings  # noqa: PLC0415 torch: kept off Django start-up

    try:
        return active_embeddings()
    except NoActiveModel as exc:
        raise TrainingError(f"{exc} (train card_embeddings first: manage.py models train card_embeddings)") from None


def _resolved_split(date: str, names: list[str]) -> str:
    """``split_date`` of a run: ``latest`` (refit on every corpus deck) becomes the day after the newest deck."""
    try:
        return resolve_split(date, deck_arrays(names)) if str(date).strip().lower() == LATEST else date
    except ValueError as exc:
        raise TrainingError(f"parameter split_date: {exc}.") from None


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
    # torch takes seconds to import, scipy a tenth: kept off Django start-up (DecksConfig.ready imports this module)
    from decks.completion.models.retrieval import RetrievalParams  # noqa: PLC0415 scipy: kept off Django start-up
    from decks.completion.models.masked.model import MaskedConfig  # noqa: PLC0415 torch: kept off Django start-up
    from decks.completion.models.masked.sampler import SAMPLER_DEFAULTS  # noqa: PLC0415 torch: kept off Django start-up
    from decks.completion.models.masked.train import TrainConfig, prepare, train  # noqa: PLC0415 torch: kept off Django start-up

    p = settle(params, MASKED_DEFAULTS)
    if p["preset"] not in ("quick", "default"):
        raise TrainingError("parameter preset: quick or default")
    values = {**(MASKED_QUICK if p["preset"] == "quick" else {}), **{k: v for k, v in p.items() if (
        k in MODEL_OPTIONS or k in TRAIN_OPTIONS or k == "neighbours")}}
    for key in ("steps", "examples", "batch", "d_model", "heads", "layers", "ff", "candidates", "neighbours"):
        if key in values and values[key] < 1:
            raise TrainingError(f"parameter {key} must be at least 1.")
    if values.get("head", "slot") not in ("slot", "token"):
        raise TrainingError(f"parameter head must be slot or token, not {values['head']!r}.")
    if p["time_budget"] is not None and p["time_budget"] <= 0:
        raise TrainingError("parameter time_budget must be a positive number of seconds.")
    emb = training_embeddings()
    p["split_date"] = _resolved_split(p["split_date"], emb.names)
    try:
        split = split_day(p["split_date"])
    except ValueError:
        raise TrainingError(f"parameter split_date {p['split_date']!r} is not a date (YYYY-MM-DD).") from None
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
        raise TrainingError(f"parameter d_model ({mc.d_model}) must be a multiple of heads ({mc.heads}).")
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
    device = training_device(p["device"])
    try:
        state, metrics = train(prep, mc, tc, text_vectors=text_vectors, checkpoint=ckpt, resume=p["resume"],
                               progress=report, stop_after=p["time_budget"], plan_progress=planned, device=device)
    except (RuntimeError, ValueError) as exc:
        if p["resume"]:
            raise TrainingError(f"Cannot resume from {ckpt} ({exc}); run again without resume.") from None
        raise
    finally:
        plan_bar.close()
        if bar is not None:
            bar.close()
    if not metrics["finished"]:
        raise TrainingError(
            f"Stopped at step {metrics['steps']} of {tc.steps} (time_budget {p['time_budget']:g}s); the "
            f"checkpoint is {ckpt}: run it again with the parameter resume (true) to go on. Nothing was registered.")
    model_config = metrics.pop("config")
    metrics.pop("train_config", None)
    metrics.update({"test_decks": len(test_arrays), "total_seconds": round(time.perf_counter() - started, 1),
                    "device": device})
    config = {"format": MASKED_FORMAT, "model": model_config, "retrieval": retrieval.to_dict(),
              "cards": [names[int(i)] for i in prep.cards], "names_sha1": names_sha1(names),
              "split_date": p["split_date"], "train": tc.to_dict(), "embeddings_version": emb.version_id,
              "sampler": dict(SAMPLER_DEFAULTS, chosen_on="validation month 2026-04 (bench/completion_gates.py)")}
    return save_version(MASKED, state, config, metrics=metrics, activate=False,
                        data_snapshot={"corpus_decks": len(arrays), "train_decks": len(train_arrays),
                                       "split_date": p["split_date"], "limit": p["limit"]},
                        metadata={"format": MASKED_FORMAT},
                        notes=p["notes"] or "")


# --- deck_rank ---------------------------------------------------------------------------------------------

def rank_examples_path(names, corpus_decks: int, split_date: str, rank, plan):
    """Where the ranker's training examples are kept: they depend on the data, the candidates and the months, not
    on the network, so runs that differ only in the network (the ablations) share them."""
    from django.conf import settings  # noqa: PLC0415 the dataset folder is a setting, read when training

    what = {k: v for k, v in plan.to_dict().items() if k not in ("epochs", "batch", "lr")}
    from decks.completion.models.deckrank import SLOT_FEATURES  # noqa: PLC0415 torch: kept off Django start-up

    key = hashlib.sha1(json.dumps([names_sha1(names), corpus_decks, split_date, rank.to_dict(), what, SLOT_FEATURES],
                                  sort_keys=True).encode()).hexdigest()[:16]
    return settings.MTG_DATASET_DIR / f"rank-examples-{key}.npz"


def train_rank(params: dict, progress: Progress, scope: str = "") -> ModelVersion:
    """Train the deck-level sideboard ranker (``decks.completion.models.deckrank``) on the decks of the months before
    the validation month (the month before the split date), the epoch picked on the validation month; register an
    inactive version. The site's masked completer builds its sideboard with the active version."""
    from decks.completion.models.deck_arrays import card_popularity  # noqa: PLC0415 kept off Django start-up
    from decks.completion.models.deckrank import (  # noqa: PLC0415 torch: kept off Django start-up
        CARD_FEATURES, SLOT_FEATURES, FitPlan, RankerConfig, RankParams, context_size, fit_side_ranker)

    p = settle(params, RANK_DEFAULTS)
    for key in ("months", "per_month", "val", "epochs", "batch", "width", "layers", "heads", "slots", "neighbours"):
        if p[key] < (0 if key == "layers" else 1):
            raise TrainingError(f"parameter {key} must be at least {0 if key == 'layers' else 1}.")
    if not 0.0 <= float(p["query_mix"]) <= 1.0:
        raise TrainingError(f"parameter query_mix must be between 0 and 1, got {p['query_mix']}.")
    if p["width"] % p["heads"]:
        raise TrainingError(f"parameter width ({p['width']}) must be a multiple of heads ({p['heads']}).")
    emb = training_embeddings()
    p["split_date"] = _resolved_split(p["split_date"], emb.names)
    try:
        split = split_day(p["split_date"])
    except ValueError:
        raise TrainingError(f"parameter split_date {p['split_date']!r} is not a date (YYYY-MM-DD).") from None
    names = emb.names
    arrays = deck_arrays(names)
    train_arrays, test_arrays = split_by_date(arrays, split)
    if len(train_arrays) < 2:
        raise TrainingError("Too few training decks: import the deck corpus first (manage.py import_decks).")
    tables = card_tables(names)
    from decks.completion.datasets import card_features  # noqa: PLC0415 torch: kept off Django start-up

    config = RankerConfig(context=context_size(len(FORMATS)), width=p["width"], layers=p["layers"], heads=p["heads"],
                          card_features=not p["no_card_features"], archetype_groups=not p["no_archetype_groups"])
    rank = RankParams(neighbours=p["neighbours"], slots=p["slots"], query_mix=float(p["query_mix"]))
    plan = FitPlan(months=p["months"], per_month=p["per_month"], val=p["val"], epochs=p["epochs"], batch=p["batch"],
                   lr=p["lr"], seed=p["seed"])
    progress.expect(1)
    bar = progress.bar(total=plan.months * plan.per_month + plan.val, desc="examples", unit="deck")

    def examples_done(done, total):
        bar.n = done
        bar.refresh()
    try:
        model, metrics = fit_side_ranker(train_arrays, len(names), tables.legal, tables.copy_limit, tables.restricted,
                                         card_features(names), card_popularity(train_arrays, len(names)), split,
                                         config, rank, plan, log=progress.log, progress=examples_done,
                                         cache=rank_examples_path(names, len(arrays), p["split_date"], rank, plan))
    except ValueError as exc:
        raise TrainingError(str(exc)) from None
    finally:
        bar.close()
    state = {k: v.detach().float().contiguous() for k, v in model.state_dict().items()}
    cfg = {"format": RANK_FORMAT, "board": "side", "model": config.to_dict(), "rank": rank.to_dict(),
           "plan": plan.to_dict(), "card_features": list(CARD_FEATURES), "slot_features": SLOT_FEATURES,
           "names_sha1": names_sha1(names), "split_date": p["split_date"]}
    return save_version(RANK, state, cfg, metrics=metrics, activate=False,
                        data_snapshot={"corpus_decks": len(arrays), "train_decks": len(train_arrays),
                                       "split_date": p["split_date"]},
                        metadata={"format": RANK_FORMAT}, notes=p["notes"] or "")


# --- deck_diffusion ------------------------------------------------------------------------------------------

def train_diffusion(params: dict, progress: Progress, scope: str = "") -> ModelVersion:
    """Train the Manamorphosis denoiser (set transformer DDPM over card embeddings); register an inactive version."""
    # torch takes seconds to import: kept off Django start-up (DecksConfig.ready imports this module)
    from decks.completion.models.manamorphosis.model import DeckDenoiser, DenoiserConfig  # noqa: PLC0415 torch: kept off Django start-up
    from decks.completion.models.manamorphosis.trainer import TrainConfig, train  # noqa: PLC0415 torch: kept off Django start-up

    p = settle(params, DIFFUSION_DEFAULTS)
    emb = training_embeddings()
    p["split_date"] = _resolved_split(p["split_date"], emb.names)
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
    device = training_device(p["device"])
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
