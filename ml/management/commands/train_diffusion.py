"""Train the deck-completion diffusion model on the corpus (date-held-out validation) and register it."""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from mtgsite.progress import progress
from ml.completion_training import DIFFUSION, DIFFUSION_DEFAULTS, train_diffusion
from ml.kinds import TrainingError
from ml.progress import BarProgress
from ml.registry import activate_version


class Command(BaseCommand):
    help = "Train the deck diffusion model (set transformer DDPM over card embeddings) and register a version."

    def add_arguments(self, parser):
        d = DIFFUSION_DEFAULTS
        parser.add_argument("--steps", type=int, default=d["steps"])
        parser.add_argument("--batch", type=int, default=d["batch"])
        parser.add_argument("--lr", type=float, default=d["lr"])
        parser.add_argument("--warmup", type=int, default=d["warmup"])
        parser.add_argument("--d-model", type=int, default=d["d_model"])
        parser.add_argument("--heads", type=int, default=d["heads"])
        parser.add_argument("--layers", type=int, default=d["layers"])
        parser.add_argument("--ff", type=int, default=d["ff"])
        parser.add_argument("--side-layers", type=int, default=d["side_layers"])
        parser.add_argument("--context-layers", type=int, default=d["context_layers"])
        parser.add_argument("--prediction", choices=["v", "eps"], default=d["prediction"],
                            help="v (default: uses the known cards far better at high noise) or eps (Manamorphosis)")
        parser.add_argument("--seed", type=int, default=d["seed"])
        parser.add_argument("--eval-every", type=int, default=d["eval_every"])
        parser.add_argument("--split-date", default=d["split_date"], help="decks first seen on/after it are held out")
        parser.add_argument("--device", default=d["device"], help="cpu or cuda (default: cuda when available)")
        parser.add_argument("--resume", action="store_true", help="continue from the checkpoint of an interrupted run")
        parser.add_argument("--limit", type=int, help="train on at most N decks (quick runs, tests)")
        parser.add_argument("--no-activate", action="store_true")
        parser.add_argument("--notes", default=d["notes"])

    def handle(self, *args, **opts):
        try:
            version = train_diffusion({k: opts[k] for k in DIFFUSION_DEFAULTS}, BarProgress(progress, self.stdout.write))
        except TrainingError as exc:
            raise CommandError(str(exc)) from None
        if not opts["no_activate"]:
            activate_version(version)
        metrics = version.metrics
        self.stdout.write(self.style.SUCCESS(
            f"{DIFFUSION} v{version.version} saved ({version.weights_bytes / 1e6:.1f} MB)"
            f"{' and activated' if version.active else ''}: "
            f"{json.dumps({k: metrics[k] for k in metrics if isinstance(metrics[k], (int, float))})}"))
