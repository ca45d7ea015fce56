"""Train the search's policy/value network (gameplay.core.policy) on engine self-play between the sample decks
(gameplay.policy_training)."""
from django.core.management.base import BaseCommand, CommandError

from mtgsite.progress import progress
from gameplay.policy_training import DEFAULTS, QUICK, fit, register
from ml.kinds import TrainingError
from ml.progress import BarProgress
from ml.registry import activate_version


class Command(BaseCommand):
    help = ("Play engine-vs-engine games between the sample decks (both seats the imitated engine AI), record every "
            "real decision, and fit gameplay.core.policy's network on the AI's choices and the games' winners; "
            "registered as the next game_policy_net version.")

    def add_arguments(self, parser):
        parser.add_argument("--preset", choices=["quick", "default"], default="default",
                            help=f"quick: a tiny network on {QUICK['games']} {QUICK['imitate']} games (tests); "
                                 f"default: {DEFAULTS['games']} {DEFAULTS['imitate']} games")
        parser.add_argument("--games", type=int, help="self-play games to play")
        parser.add_argument("--workers", type=int, help="processes playing games")
        parser.add_argument("--celery", action="store_true", help="play the games as Celery tasks (gameplay.policy_game)")
        parser.add_argument("--seed", type=int, help="game i uses seed + i (keep clear of the benches')")
        parser.add_argument("--imitate", help="who plays both seats and is learned from: an engine AI (VeryHard: its "
                                              "choices) or a search player (search:fast: AlphaZero's round, the "
                                              "search's visit counts, searching with the active network)")
        parser.add_argument("--records", help="append the decisions played to this JSON-lines file")
        parser.add_argument("--from-records", action="append", default=[],
                            help="train on decisions recorded before (repeatable); with --games 0 nothing is played")
        for name in ("epochs", "width", "layers", "heads", "batch"):
            parser.add_argument(f"--{name}", type=int)
        parser.add_argument("--lr", type=float)
        parser.add_argument("--teacher", type=float,
                            help="share of the 36-feature value model's P(win) in the value target (default 0.5)")
        parser.add_argument("--activate", action="store_true", help="make it the active version")
        parser.add_argument("--notes", default="")

    def handle(self, *args, **opts):
        params = {**(QUICK if opts["preset"] == "quick" else {}),
                  **{k: opts[k] for k in DEFAULTS if opts.get(k) is not None and opts.get(k) != [] and opts.get(k) is not False}}
        try:
            net, info = fit(params, BarProgress(progress, self.stderr.write))
            version = register(net, info, opts["notes"])
        except TrainingError as exc:
            raise CommandError(str(exc)) from None
        if opts["activate"]:
            activate_version(version)
        self.stdout.write(f"registered {version}{' (active)' if opts['activate'] else ''}: {info['decisions']} decisions "
                          f"from {info['games']} games; validation accuracy {info['valid_accuracy']}, Brier "
                          f"{info['valid_brier']} (epoch {info['best_epoch'] + 1}), {info['train_cpu_seconds']} s of CPU")
