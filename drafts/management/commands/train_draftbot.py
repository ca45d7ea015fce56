"""Train a draft bot on 17Lands-layout logs, evaluate it on held-out pods and register the version (drafts.training)."""
from pathlib import Path

from django.core.management.base import BaseCommand

from decks.management.importing import progress
from drafts.core.plots import figure_bytes, loss_curves_figure
from drafts.management.common import DraftErrorsAsCommandErrors
from drafts.training import FAMILIES, KIND, train
from ml.models import ModelVersion
from ml.progress import BarProgress
from ml.registry import activate_version


class Command(BaseCommand):
    help = ("Train the archetype or neural bot on a 17Lands-layout file: 1 pod in 10 is held out for the "
            "reported metrics, the rest is split into training and validation pods. The new version is "
            "activated when it beats the active one on the held-out pods (or with --activate).")

    def add_arguments(self, parser):
        parser.add_argument("--bot", required=True, choices=FAMILIES)
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--logs", help="a 17Lands-layout CSV (.csv or .csv.gz)")
        source.add_argument("--stored", metavar="SET", help="train on the drafts of SET stored in the database")
        parser.add_argument("--kind", choices=["simulated", "imported", "online"], help="with --stored: only this kind")
        parser.add_argument("--consented", action="store_true",
                            help="with --stored: only people's online drafts shared for training (their consent)")
        parser.add_argument("--seats", help="seats side file (default: beside the logs)")
        parser.add_argument("--epochs", type=int)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--limit", type=int, help="read only the first N rows")
        parser.add_argument("--activate", action="store_true", help="activate even if it does not beat the active one")
        parser.add_argument("--no-activate", action="store_true")
        parser.add_argument("--plot", help="write the loss curves to FILE.svg or FILE.png")
        parser.add_argument("--notes", default="")

    def handle(self, *args, bot, logs=None, stored=None, kind=None, consented=False, seats=None, epochs=None, seed=0,
               limit=None, activate=False, no_activate=False, plot=None, notes="", **opts):
        params = {"logs": logs, "stored": True if stored else None, "draft_kind": kind, "consented": consented,
                  "seats": seats, "epochs": epochs, "seed": seed, "limit": limit, "notes": notes}
        with DraftErrorsAsCommandErrors():
            version = train(params, BarProgress(progress, self.stdout.write), f"{bot}:{(stored or '').upper()}")
        scope, metrics = version.scope, version.metrics
        current = ModelVersion.objects.filter(kind=KIND, scope=scope, active=True).first()
        current_top1 = ((current.metrics or {}).get("held_out") or {}).get("all", {}).get("top1") if current else None
        a, u = metrics["held_out"]["all"], metrics["held_out"]["unforced"]
        if (current_top1 is None or a["top1"] > current_top1 or activate) and not no_activate:
            activate_version(version)
        if plot:
            fmt = Path(plot).suffix.lstrip(".").lower()
            Path(plot).write_bytes(figure_bytes(loss_curves_figure(metrics["history"], f"{bot} bot, {scope.partition(':')[2]}"),
                                                "png" if fmt == "png" else "svg"))
        if version.active:
            state = "now active"
        elif current is not None:
            state = f"not activated (active v{current.version}: held-out top-1 {current_top1 or 0:.3f})"
        else:
            state = "not activated"
        self.stdout.write(self.style.SUCCESS(
            f"{scope} v{version.version} trained in {metrics['train_seconds']:.0f}s: held-out top-1 {a['top1']:.3f}, "
            f"top-3 {a['top3']:.3f} (without forced picks {u['top1']:.3f}); {state}"))
