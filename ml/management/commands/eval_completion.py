"""Evaluate deck completion against three baselines on any deck file in the corpus layout (ml.completion_eval)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from mtgsite.progress import progress
from ml.completion_eval import DEFAULTS, evaluate_file
from ml.kinds import TrainingError
from ml.progress import BarProgress


class Command(BaseCommand):
    help = "Evaluate deck completion (diffusion vs popularity, co-occurrence, nearest-deck) on a corpus-layout file."

    def add_arguments(self, parser):
        parser.add_argument("--decks", required=True, help="JSONL(.xz) in the corpus layout")
        parser.add_argument("--known", type=int, nargs="+", required=True, help="K: main cards kept per deck")
        parser.add_argument("--out", required=True, help="results JSON")
        parser.add_argument("--n", type=int, default=DEFAULTS["n"],
                            help="decks evaluated (the same for every method and K)")
        parser.add_argument("--seed", type=int, default=DEFAULTS["seed"])
        parser.add_argument("--methods", default=DEFAULTS["methods"], help="diffusion is the model chosen by --model")
        parser.add_argument("--model", choices=["masked", "manamorphosis"], default=DEFAULTS["model"],
                            help="the completion model scored as method 'diffusion': masked (default, retrieval over "
                                 "the decks before --split-date + the active deck_masked version) or manamorphosis")
        parser.add_argument("--sampler", choices=["fast", "full"], default=DEFAULTS["sampler"], help="manamorphosis only")
        parser.add_argument("--steps", type=int, default=DEFAULTS["steps"], help="fast-sampler steps (manamorphosis only)")
        parser.add_argument("--from-date", help="only decks first seen on or after this date (a held-out split)")
        parser.add_argument("--split-date", default=DEFAULTS["split_date"], help="baselines fit on corpus decks before it")

    def handle(self, *args, **opts):
        try:
            doc = evaluate_file({k: opts[k] for k in ("decks", "known", *DEFAULTS)},
                                BarProgress(progress, self.stdout.write))
        except TrainingError as exc:
            raise CommandError(str(exc)) from None
        results = doc["results"]
        command = (" ".join(["manage.py", "eval_completion", *sys.argv[2:]]) if sys.argv[1:2] == ["eval_completion"]
                   else "manage.py eval_completion")
        out = {"command": command, **doc,
               "results": {m: {str(k): r for k, r in per_k.items()} for m, per_k in results.items()}}
        Path(opts["out"]).parent.mkdir(parents=True, exist_ok=True)
        Path(opts["out"]).write_text(json.dumps(out, indent=2, default=_json_default))
        self.stdout.write(f"{'method':<13}" + "".join(f"  K={k:<3} main  side  valid" for k in opts["known"]))
        for m, per_k in results.items():
            self.stdout.write(f"{m:<13}" + "".join(
                f"  {per_k[k]['main_recall']:>10.3f} {per_k[k]['side_recall']:.3f} {per_k[k]['valid_share']:.3f}"
                for k in opts["known"]))
        self.stdout.write(self.style.SUCCESS(f"-> {opts['out']}"))


def _json_default(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(type(value))
