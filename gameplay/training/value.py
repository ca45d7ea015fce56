"""Training and evaluation of the search's value model (``gameplay.core.learning.value``): the registry kind
``game_value`` (``game_policy`` until this release, still accepted as an alias). Engine-vs-engine self-play between
the sample decks records every main-phase position from both seats with the winner; the model is fitted on them.
Plain functions that ``manage.py models train game_value`` and the training runs (``ml.training``) call; the kind
is declared in ``gameplay.kinds``.
"""
from __future__ import annotations

import itertools
import json
import multiprocessing
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from django.conf import settings

from gameplay import carddb
from gameplay.core.matches import roundrobin as core
from gameplay.core.matches import selfplay
from gameplay.core.learning import value
from gameplay.core.engine.adapter import DIFFICULTIES
from gameplay.core.engine.decks import sample_decks
from ml import registry
from ml.kinds import ConfigError, TrainingError, need, settle
from ml.models import ModelVersion
from ml.progress import Progress

KIND = "game_value"
OLD_KIND = "game_policy"  # the kind's name until this release (an alias of KIND for one release)
DEFAULTS = {"games": 480, "workers": 2, "seed": 20000, "rows": None, "from_rows": [], "hidden": "32", "epochs": 400,
            "weight_decay": 1e-2, "out": None, "notes": "", "level": None}
# who plays the self-play games, in turn: mostly the bench's opponent, some games one seat stronger
SCHEDULE = (("Medium", "Medium"), ("Medium", "Medium"), ("VeryHard", "Medium"), ("Medium", "VeryHard"))


def schedule_for(level: str | None, default=SCHEDULE) -> tuple:
    """The self-play schedule: ``level`` (one of the engine's difficulties) in both seats of every game, or
    ``default``. The quick preset plays Easy: a third of a Medium game's CPU, enough to check the pipeline."""
    if level is None:
        return default
    if level not in DIFFICULTIES:
        raise TrainingError(f"level must be one of {', '.join(DIFFICULTIES)} (got {level!r})")
    return ((level, level),)


def read_lines(path: Path, ok, what: str) -> list[dict]:
    """The JSON objects of a JSON-lines file, each checked by ``ok(obj)``; the first bad line is refused."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                good = isinstance(row, dict) and ok(row)
            except ValueError:
                good = False
            if not good:
                raise TrainingError(f"{path}:{n} is not {what}")
            rows.append(row)
    return rows


def read_rows(path: Path) -> list[dict]:
    def ok(row):
        x = row.get("x")
        return (isinstance(x, list) and len(x) == len(value.FEATURES) and row.get("won") in (0, 1)
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x) and "seed" in row)
    return read_lines(path, ok, "a position row of the current features")


def play_games(games: int, seed: int, workers: int, progress: Progress, *, rows_path: str | None = None,
               schedule=SCHEDULE, task=selfplay.pool_rows, runner=None) -> tuple[list[dict], list[str]]:
    """Self-play games between the sample decks (every ordered pair in turn, the engine AIs of
    ``schedule`` in turn), in ``workers`` spawned processes: (labelled rows, failed games). ``task`` plays
    one game's job (``selfplay.pool_rows``: value rows; ``pool_decisions``: the policy network's records);
    ``runner(jobs)``, when given, runs them elsewhere instead (Celery workers), yielding what ``task`` returns."""
    decks = sample_decks(settings.MTG_DATA_DIR)
    if len(decks) < 2:
        raise TrainingError("the sample decks file is missing (set MTG_DATA_DIR)")
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
                                 initializer=selfplay.pool_init, initargs=(str(path),)) as pool:
            results = runner(jobs) if runner is not None else pool.map(task, jobs)
            for index, part, error in progress.bar(results, total=len(jobs), desc="self-play games"):
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


def hidden_widths(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(h) for h in text.split(",") if h.strip())
    except ValueError:
        raise TrainingError("hidden takes widths such as 32 or 64,32") from None


def fit(params: dict, progress: Progress) -> value.ValueModel:
    """Positions recorded before (``from_rows``: JSON-lines files) and of ``games`` new self-play games (appended to
    ``rows`` when given), fitted; params: DEFAULTS' keys."""
    p = settle(params, DEFAULTS)
    hidden = hidden_widths(p["hidden"])
    if p["games"] < 0 or p["workers"] < 1:
        raise TrainingError("games must be >= 0 and workers >= 1")
    schedule = schedule_for(p["level"])
    rows = []
    for path in p["from_rows"]:
        if not Path(path).is_file():
            raise TrainingError(f"no such rows file: {path}")
        rows += read_rows(Path(path))
    if p["games"]:
        played, failed = play_games(p["games"], p["seed"], p["workers"], progress, rows_path=p["rows"],
                                    schedule=schedule)
        for line in failed[:10]:
            progress.log(line)
        rows += played
    groups = [r["seed"] for r in rows]  # a game's positions stay on one side of the validation split
    if len(set(groups)) < 4:
        raise TrainingError("too few games to train on (need positions from at least 4)")
    x = [r["x"] for r in rows]
    y = [r["won"] for r in rows]
    model = value.fit(x, y, hidden=hidden, epochs=p["epochs"], weight_decay=p["weight_decay"], groups=groups)
    prob = model.probability(np.array(x))
    model.info.update(games=len(set(groups)), train_brier=round(float(np.mean((prob - np.array(y)) ** 2)), 4),
                      seeds=f"{p['seed']}..{p['seed'] + p['games'] - 1}" if p["games"] else None,
                      schedule=[list(levels) for levels in schedule])
    return model


def register(model: value.ValueModel, notes: str = "") -> ModelVersion:
    """The model as the next game_value version (its file under MTG_MODEL_DIR), not activated."""
    folder = registry.model_dir() / KIND / "_"
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, suffix=".safetensors", delete=False) as fh:
        path = Path(fh.name)
    try:
        model.save(path)
        path.chmod(0o644)
        info = model.info
        return registry.register_file(
            KIND, path, config={"format": value.FORMAT, "hidden": list(info["hidden"]), "features": len(value.FEATURES)},
            metrics={k: info[k] for k in ("valid_log_loss", "train_brier", "rows", "games", "best_epoch") if k in info},
            data_snapshot={"seeds": info.get("seeds"), "games": info.get("games"),
                           "schedule": info.get("schedule") or [list(s) for s in SCHEDULE],
                           "decks": sorted(sample_decks(settings.MTG_DATA_DIR))},
            activate=False, notes=notes or "")
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def train(params: dict, progress: Progress, scope: str = "") -> ModelVersion:
    """``fit``, then ``register`` (an inactive version); with ``out`` the weights are also written there (e.g. the
    shipped ``ml/weights/game_value.safetensors``: ``value.DEFAULT_WEIGHTS``)."""
    model = fit(params, progress)
    version = register(model, params.get("notes") or "")
    if params.get("out"):
        model.save(params["out"])
        progress.log(f"saved {params['out']}")
    return version


def evaluate(version: ModelVersion, params: dict, progress: Progress) -> dict:
    """Brier score and log-loss against the winner on positions of fresh self-play games (Medium, or ``level``;
    seeds 5000 + i, never trained on), beside the engine's evaluation on the same positions."""
    games = int(params.get("games", 12))
    schedule = schedule_for(params.get("level"), default=(("Medium", "Medium"),))
    progress.log(f"playing {games} {schedule[0][0]} self-play games")
    try:
        model = value.ValueModel.load(registry.resolve_path(version.weights_path))
    except value.ValueModelError as exc:
        raise TrainingError(str(exc)) from None
    rows, failed = play_games(games, int(params.get("seed", 5000)), int(params.get("workers", 1)), progress,
                              schedule=schedule)
    if not rows:
        raise TrainingError("no finished game to evaluate on" + (f" ({failed[0]})" if failed else ""))
    out = {"games": len({r["seed"] for r in rows}), **value.score(model, rows)}
    progress.metric("brier", out["model_brier"])
    return out


# --- the registry kind ---------------------------------------------------------------------------------------

def shapes(config: dict) -> dict:
    need(config, "hidden")
    if config.get("format", value.FORMAT) != value.FORMAT:
        raise ConfigError(f"unknown game value format {config.get('format')!r} ({value.FORMAT})")
    try:
        sizes = [len(value.FEATURES), *(int(h) for h in config["hidden"]), 1]
    except (TypeError, ValueError):
        raise ConfigError("hidden must be a list of layer widths, e.g. [32]") from None
    if any(n < 1 for n in sizes):
        raise ConfigError("layer widths must be positive")
    out = {"mean": (len(value.FEATURES),), "std": (len(value.FEATURES),)}
    for i in range(len(sizes) - 1):
        out[f"layer{i}.weight"] = (sizes[i + 1], sizes[i])
        out[f"layer{i}.bias"] = (sizes[i + 1],)
    return out


def metadata(config: dict) -> dict:
    def fmt(text):
        return None if text == value.FORMAT else f"metadata 'format' must be {value.FORMAT!r}"

    def features(text):
        try:
            return None if json.loads(text) == list(value.FEATURES) else "metadata 'features' are not this code's features"
        except ValueError:
            return "metadata 'features' is not a JSON list"
    return {"format": fmt, "features": features}
