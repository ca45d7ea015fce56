"""Train the search's learned leaf (gameplay.core.value) on engine self-play between the sample decks."""
import itertools
import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from decks.management.importing import progress
from gameplay import carddb, gauntlet
from gameplay.core import gauntlet as core
from gameplay.core import value

# who plays the self-play games, in turn: mostly the bench's opponent, some games one seat stronger
SCHEDULE = (("Medium", "Medium"), ("Medium", "Medium"), ("VeryHard", "Medium"), ("Medium", "VeryHard"))


def read_rows(path: Path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                x = row.get("x") if isinstance(row, dict) else None
                ok = (isinstance(x, list) and len(x) == len(value.FEATURES) and row.get("won") in (0, 1)
                      and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x) and "seed" in row)
            except ValueError:
                ok = False
            if not ok:
                raise CommandError(f"{path}:{n} is not a position row of the current features")
            rows.append(row)
    return rows


class Command(BaseCommand):
    help = ("Play engine-vs-engine games between the sample decks, record every main-phase position from both "
            "seats with the winner, and fit gameplay.core.value's model on them (the search's learned leaf).")

    def add_arguments(self, parser):
        parser.add_argument("--games", type=int, default=480, help="self-play games to play (default 480)")
        parser.add_argument("--workers", type=int, default=2, help="processes playing games (default 2)")
        parser.add_argument("--seed", type=int, default=20000, help="game i uses seed + i (keep clear of the benches')")
        parser.add_argument("--rows", help="append the positions played to this JSON-lines file")
        parser.add_argument("--from-rows", action="append", default=[],
                            help="train on positions recorded before (repeatable); with --games 0 nothing is played")
        parser.add_argument("--out", default=str(value.DEFAULT_WEIGHTS), help="where the weights go (safetensors)")
        parser.add_argument("--hidden", default="32", help="hidden layer widths, comma separated ('' for logistic)")
        parser.add_argument("--epochs", type=int, default=400)
        parser.add_argument("--weight-decay", type=float, default=1e-2)
        parser.add_argument("--register", action="store_true",
                            help="add the model to the registry as the next game_policy version (its file under "
                                 "MTG_MODEL_DIR instead of --out)")
        parser.add_argument("--activate", action="store_true", help="with --register: make it the active version")
        parser.add_argument("--notes", default="")

    def handle(self, *args, **opts):
        try:
            hidden = tuple(int(h) for h in opts["hidden"].split(",") if h.strip())
        except ValueError:
            raise CommandError("--hidden takes widths such as 32 or 64,32") from None
        if opts["games"] < 0 or opts["workers"] < 1:
            raise CommandError("--games must be >= 0 and --workers >= 1")
        rows = []
        for path in opts["from_rows"]:
            if not Path(path).is_file():
                raise CommandError(f"no such rows file: {path}")
            rows += read_rows(Path(path))
        if opts["games"]:
            rows += self.play(opts)
        groups = [r["seed"] for r in rows]  # a game's positions stay on one side of the validation split
        if len(set(groups)) < 4:
            raise CommandError("too few games to train on (need positions from at least 4)")
        x = [r["x"] for r in rows]
        y = [r["won"] for r in rows]
        model = value.fit(x, y, hidden=hidden, epochs=opts["epochs"], weight_decay=opts["weight_decay"], groups=groups)
        p = model.probability(np.array(x))
        model.info.update(games=len(set(groups)), train_brier=round(float(np.mean((p - np.array(y)) ** 2)), 4),
                          seeds=f"{opts['seed']}..{opts['seed'] + opts['games'] - 1}" if opts["games"] else None)
        if opts["register"]:
            self.register(model, opts, hidden)
            return
        model.save(opts["out"])
        self.stdout.write(f"{len(rows)} positions from {len(set(groups))} games; validation log-loss "
                          f"{model.info['valid_log_loss']} (epoch {model.info['best_epoch']}); saved {opts['out']}")

    def register(self, model, opts, hidden):
        import tempfile

        from ml import registry

        folder = registry.model_dir() / "game_policy" / "_"
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, suffix=".safetensors", delete=False) as fh:
            path = Path(fh.name)
        try:
            model.save(path)
            path.chmod(0o644)
            info = model.info
            version = registry.register_file(
                "game_policy", path, config={"format": value.FORMAT, "hidden": list(hidden), "features": len(value.FEATURES)},
                metrics={k: info[k] for k in ("valid_log_loss", "train_brier", "rows", "games", "best_epoch") if k in info},
                data_snapshot={"seeds": info.get("seeds"), "games": info.get("games"), "schedule": [list(s) for s in SCHEDULE],
                               "decks": sorted(gauntlet.sample_decks())},
                activate=opts["activate"], notes=opts["notes"])
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        self.stdout.write(f"registered {version} ({model.info['rows']} positions from {model.info['games']} games, "
                          f"validation log-loss {model.info['valid_log_loss']})")

    def play(self, opts) -> list[dict]:
        rows, failed = play_games(opts["games"], opts["seed"], opts["workers"], rows_path=opts["rows"])
        for line in failed[:10]:
            self.stderr.write(line)
        return rows


def play_games(games: int, seed: int, workers: int, *, rows_path: str | None = None,
               schedule=SCHEDULE) -> tuple[list[dict], list[str]]:
    """Self-play games between the sample decks (every ordered pair in turn, the engine AIs of
    ``schedule`` in turn), in ``workers`` spawned processes: (labelled rows, failed games)."""
    decks = gauntlet.sample_decks()
    if len(decks) < 2:
        raise CommandError("the sample decks file is missing (set MTG_DATA_DIR)")
    pairs = list(itertools.permutations(sorted(decks), 2))
    jobs = []
    for i in range(games):
        a, b = pairs[i % len(pairs)]
        levels = schedule[(i // len(pairs)) % len(schedule)]
        jobs.append({"index": i, "names": [a, b], "levels": list(levels), "seed": seed + i,
                     "deck0": core.expand(decks[a]["main"]), "deck1": core.expand(decks[b]["main"])})
    path = carddb.card_data_path()
    if not path.exists():
        carddb.build()
    rows, failed = [], []
    out = open(rows_path, "a", encoding="utf-8") if rows_path else None  # noqa: SIM115
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=core.pool_init, initargs=(str(path),)) as pool:
            for index, part, error in progress(pool.map(value.pool_rows, jobs), total=len(jobs), desc="self-play games"):
                if error:
                    failed.append(f"game {index}: {error}")
                rows += part
                if out:
                    out.writelines(json.dumps(r) + "\n" for r in part)
                    out.flush()
    finally:
        if out:
            out.close()
    return rows, failed
