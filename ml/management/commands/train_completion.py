"""Train the default deck completer (masked diffusion over card tokens + neighbour retrieval) and register it."""
from __future__ import annotations

import json
import time

from django.core.management.base import BaseCommand, CommandError

from decks.management.importing import progress
from ml.datasets import DEFAULT_SPLIT, card_tables, deck_arrays, names_sha1, split_day
from ml.registry import NoActiveModel, model_dir, save_version

KIND = "deck_masked"
# model / training options of the command and the MaskedConfig / TrainConfig fields they set
MODEL_OPTIONS = {"d_model": "d_model", "heads": "heads", "layers": "layers", "ff": "ff", "candidates": "candidates"}
TRAIN_OPTIONS = {"steps": "steps", "batch": "batch", "lr": "lr", "examples": "examples"}


def preset(name: str) -> dict:
    """Option values of a preset: ``quick`` (a few seconds: tests, smoke checks) or ``default`` (the dataclasses')."""
    from ml import kinds

    return kinds.quick_parameters(KIND) if name == "quick" else {}


def checkpoint_path(seed: int):
    return model_dir() / KIND / "checkpoints" / f"train-seed{seed}.safetensors"


class Command(BaseCommand):
    help = ("Train the masked deck-completion model (retrieval of neighbour decks + a masked denoiser over card "
            "tokens) on the corpus decks before --split-date and register a deck_masked version.")

    def add_arguments(self, parser):
        parser.add_argument("--preset", choices=["quick", "default"], default="default",
                            help="quick: a tiny model in seconds (tests); default: the full CPU run")
        parser.add_argument("--steps", type=int, help="optimizer steps")
        parser.add_argument("--examples", type=int, help="training examples planned (one retrieval each)")
        parser.add_argument("--batch", type=int)
        parser.add_argument("--lr", type=float)
        parser.add_argument("--d-model", type=int)
        parser.add_argument("--heads", type=int)
        parser.add_argument("--layers", type=int)
        parser.add_argument("--ff", type=int)
        parser.add_argument("--candidates", type=int, help="candidate cards per board (by neighbour vote)")
        parser.add_argument("--neighbours", type=int, help="neighbour decks that vote (retrieval M)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--split-date", default=DEFAULT_SPLIT, help="decks first seen on/after it are held out")
        parser.add_argument("--limit", type=int, help="train on at most N decks (quick runs, tests)")
        parser.add_argument("--no-text-init", action="store_true",
                            help="start the card embeddings at random instead of from the card-text vectors")
        parser.add_argument("--resume", action="store_true", help="continue from the checkpoint of an interrupted run")
        parser.add_argument("--time-budget", type=float,
                            help="stop after this many seconds of training (checkpointed; finish later with --resume)")
        parser.add_argument("--no-activate", action="store_true")
        parser.add_argument("--notes", default="")

    def handle(self, *args, **opts):
        import numpy as np

        from decks.core.rules import FORMATS
        from ml.completion.retrieval import RetrievalParams
        from ml.diffusion.data import split_by_date
        from ml.diffusion.masked import MaskedConfig
        from ml.diffusion.masked_sampler import INFERENCE_GATE
        from ml.diffusion.masked_train import TrainConfig, prepare, train
        from ml.embeddings.service import active_embeddings
        from ml.kinds import MASKED_FORMAT

        values = {**preset(opts["preset"]), **{k: v for k, v in opts.items() if v is not None and (
            k in MODEL_OPTIONS or k in TRAIN_OPTIONS or k == "neighbours")}}
        for key in ("steps", "examples", "batch", "d_model", "heads", "layers", "ff", "candidates", "neighbours"):
            if key in values and values[key] < 1:
                raise CommandError(f"--{key.replace('_', '-')} must be at least 1.")
        if opts["time_budget"] is not None and opts["time_budget"] <= 0:
            raise CommandError("--time-budget must be a positive number of seconds.")
        try:
            emb = active_embeddings()
        except NoActiveModel as exc:
            raise CommandError(f"{exc} (run train_embeddings first)")
        try:
            split = split_day(opts["split_date"])
        except ValueError:
            raise CommandError(f"--split-date {opts['split_date']!r} is not a date (YYYY-MM-DD).") from None
        started = time.perf_counter()
        names = emb.names
        arrays = deck_arrays(names)
        train_arrays, test_arrays = split_by_date(arrays, split)
        if opts["limit"]:
            rng = np.random.default_rng(opts["seed"])
            pick = np.sort(rng.choice(len(train_arrays), size=min(opts["limit"], len(train_arrays)), replace=False))
            train_arrays = train_arrays.subset(pick)
        if len(train_arrays) < 2:
            raise CommandError("Too few training decks: import the deck corpus first (manage.py import_decks).")
        self.stdout.write(f"decks: {len(train_arrays)} train, {len(test_arrays)} held out "
                          f"(first seen >= {opts['split_date']})")

        tables = card_tables(names)
        params = RetrievalParams.from_dict({"neighbours": values["neighbours"]} if "neighbours" in values else {})
        prep = prepare(train_arrays, len(names), tables.legal, tables.copy_limit, tables.restricted, params)
        mc = MaskedConfig.from_dict({**MaskedConfig().to_dict(), "formats": len(FORMATS),
                                     "vocab": len(prep.cards) + 1,
                                     **{field: values[opt] for opt, field in MODEL_OPTIONS.items() if opt in values}})
        if mc.d_model % mc.heads:
            raise CommandError(f"--d-model ({mc.d_model}) must be a multiple of --heads ({mc.heads}).")
        tc = TrainConfig.from_dict({**TrainConfig().to_dict(), "seed": opts["seed"],
                                    "text_init": not opts["no_text_init"],
                                    **{field: values[opt] for opt, field in TRAIN_OPTIONS.items() if opt in values}})
        if opts["preset"] == "quick":
            tc.val_examples = min(tc.val_examples, 64)
            tc.checkpoint_every = max(tc.steps, 1)
        self.stdout.write(f"vocabulary: {len(prep.cards)} cards seen in the training decks; "
                          f"model {json.dumps(mc.to_dict())}; training {json.dumps(tc.to_dict())}")
        ckpt = checkpoint_path(opts["seed"])
        if opts["resume"] and not ckpt.exists():
            self.stdout.write(f"no checkpoint at {ckpt}: starting from step 0")

        plan_bar = progress(total=min(tc.examples, len(train_arrays)), desc="planning examples", unit="deck")

        def planned(done, total):
            plan_bar.n = done
            plan_bar.refresh()

        bar = None

        def report(step, total, loss, message):
            nonlocal bar
            if bar is None:
                plan_bar.n = plan_bar.total
                plan_bar.close()
                bar = progress(total=total, desc="training", unit="step")
            bar.n = step
            bar.set_postfix(gate=message.removeprefix("gate ").strip(), loss=f"{loss:.4f}")  # loss: the run's metric
            bar.refresh()

        text_vectors = None if opts["no_text_init"] else emb.E.float().numpy()
        try:
            state, metrics = train(prep, mc, tc, text_vectors=text_vectors, checkpoint=ckpt, resume=opts["resume"],
                                   progress=report, stop_after=opts["time_budget"], plan_progress=planned)
        except (RuntimeError, ValueError) as exc:
            if opts["resume"]:
                raise CommandError(f"Cannot resume from {ckpt} ({exc}); run again without --resume.") from None
            raise
        finally:
            plan_bar.close()
            if bar is not None:
                bar.close()
        if not metrics["finished"]:
            raise CommandError(
                f"Stopped at step {metrics['steps']} of {tc.steps} (--time-budget {opts['time_budget']:g}s); the "
                f"checkpoint is {ckpt}: run the same command with --resume to go on. Nothing was registered.")
        model_config = metrics.pop("config")
        metrics.pop("train_config", None)
        metrics.update({"test_decks": len(test_arrays), "total_seconds": round(time.perf_counter() - started, 1),
                        "device": "cpu"})
        config = {"format": MASKED_FORMAT, "model": model_config, "retrieval": params.to_dict(),
                  "cards": [names[int(i)] for i in prep.cards], "names_sha1": names_sha1(names),
                  "split_date": opts["split_date"], "train": tc.to_dict(), "embeddings_version": emb.version_id,
                  "sampler": {"gate": INFERENCE_GATE}}
        version = save_version(KIND, state, config, metrics=metrics, activate=not opts["no_activate"],
                               data_snapshot={"corpus_decks": len(arrays), "train_decks": len(train_arrays),
                                              "split_date": opts["split_date"], "limit": opts["limit"]},
                               metadata={"format": MASKED_FORMAT}, notes=opts["notes"])
        summary = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in metrics.items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)}
        self.stdout.write(self.style.SUCCESS(
            f"{KIND} v{version.version} saved ({version.weights_bytes / 1e6:.2f} MB)"
            f"{' and activated' if version.active else ''}: {json.dumps(summary)}"))
