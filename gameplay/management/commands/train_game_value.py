"""Train the search's learned leaf (gameplay.core.value) on engine self-play between the sample decks
(gameplay.training)."""
from django.core.management.base import BaseCommand, CommandError

from mtgsite.progress import progress
from gameplay.core import value
from gameplay.training import DEFAULTS, fit, register
from ml.kinds import TrainingError
from ml.progress import BarProgress
from ml.registry import activate_version


class Command(BaseCommand):
    help = ("Play engine-vs-engine games between the sample decks, record every main-phase position from both "
            "seats with the winner, and fit gameplay.core.value's model on them (the search's learned leaf).")

    def add_arguments(self, parser):
        parser.add_argument("--games", type=int, default=DEFAULTS["games"],
                            help=f"self-play games to play (default {DEFAULTS['games']})")
        parser.add_argument("--workers", type=int, default=DEFAULTS["workers"],
                            help=f"processes playing games (default {DEFAULTS['workers']})")
        parser.add_argument("--seed", type=int, default=DEFAULTS["seed"],
                            help="game i uses seed + i (keep clear of the benches')")
        parser.add_argument("--rows", help="append the positions played to this JSON-lines file")
        parser.add_argument("--from-rows", action="append", default=[],
                            help="train on positions recorded before (repeatable); with --games 0 nothing is played")
        parser.add_argument("--out", default=str(value.DEFAULT_WEIGHTS), help="where the weights go (safetensors)")
        parser.add_argument("--hidden", default=DEFAULTS["hidden"],
                            help="hidden layer widths, comma separated ('' for logistic)")
        parser.add_argument("--epochs", type=int, default=DEFAULTS["epochs"])
        parser.add_argument("--weight-decay", type=float, default=DEFAULTS["weight_decay"])
        parser.add_argument("--register", action="store_true",
                            help="add the model to the registry as the next game_policy version (its file under "
                                 "MTG_MODEL_DIR instead of --out)")
        parser.add_argument("--activate", action="store_true", help="with --register: make it the active version")
        parser.add_argument("--notes", default=DEFAULTS["notes"])

    def handle(self, *args, **opts):
        try:
            model = fit({k: opts[k] for k in DEFAULTS}, BarProgress(progress, self.stderr.write))
            version = register(model, opts["notes"]) if opts["register"] else None
        except TrainingError as exc:
            raise CommandError(str(exc)) from None
        info = model.info
        if version is not None:
            if opts["activate"]:
                activate_version(version)
            self.stdout.write(f"registered {version} ({info['rows']} positions from {info['games']} games, "
                              f"validation log-loss {info['valid_log_loss']})")
            return
        model.save(opts["out"])
        self.stdout.write(f"{info['rows']} positions from {info['games']} games; validation log-loss "
                          f"{info['valid_log_loss']} (epoch {info['best_epoch']}); saved {opts['out']}")
