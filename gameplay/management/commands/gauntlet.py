"""Round robin between decks: K games per pair with seats swapped; win-rate matrix, standings, cards."""
import json
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from plumbing.progress import progress
from gameplay.core.matches import roundrobin as core
from gameplay.core.engine.decks import sample_decks
from gameplay.gauntlet import service, tasks
from gameplay.gauntlet.models import GauntletRun


class Command(BaseCommand):
    help = ("Play a gauntlet: every pair of decks K times with seats swapped (same seed per swapped couple), "
            "here (--workers N processes) or on the Celery workers (--celery); prints the win-rate matrix with "
            "95% intervals and the cards most present in won games; stores the run (see /games/gauntlet/).")

    def add_arguments(self, parser):
        parser.add_argument("--decks", default="",
                            help="'sample' (the four sample decks) or sample deck names, comma separated")
        parser.add_argument("--deck-file", action="append", default=[],
                            help="decklists (MTGO / Arena / plain text); several decks in one file are separated by "
                                 "'---' lines or each starts with 'Name: ...'; repeatable")
        parser.add_argument("--deck-id", action="append", default=[], help="saved deck ids (repeatable, or comma separated)")
        parser.add_argument("--games", type=int, default=4, help="games per pair (even: each seed is played both ways)")
        parser.add_argument("--player", default="engine:Medium",
                            help="who plays both seats: engine:VeryEasy..VeryHard, random, search:<level>")
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--max-decisions", type=int, default=5000, help="a longer game is cut and scored a draw")
        parser.add_argument("--name", default="")
        parser.add_argument("--resume", type=int, metavar="RUN_ID",
                            help="play the unfinished games of a stored run (after an interruption) instead")
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--workers", type=int, default=1, help="processes playing games here (default 1)")
        where.add_argument("--celery", action="store_true", help="queue one task per game for the Celery workers")
        parser.add_argument("--no-wait", action="store_true", help="with --celery: queue the games and return")
        parser.add_argument("--out", help="write the run, its results and every game as JSON")
        parser.add_argument("--plot", help="write the heat map (.svg or .png)")
        parser.add_argument("--top-cards", type=int, default=15, help="cards to print (default 15)")

    def handle(self, *args, **opts):
        if opts["workers"] < 1:
            raise CommandError("--workers must be at least 1")
        if opts["plot"] and Path(opts["plot"]).suffix.lower() not in (".svg", ".png"):
            raise CommandError("--plot must end in .svg or .png")
        if opts["resume"] is not None:
            return self.resume(opts)
        try:
            decks = self.gather_decks(opts)
            run = service.create_run(decks, opts["games"], opts["player"], seed=opts["seed"],
                                      max_decisions=opts["max_decisions"], name=opts["name"],
                                      runner="celery" if opts["celery"] else "local", build_support=True)
        except service.GauntletError as exc:
            raise CommandError("the gauntlet cannot start:\n  " + "\n  ".join(exc.problems)) from None
        pairs = len(run.decks) * (len(run.decks) - 1) // 2
        self.stdout.write(f"gauntlet #{run.pk}: {len(run.decks)} decks ({', '.join(run.deck_names)}), {pairs} pairs × "
                          f"{run.games_per_pair} games = {run.total} games, {run.player}, seed {run.seed}")
        self.play(run, opts)

    def play(self, run: GauntletRun, opts, unfinished_only: bool = False) -> None:
        started = time.perf_counter()
        if opts["celery"]:
            tasks.enqueue_games(run, unfinished_only=unfinished_only)  # outside a transaction: queued at once
            if opts["no_wait"]:
                self.stdout.write(f"queued; follow it at /games/gauntlet/{run.pk}/")
                return
            run = self.wait(run)
        else:
            bar = progress(total=run.total, initial=run.done, desc="games", unit="game", unit_scale=False)
            try:
                run = service.run_locally(run, opts["workers"], on_game=lambda i, o: bar.update(1))
            finally:
                bar.close()
        self.report(run, time.perf_counter() - started, opts)

    def resume(self, opts) -> None:
        run = GauntletRun.objects.filter(pk=opts["resume"]).first()
        if run is None:
            raise CommandError(f"no gauntlet #{opts['resume']}")
        if run.status not in ("pending", "running"):
            raise CommandError(f"gauntlet #{run.pk} is {run.status}; nothing to resume")
        reset = run.games.filter(status="running").update(status="pending")
        self.stdout.write(f"gauntlet #{run.pk}: {run.done} of {run.total} games done; playing the rest"
                          + (f" ({reset} were interrupted)" if reset else ""))
        self.play(run, opts, unfinished_only=True)

    def gather_decks(self, opts) -> list[dict]:
        decks = []
        names = [n.strip() for n in opts["decks"].split(",") if n.strip()]
        if names == ["sample"]:
            names = sorted(sample_decks(settings.MTG_DATA_DIR))
            if not names:
                raise service.GauntletError("the sample decks file is missing (set MTG_DATA_DIR)")
        decks += [service.sample_deck(n) for n in names]
        for path in opts["deck_file"]:
            p = Path(path)
            if not p.exists():
                raise service.GauntletError(f"{path}: no such file")
            decks += service.decks_from_text(p.read_text(encoding="utf-8", errors="replace"), default_name=p.stem,
                                              source=f"file:{p.name}")
        ids = [i.strip() for raw in opts["deck_id"] for i in raw.split(",") if i.strip()]
        decks += [service.saved_deck(i) for i in ids]
        if not decks:
            raise service.GauntletError("give decks: --decks sample, --deck-file FILE or --deck-id ID")
        return decks

    def wait(self, run: GauntletRun) -> GauntletRun:
        bar = progress(total=run.total, desc="games (celery)", unit="game", unit_scale=False)
        try:
            while True:
                run.refresh_from_db()
                bar.update(run.done - bar.n)
                if run.finished_or_stopped:
                    return run
                time.sleep(0.5)
        except KeyboardInterrupt:
            raise CommandError(f"stopped waiting; the workers carry on: /games/gauntlet/{run.pk}/") from None
        finally:
            bar.close()

    def report(self, run: GauntletRun, elapsed: float, opts) -> None:
        if run.status == "failed":
            raise CommandError(f"gauntlet #{run.pk} failed: {run.error}")
        results = service.results_of(run)
        summary, cards = results["summary"], results["cards"]
        w = self.stdout.write
        w("")
        w(core.format_matrix(summary))
        w("")
        w("standings (win rate, draws count half, 95% interval):")
        for rank, s in enumerate(summary["standings"], 1):
            rate = "—" if s["rate"] is None else f"{100 * s['rate']:.1f}%"
            w(f"  {rank}. {s['name']:<24} {rate:>6} [{100 * s['low']:.0f}-{100 * s['high']:.0f}%]  "
              f"{s['wins']}-{s['losses']}-{s['draws']} in {s['games']} games")
        first = summary["first_seat"]
        if first["games"]:
            w(f"seat 0 (plays first) won {100 * first['rate']:.1f}% [{100 * first['low']:.0f}-{100 * first['high']:.0f}%]")
        if opts["top_cards"] and cards:
            w("")
            w("cards most present in won games (share of won vs lost deck-games whose deck plays it):")
            for c in cards[:opts["top_cards"]]:
                w(f"  {c['card']:<28} won {100 * c['won_share']:5.1f}%  lost {100 * c['lost_share']:5.1f}%  "
                  f"score {100 * (c['rate'] or 0):5.1f}% [{100 * c['low']:.0f}-{100 * c['high']:.0f}%]  "
                  f"in {c['decks']} deck{'s' if c['decks'] != 1 else ''}")
        g = summary["games"]
        t = summary.get("timing") or {}
        w("")
        w(f"{g['scored']} games scored, {g['draws']} draws ({g['cut']} cut at {run.max_decisions} decisions), "
          f"{g['errors']} errors; mean {t.get('mean_turns')} turns, {t.get('mean_decisions')} decisions, "
          f"{t.get('mean_seconds')} s per game; {elapsed:.1f} s in all")
        if run.errors:
            for game in run.games.filter(status="error").order_by("index")[:5]:
                w(self.style.WARNING(f"  game {game.index} (seed {game.seed}): {game.error[:200]}"))
        if opts["out"]:
            Path(opts["out"]).write_text(json.dumps({**service.export(run), "seconds": round(elapsed, 2)}, indent=1),
                                         encoding="utf-8")
            w(f"wrote {opts['out']}")
        if opts["plot"]:
            fmt = Path(opts["plot"]).suffix.lower().lstrip(".")
            Path(opts["plot"]).write_bytes(service.heatmap_bytes(run, fmt))
            w(f"wrote {opts['plot']}")
        w(self.style.SUCCESS(f"gauntlet #{run.pk} {run.status}: /games/gauntlet/{run.pk}/"))
