"""Train the card embeddings (Doc2Vec PV-DBOW over card text) and the embedding -> card classifier,
and register them as a new ``card_embeddings`` ModelVersion (activated unless --no-activate)."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from mtgsite.progress import progress
from ml.embeddings_training import DEFAULTS, train
from ml.kinds import TrainingError
from ml.progress import BarProgress
from ml.registry import activate_version


class Command(BaseCommand):
    help = "Train card embeddings (Doc2Vec) + the embedding->card classifier on the catalogue; register a new version."

    def add_arguments(self, parser):
        parser.add_argument("--epochs", type=int, default=DEFAULTS["epochs"],
                            help="Doc2Vec epochs (as Manamorphosis; ~1 s each on 2 cores)")
        parser.add_argument("--dim", type=int, default=DEFAULTS["dim"])
        parser.add_argument("--seed", type=int, default=DEFAULTS["seed"])
        parser.add_argument("--workers", type=int, default=DEFAULTS["workers"],
                            help="Doc2Vec threads (1 = reproducible for a seed)")
        parser.add_argument("--classifier-epochs", type=int, default=DEFAULTS["classifier_epochs"],
                            help="fine-tuning epochs from the Bayes-optimal start (~30 s each for 35k cards on 2 cores)")
        parser.add_argument("--noise-std", type=float, default=DEFAULTS["noise_std"],
                            help="classifier training noise (per dimension)")
        parser.add_argument("--activate", action="store_true", default=True, help="make it the active version (default)")
        parser.add_argument("--no-activate", dest="activate", action="store_false")

    def handle(self, *args, **opts):
        try:
            version = train({k: opts[k] for k in DEFAULTS}, BarProgress(progress, self.stdout.write))
        except TrainingError as exc:
            raise CommandError(str(exc)) from None
        if opts["activate"]:
            activate_version(version)
        m = version.metrics
        out = self.stdout.write
        out(f"cards {m['cards']}, token vocabulary {m['token_vocab']}, {m['cards_sharing_tokens']} cards "
            f"share their token list with another card")
        out(f"classifier top-1: clean {m['classifier_top1_clean']:.4f}, noise {m['noise_std']} "
            f"{m['classifier_top1_noisy']:.4f} (same text {m['classifier_top1_noisy_same_text']:.4f}), "
            f"noise 1.0 {m['classifier_top1_noise_1.0']:.4f}")
        for pair, rank in m["neighbour_ranks"].items():
            out(f"  neighbour rank {pair}: {rank}")
        out("timings: " + ", ".join(f"{k} {v:.1f}" for k, v in m["timings"].items()))
        self.stdout.write(self.style.SUCCESS(
            f"{version} registered: {version.weights_path} ({version.weights_bytes / 1e6:.1f} MB)"
            f"{'' if opts['activate'] else ' (not activated)'}"))
