"""Train the default deck completer (masked diffusion over card tokens + neighbour retrieval) and register it."""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from mtgsite.progress import progress
from ml.completion_training import MASKED, MASKED_DEFAULTS, MODEL_OPTIONS, TRAIN_OPTIONS, train_masked
from ml.kinds import TrainingError
from ml.progress import BarProgress
from ml.registry import activate_version


class Command(BaseCommand):
    help = ("Train the masked deck-completion model (retrieval of neighbour decks + a masked denoiser over card "
            "tokens) on the corpus decks before --split-date and register a deck_masked version.")

    def add_arguments(self, parser):
        parser.add_argument("--preset", choices=["quick", "default"], default=MASKED_DEFAULTS["preset"],
                            help="quick: a tiny model in seconds (tests); default: the full CPU run")
        parser.add_argument("--steps", type=int, help="optimizer steps")
        parser.add_argument("--examples", type=int, help="training examples planned (one retrieval each)")
        parser.add_argument("--batch", type=int)
        parser.add_argument("--lr", type=float)
        parser.add_argument("--d-model", type=int)
        parser.add_argument("--heads", type=int)
        parser.add_argument("--layers", type=int)
        parser.add_argument("--ff", type=int)
        parser.add_argument("--head", choices=["slot", "token"],
                            help="slot (default): each candidate's hidden copy count; token: MDLM's softmax (v1)")
        parser.add_argument("--candidates", type=int, help="candidate cards per board (by neighbour vote)")
        parser.add_argument("--neighbours", type=int, help="neighbour decks that vote (retrieval M)")
        parser.add_argument("--seed", type=int, default=MASKED_DEFAULTS["seed"])
        parser.add_argument("--split-date", default=MASKED_DEFAULTS["split_date"],
                            help="decks first seen on/after it are held out")
        parser.add_argument("--limit", type=int, help="train on at most N decks (quick runs, tests)")
        parser.add_argument("--no-text-init", action="store_true",
                            help="start the card embeddings at random instead of from the card-text vectors")
        parser.add_argument("--no-retrieval", action="store_true",
                            help="the ablation without neighbour decks: the denoiser scores the whole vocabulary")
        parser.add_argument("--resume", action="store_true", help="continue from the checkpoint of an interrupted run")
        parser.add_argument("--time-budget", type=float,
                            help="stop after this many seconds of training (checkpointed; finish later with --resume)")
        parser.add_argument("--no-activate", action="store_true")
        parser.add_argument("--notes", default=MASKED_DEFAULTS["notes"])

    def handle(self, *args, **opts):
        keys = (*MASKED_DEFAULTS, *MODEL_OPTIONS, *TRAIN_OPTIONS, "neighbours")
        try:
            version = train_masked({k: opts[k] for k in keys}, BarProgress(progress, self.stdout.write))
        except TrainingError as exc:
            raise CommandError(str(exc)) from None
        if not opts["no_activate"]:
            activate_version(version)
        summary = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in version.metrics.items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)}
        self.stdout.write(self.style.SUCCESS(
            f"{MASKED} v{version.version} saved ({version.weights_bytes / 1e6:.2f} MB)"
            f"{' and activated' if version.active else ''}: {json.dumps(summary)}"))
