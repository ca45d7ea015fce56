"""Can a player trust the win estimate? Calibration of P(win) sources on held-out games unlike the training set.

    python -m bench.game_calibration play --train 300 --heldout 62 [--procs 1] [--copies 2] [--train-copies 1]
    python -m bench.game_calibration archive
    python -m bench.game_calibration report [--train-only] [--ship]

``play`` plays games and writes them, resumably (a game already in the file or in the archive is not played
again), to var/calibration/games.jsonl; ``archive`` keeps every game played so far, gzipped, with the results
(bench/results/game_calibration_games.jsonl.gz, committed: a lost checkout loses no game). Decks outside the
sample pool (``bench/harness/calibration_decks.py``: tournament decks of the corpus the engine fully supports,
split by whole decks into a training side and a held-out side; the four sample decks and older decks of each
format only on the training side) and seats of mixed strength (``SEATS``: VeryHard against Easy, a 2-copy
ensemble against Medium, a seat that plays at random for stretches, ...), seats swapped every other game. At the
first decision of every (turn, phase) the position is recorded from the deciding seat's side on ``--copies``
honest copies (hidden cards re-dealt from what that seat cannot see, ``determinize``): per copy the value
model's features from both sides and the engine's evaluation for both seats. Nothing is peeked: the estimate a
player sees is computed the same way.

``report`` fits, on the training games' positions only, the plain baseline (logistic regression on life, cards in
hand and board power) and a calibration map per source (``gameplay.core.learning.calibration``), then scores on
the held-out games, per phase of the game (turns 1-3, 4-7, 8+): Brier, log-loss, expected calibration error and
reliability bins, for the value model, the engine's squashed evaluation and the baseline, raw and calibrated;
the shown estimate is the best calibrated source out of fold on the training positions, the folds made by deck
(``--train-only`` prints those out-of-fold scores and scores nothing held out). Writes
bench/results/game_calibration.json (+ .md) and the reliability plot bench/results/game_calibration.svg.
"""
from __future__ import annotations

import argparse
from collections import Counter
import json
import os
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
from bench.harness import calibration_decks
from bench.harness.paths import ROOT

GAMES = ROOT / "var" / "calibration" / "games.jsonl"
# the games played so far, kept with the results (our own generated data: seats, deck names, recorded positions),
# so a lost checkout loses no game: ``play`` resumes from it and ``report`` reads it with the local file
ARCHIVE = ROOT / "bench" / "results" / "game_calibration_games.jsonl.gz"
# (seat 0, seat 1) of game i is SEATS[i % len(SEATS)], swapped on odd rounds
# (CPU per game on the shared machine: VeryHard against Easy about 30 s, Medium against Medium 20 s, a random
# stretch 50 s, a 2-copy ensemble about 100 s: it decides on honest copies, each a load, so it plays one game in 12)
SEATS = (("engine:VeryHard", "engine:Easy"), ("engine:Medium", "engine:Medium"), ("stretch:Medium", "engine:Easy"),
         ("engine:Hard", "engine:Medium"), ("engine:Easy", "engine:Medium"), ("stretch:Hard", "engine:Medium"),
         ("ensemble:VeryHard:2", "engine:Medium"), ("engine:Medium", "engine:Easy"),
         ("engine:Hard", "stretch:Easy"), ("engine:VeryHard", "engine:Medium"), ("engine:Easy", "engine:Hard"),
         ("stretch:VeryHard", "engine:Medium"))
# the training side's seats: the same mix without the 2-copy ensemble (a game of it costs the CPU of five), so
# the training games buy more decks and matchups for the same time; the held-out side keeps every seat
TRAIN_SEATS = tuple(s for s in SEATS if not any(p.startswith("ensemble:") for p in s))
SEED = {"train": 81000, "heldout": 91000, "limited": 95000, "train_limited": 85000}
# the deck list and the side of each kind of game: ``limited`` games are held out, ``train_limited`` trained on
KINDS = {"train": ("train", "train"), "heldout": ("heldout", "heldout"), "limited": ("heldout_limited", "heldout"),
         "train_limited": ("train_limited", "train")}


class StretchPlayer:
    """Plays like ``base`` but, from time to time, at random for a stretch of decisions (a seat of uneven
    strength: a person who misplays for a turn). A stretch starts with chance ``start`` at each decision and
    lasts ``length`` decisions."""

    def __init__(self, base, seed: int, start: float = 0.04, length: int = 12):
        self.base, self.name = base, f"stretch:{base.name}"
        self.rng = random.Random(seed ^ 0x5EED)
        self.start, self.length, self.left = start, length, 0

    def choose(self, game, seat):
        if self.left == 0 and self.rng.random() < self.start:
            self.left = self.length
        if self.left > 0:
            self.left -= 1
            return self.rng.choice(game.legal_actions(seat))
        return self.base.choose(game, seat)


def make(spec: str, seed: int):
    """The seat's player. The engine's AIs play on the real game (``!peek``): a third cheaper than deciding on
    honest copies, and only the seats' play is affected (stronger, not what the site's opponent does); the
    positions are still recorded without peeking (``record``). The ensemble votes on honest copies."""
    from gameplay.core.matches.players import make_player

    if spec.startswith("stretch:"):
        return StretchPlayer(make_player("engine:" + spec.split(":", 1)[1] + "!peek", seed), seed)
    if spec.startswith("engine:") and "!" not in spec:
        spec += "!peek"
    return make_player(spec, seed)


def jobs(side: str, games: int) -> list[dict]:
    """The games of a kind (``KINDS``): ``train``, ``heldout`` (tournament decks), ``limited`` (held-out games
    between two drafted Limited decks) or ``train_limited`` (training games between two Limited decks of other
    pods)."""
    deck_key, to_side = KINDS[side]
    decks = calibration_decks.load().get(deck_key, [])
    out = []
    table = TRAIN_SEATS if to_side == "train" else SEATS
    for i in range(games if len(decks) >= 2 else 0):
        rng = random.Random(SEED[side] + i)
        a, b = rng.sample(range(len(decks)), 2)
        seats = table[i % len(table)]
        if (i // len(table)) % 2:
            seats = seats[::-1]
        out.append({"id": f"{side}-{i}", "side": to_side, "seed": SEED[side] + i,
                    "seats": list(seats), "decks": [decks[a]["name"], decks[b]["name"]]})
    return out


_ENGINE = None
_DECKS = None


def _init(card_data: str):
    global _ENGINE, _DECKS
    from gameplay.core.engine.adapter import PhaseEngine

    _ENGINE = PhaseEngine(card_data)
    _DECKS = {d["name"]: d for side in calibration_decks.load().values() for d in side}


def record(engine, game, seat: int, rng, copies: int) -> dict | None:
    """The position from ``seat``'s side on ``copies`` honest copies (hidden cards re-dealt from what ``seat``
    cannot see; None when none can be dealt). The engine's evaluation is read on the real game: it reads no hidden
    card (equal on the real game and on every re-dealt copy of 24 positions checked), and loading a copy would
    cost twice the rest of the record."""
    from gameplay.core.engine.adapter import EngineError, determinize
    from gameplay.core.learning.value import features

    state = game.state()
    ev = [game.evaluate(seat), game.evaluate(1 - seat)]
    out = []
    for _ in range(copies):
        try:
            copy = determinize(state, seat, rng)
            out.append({"x": [round(v, 5) for v in features(copy, seat, ev[0])],
                        "xo": [round(v, 5) for v in features(copy, 1 - seat, ev[1])], "ev": ev})
        except (EngineError, ValueError, KeyError, TypeError):
            continue
    return {"turn": game.turn, "phase": game.phase, "seat": seat, "copies": out} if out else None


def play(job: dict, copies: int = 2, max_decisions: int = 2000) -> dict:
    engine = _ENGINE
    d0, d1 = (calibration_decks.deck_list(_DECKS[n]) for n in job["decks"])
    game = engine.new_game(d0, d1, seed=job["seed"])
    players = [make(s, job["seed"] + k) for k, s in enumerate(job["seats"])]
    rng = random.Random(job["seed"] * 7 + 1)
    cpu0 = time.process_time()
    record_cpu, positions, seen, error = 0.0, [], set(), None
    try:
        for _ in range(max_decisions):
            if game.is_over():
                break
            seat = game.seat_to_act()
            if seat is None:
                break
            key = (game.turn, game.phase)
            if key not in seen and game.turn >= 1:
                seen.add(key)
                c = time.process_time()
                pos = record(engine, game, seat, rng, copies)
                record_cpu += time.process_time() - c
                if pos:
                    positions.append(pos)
            chosen = players[seat].choose(game, seat)
            game.apply_or_next(seat, chosen)
    except Exception as exc:  # noqa: BLE001 - an engine crash ends the game undecided and is reported
        error = f"{type(exc).__name__}: {str(exc)[:200]}"
    winner = (game.result() or {}).get("winner") if game.is_over() else None
    return {**job, "winner": winner, "turns": game.turn, "error": error, "positions": positions,
            "cpu_seconds": round(time.process_time() - cpu0, 2), "record_cpu_seconds": round(record_cpu, 2)}


def _play(args):
    return play(*args)


def read_games(path: Path = GAMES, archive: Path | None = ARCHIVE) -> list[dict]:
    """The games of ``archive`` (the committed copy) then of ``path`` (this checkout's run); a game in both: the
    later record."""
    import gzip

    out = []
    for p in (archive, path):
        if p is None or not Path(p).exists():
            continue
        opener = gzip.open if str(p).endswith(".gz") else open
        with opener(p, "rt", encoding="utf-8") as fh:
            try:
                for line in fh:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        continue  # a line cut by a killed run
            except EOFError:
                continue  # an archive cut while written
    return out


def cmd_archive(args) -> int:
    """Write every game played so far (the archive and the local file, one record an id) to the archive."""
    import gzip

    by_id = {g["id"]: g for g in read_games()}
    tmp = ARCHIVE.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=9) as fh:
        for gid in sorted(by_id):
            fh.write(json.dumps(by_id[gid], separators=(",", ":")) + "\n")
    os.replace(tmp, ARCHIVE)
    print(f"{len(by_id)} games in {ARCHIVE} ({ARCHIVE.stat().st_size / 1e6:.2f} MB)")
    return 0


def cmd_play(args) -> int:
    card_data = str(calibration_decks.card_data_path())
    done = {g["id"] for g in read_games()}
    # the held-out side first, ``--heldout-lead`` of its games for each training game (so the held-out side reaches
    # its count early while some training games arrive to fit on), then the rest of the training games
    held, train = jobs("heldout", args.heldout), jobs("train", args.train)
    train_limited = jobs("train_limited", args.train_limited)  # interleaved with the tournament training games
    train = [j for pair in zip(train_limited, train) for j in pair] + train_limited[len(train):] + train[
        len(train_limited):]
    limited = jobs("limited", args.limited)  # interleaved with the tournament decks' held-out games
    held = [j for pair in zip(held, limited) for j in pair] + held[len(limited):] + limited[len(held):]
    order = []
    while held or train:
        order += [held.pop(0) for _ in range(min(len(held), args.heldout_lead))]
        if train:
            order.append(train.pop(0))
    todo = [j for j in order if j["id"] not in done]
    if args.reverse:  # a second run beside the first one, from the other end (the report keeps one record an id)
        todo.reverse()
    print(f"{len(done)} games already played; {len(todo)} to play", flush=True)
    GAMES.parent.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(max(1, args.procs), initializer=_init, initargs=(card_data,)) as pool, \
            open(GAMES, "a", encoding="utf-8") as out:
        futures = [pool.submit(_play, (j, args.copies if j["side"] == "heldout" else args.train_copies))
                   for j in todo]
        for f in as_completed(futures):
            g = f.result()
            out.write(json.dumps(g) + "\n")
            out.flush()
            print(f"{g['id']} {g['seats']} {g['decks']}: winner {g['winner']} turns {g['turns']} "
                  f"positions {len(g['positions'])} cpu {g['cpu_seconds']}s (record {g['record_cpu_seconds']}s)"
                  + (f" ERROR {g['error']}" if g["error"] else ""), flush=True)
    return 0


# --- report -------------------------------------------------------------------------------------------------

SOURCES = ("value", "engine", "engine_both", "baseline", "value_retrained", "blend", "logistic")
# sources fitted with many inputs (a regression over a dozen or more features, a retrained MLP): chosen only when
# the training side holds at least this many decks and games. With fewer, a fold's out-of-fold score rests on a
# handful of matchups and flatters them (25 games, 2026-11-28: the logistic source scored 0.053 out of fold and
# 0.231 on the held-out games, against the baseline's 0.209)
MANY_INPUTS = ("value_retrained", "blend", "logistic")
MIN_TRAIN_DECKS, MIN_TRAIN_GAMES = 24, 40
# the logistic source's regularisation, chosen among these by its out-of-fold Brier score on the training games
LOGISTIC_L2 = (0.01, 0.05, 0.2)
# the calibration map's regularisation (``Calibrator.fit``'s l2: how far its slope is pulled towards 0, an estimate
# towards the phase's share of wins; 10: about that share whatever the source says), chosen per source and phase
# out of fold among these: early in a game nothing predicts the winner well (every source scored worse than a coin
# in turns 1-3 out of fold on 34 training games), and an unregularised map stays too sure there
MAP_L2 = (1e-3, 0.03, 0.1, 0.3, 1.0, 10.0)
LABELS = {"value": "value model (shipped v1)", "engine": "engine evaluation, squashed",
          "engine_both": "engine evaluation from both seats, squashed (this seat's and one minus the other's)",
          "baseline": "plain baseline (logistic: life, hand, board power)",
          "value_retrained": "value model retrained on the varied training games",
          "blend": "per phase, a logistic regression over the value model's and the engine's logits and the "
                   "baseline's inputs",
          "logistic": "per phase, a regularised logistic regression over every feature of both sides (life, hand, "
                      "library, board, creatures' power and toughness, lands, deck make-up, turn, on the play), "
                      "each side's clock and cards, and the value model's and the engine's logits"}
BASELINE_FEATURES = ("me_life", "opp_life", "me_hand", "opp_hand", "me_power", "opp_power")
COLOURS = {"value": "#1f77b4", "engine": "#ff7f0e", "engine_both": "#bcbd22", "baseline": "#7f7f7f", "value_retrained": "#2ca02c",
           "blend": "#9467bd", "logistic": "#8c564b", "shown": "#d62728"}


def positions(games: list[dict]) -> dict:
    """Arrays of the decided games' positions: x/xo (features, mean over copies), ev/evo (the engine's evaluation
    for the deciding seat / the other seat), won, turn, game index."""
    import numpy as np

    x, xo, ev, evo, won, turn, game, decks = [], [], [], [], [], [], [], []
    for gi, g in enumerate(games):
        if g.get("winner") not in (0, 1):
            continue
        for pos in g["positions"]:
            decks.append("|".join(g["decks"]))
            cs = pos["copies"]
            x.append(np.mean([c["x"] for c in cs], axis=0))
            xo.append(np.mean([c["xo"] for c in cs], axis=0))
            ev.append(float(np.mean([c["ev"][0] for c in cs])))
            evo.append(float(np.mean([c["ev"][1] for c in cs])))
            won.append(int(pos["seat"] == g["winner"]))
            turn.append(max(1, int(pos["turn"])))
            game.append(gi)
    return {"x": np.array(x), "xo": np.array(xo), "ev": np.array(ev), "evo": np.array(evo), "won": np.array(won, dtype=float),
            "turn": np.array(turn), "game": np.array(game), "decks": np.array(decks, dtype=object)}


def baseline_rows(x):
    from gameplay.core.learning.value import FEATURES

    return x[:, [FEATURES.index(f) for f in BASELINE_FEATURES]]


def raw_estimates(data: dict, models: dict) -> dict:
    """P(the deciding seat wins) by each source, uncalibrated."""
    import numpy as np

    from gameplay.core.learning import calibration as cal
    from gameplay.core.search.evaluation import win_probability

    out = {"engine": np.array([win_probability(v) for v in data["ev"]])}
    out["engine_both"] = 0.5 * (out["engine"] + 1.0 - np.array([win_probability(v) for v in data["evo"]]))
    w, b = models["baseline"]
    out["baseline"] = cal.sigmoid(baseline_rows(data["x"]) @ w + b)
    for name in ("value", "value_retrained"):
        m = models.get(name)
        if m is not None:
            p, q = m.probability(data["x"]), m.probability(data["xo"])
            out[name] = 0.5 * (p + 1.0 - q)
    if "logistic" in models:
        xm, xt = logistic_inputs(data, models["value"])
        out["logistic"] = models["logistic"].predict(xm, xt, data["turn"])
    if "blend" in models:
        z = blend_inputs(data, out)
        phases = np.array([cal.phase_of(int(t)) for t in data["turn"]])
        p = np.full(len(z), 0.5)
        for phase, (w, b) in models["blend"].items():
            m = phases == phase
            p[m] = cal.sigmoid(z[m] @ w + b)
        out["blend"] = p
    return out


def logistic_inputs(data: dict, shipped):
    """The logistic source's inputs from each side (``estimate.inputs``), as ``ValueModel.raw_shown`` makes them."""
    import numpy as np

    from gameplay.core.learning import estimate
    from gameplay.core.search.evaluation import win_probability

    own = 0.5 * (shipped.probability(data["x"]) + 1.0 - shipped.probability(data["xo"]))

    def engine(rows):
        return np.array([win_probability(v * 10) for v in rows[:, -1]])

    return (estimate.inputs(data["x"], own, engine(data["x"])),
            estimate.inputs(data["xo"], 1.0 - own, engine(data["xo"])))


def blend_inputs(data: dict, raw: dict):
    """The blend's inputs: logit(value model), logit(engine), the baseline's inputs (``value.raw_shown``'s order)."""
    import numpy as np

    from gameplay.core.learning import calibration as cal

    return np.column_stack([cal.logit(raw["value"]), cal.logit(raw["engine"]), baseline_rows(data["x"])])


def fit_blend(data: dict, raw: dict) -> dict:
    import numpy as np

    from gameplay.core.learning import calibration as cal

    z = blend_inputs(data, raw)
    phases = np.array([cal.phase_of(int(t)) for t in data["turn"]])
    out = {}
    for phase, _, _ in cal.PHASES:
        m = phases == phase
        if m.sum() >= 20:
            out[phase] = cal.fit_logistic(z[m], data["won"][m], l2=1e-2)
    return out


def fit_models(train: dict, shipped, games_seed: int = 0, l2: float = LOGISTIC_L2[1], retrain: bool = True) -> dict:
    """The baseline, the logistic source and the retrained value model, fitted on ``train`` positions (both
    seats' rows)."""
    import numpy as np

    from gameplay.core.learning import calibration as cal
    from gameplay.core.learning import estimate, value

    xb = np.vstack([baseline_rows(train["x"]), baseline_rows(train["xo"])])
    yb = np.concatenate([train["won"], 1 - train["won"]])
    models = {"baseline": cal.fit_logistic(xb, yb, l2=1e-3)}
    rows = np.vstack([train["x"], train["xo"]])
    models["value"] = shipped
    models["blend"] = fit_blend(train, raw_estimates(train, models))
    xm, xt = logistic_inputs(train, shipped)
    models["logistic"] = estimate.fit(xm, xt, train["won"], train["turn"], l2=l2)
    if not retrain or len(set(train["game"].tolist())) < 4:  # too few games to hold some out while fitting
        return models
    models["value_retrained"] = value.fit(rows.tolist(), yb.astype(int).tolist(), hidden=(16,), epochs=300,
                                          weight_decay=1e-2, groups=np.concatenate([train["game"]] * 2).tolist(),
                                          seed=games_seed)
    return models


def eligible_sources(choice: dict, train_decks: int, train_games: int) -> dict:
    """The sources (name -> out-of-fold Brier) the shown one may be chosen from: the many-input ones only once the
    training side holds ``MIN_TRAIN_DECKS`` decks and ``MIN_TRAIN_GAMES`` games."""
    enough = train_decks >= MIN_TRAIN_DECKS and train_games >= MIN_TRAIN_GAMES
    return {name: b for name, b in choice.items() if enough or name not in MANY_INPUTS}


def subset(data: dict, mask) -> dict:
    return {k: v[mask] for k, v in data.items()}


def by_phase(p, data: dict) -> dict:
    from gameplay.core.learning import calibration as cal

    out = {"all": cal.scores(p, data["won"])}
    phases = [cal.phase_of(int(t)) for t in data["turn"]]
    for name, _, _ in cal.PHASES:
        m = [ph == name for ph in phases]
        if any(m):
            out[name] = cal.scores(p[m], data["won"][m])
    return out


def report(args) -> int:
    import datetime as dt

    import numpy as np

    from bench.harness.games import game_machine
    from bench.harness.paths import RESULTS, command
    from bench.harness.report import write_result
    from gameplay.core.learning import calibration as cal
    from gameplay.core.learning import value

    cpu0 = time.process_time()
    # the archive and this checkout's file; a --games file of one's own alone
    games = read_games(Path(args.games), ARCHIVE if Path(args.games) == GAMES else None)
    by_id = {g["id"]: g for g in games}  # a game played twice (a resumed run): the last record
    games = sorted(by_id.values(), key=lambda g: g["id"])
    train_games = [g for g in games if g["side"] == "train"]
    held_games = [g for g in games if g["side"] == "heldout"]
    shared = {d for g in train_games for d in g["decks"]} & {d for g in held_games for d in g["decks"]}
    if shared:  # the split is by whole decks: a held-out deck in a training game would be trained on
        raise SystemExit(f"decks on both sides: {sorted(shared)}")
    train, held = positions(train_games), positions(held_games)
    shipped = value.ValueModel.load(args.shipped or value.V1_WEIGHTS)
    # choose the source and fit its map out of fold, by deck (the held-out side's decks are unseen, so the choice
    # is made the same way): the training decks fall in up to five folds; fold k scores the games with a deck of
    # fold k by what the games with no deck of fold k fitted (a game with decks of two folds: the mean of both);
    # the shown source is the one with the lowest out-of-fold Brier score once calibrated
    deck_names = sorted({d for pair in train["decks"] for d in pair.split("|")})
    folds = max(2, min(5, len(deck_names) // 3))
    deck_fold = {d: i % folds for i, d in enumerate(random.Random(17).sample(deck_names, len(deck_names)))}
    in_fold = np.array([[any(deck_fold[d] == k for d in pair.split("|")) for k in range(folds)]
                        for pair in train["decks"]]).reshape(len(train["won"]), folds)
    variants = [(name, None) for name in SOURCES if name != "logistic"] + [("logistic", l2) for l2 in LOGISTIC_L2]
    oof_sum = {(v, ml2): np.zeros(len(train["won"])) for v in variants for ml2 in MAP_L2}
    raw_sum = {v: np.zeros(len(train["won"])) for v in variants}  # each fold's fitted sources, raw
    seen = np.zeros(len(train["won"]))  # how many folds scored each position
    for k in range(folds):
        if len(set(train["game"][~in_fold[:, k]].tolist())) < 2 or not in_fold[:, k].any():
            continue  # (no games left to fit on: the fold's positions stay unscored)
        seen[in_fold[:, k]] += 1
        a, b = subset(train, ~in_fold[:, k]), subset(train, in_fold[:, k])
        for li, l2 in enumerate(LOGISTIC_L2):
            models = fit_models(a, shipped, games_seed=k, l2=l2, retrain=li == 0)
            pa, pb = raw_estimates(a, models), raw_estimates(b, models)
            for name, vl2 in variants:
                if (vl2 is not None and vl2 != l2) or (vl2 is None and li > 0):
                    continue
                if name not in pa:  # (a source a part could not fit scores as a coin)
                    for ml2 in MAP_L2:
                        oof_sum[((name, vl2), ml2)][in_fold[:, k]] += 0.5
                    raw_sum[(name, vl2)][in_fold[:, k]] += 0.5
                    continue
                for ml2 in MAP_L2:
                    oof_sum[((name, vl2), ml2)][in_fold[:, k]] += cal.Calibrator.fit(
                        pa[name], a["won"], a["turn"], l2=ml2)(pb[name], b["turn"])
                raw_sum[(name, vl2)][in_fold[:, k]] += pb[name]
    scored = seen > 0
    # each variant's map regularisation per phase: the one with the lowest out-of-fold Brier score on its positions
    train_phase = np.array([cal.phase_of(int(t)) for t in train["turn"]])
    map_l2 = {}
    for v in variants:
        map_l2[v] = {}
        for ph, _, _ in cal.PHASES:
            m = scored & (train_phase == ph)
            map_l2[v][ph] = MAP_L2[0] if not m.any() else min(MAP_L2, key=lambda ml2: cal.brier(
                oof_sum[(v, ml2)][m] / seen[m], train["won"][m]))
    oof = {v: sum(np.where(train_phase == ph, oof_sum[(v, ml2)], 0.0) for ph, ml2 in map_l2[v].items())
           for v in variants}
    variant_brier = {v: cal.brier(oof[v][scored] / seen[scored], train["won"][scored]) for v in variants}
    best_l2 = min(LOGISTIC_L2, key=lambda l2: variant_brier[("logistic", l2)])
    pick = {name: (name, best_l2 if name == "logistic" else None) for name in SOURCES}
    oof_raw = {name: np.where(scored, raw_sum[pick[name]] / np.maximum(seen, 1), 0.5) for name in SOURCES}
    choice = {name: round(variant_brier[pick[name]], 4) for name in SOURCES}
    if args.train_only:  # developing the sources: the training games' out-of-fold scores only, nothing written
        print(f"training: {len(train_games)} games, {len(train['won'])} positions, {len(deck_names)} decks, "
              f"{folds} folds")
        for v in variants:
            p = oof[v][scored] / seen[scored]
            phases = by_phase(p, subset(train, scored))
            print(f"  {v[0]:16s} {'' if v[1] is None else v[1]!s:6s} map " + "/".join(
                  f"{ml2:g}" for ml2 in map_l2[v].values()) + f"  Brier {variant_brier[v]:.4f}  "
                  "ECE " + " / ".join(
                f"{phases[ph]['ece']:.3f}" for ph in phases if ph != "all") + "  Brier " + " / ".join(
                f"{phases[ph]['brier']:.3f}" for ph in phases if ph != "all"))
        return 0
    models = fit_models(train, shipped, l2=best_l2)
    raw_train, raw_held = raw_estimates(train, models), raw_estimates(held, models)
    sources = [name for name in SOURCES if name in raw_train]
    choice = {name: b for name, b in choice.items() if name in sources}
    train_decks = len(deck_names)
    eligible = eligible_sources(choice, train_decks, len(train_games))
    shown = min(eligible, key=eligible.get)
    # each map is fitted on estimates of positions its source was not fitted on: the out-of-fold ones (a source
    # fitted in-sample looks surer than it is, and a map fitted on that would sharpen it further)
    maps = {name: cal.Calibrator.fit(oof_raw[name][scored], train["won"][scored], train["turn"][scored],
                                     l2=map_l2[pick[name]])
            for name in sources}
    heldout = {}
    for name in sources:
        heldout[name] = by_phase(raw_held[name], held)
        heldout[name + "_calibrated"] = by_phase(maps[name](raw_held[name], held["turn"]), held)
    shown_p = maps[shown](raw_held[shown], held["turn"])
    heldout["shown"] = by_phase(shown_p, held)
    # the shown estimate on each kind of held-out deck: tournament decks, drafted Limited decks
    limited = np.array([held_games[int(i)]["id"].startswith("limited-") for i in held["game"]], dtype=bool)
    by_kind = {kind: by_phase(shown_p[m], subset(held, m)) for kind, m in (("tournament", ~limited),
                                                                           ("limited", limited)) if m.any()}
    base = heldout["baseline"]
    targets = {}
    for phase in ["all"] + [n for n, _, _ in cal.PHASES]:
        s, b = heldout["shown"].get(phase), base.get(phase)
        if s and b:
            targets[phase] = {"ece": s["ece"], "ece_ok": s["ece"] <= 0.05, "brier": s["brier"],
                              "baseline_brier": b["brier"],
                              "brier_gain_vs_baseline": round(1 - s["brier"] / b["brier"], 4),
                              "brier_ok": s["brier"] <= 0.9 * b["brier"]}
    table = {}
    for name in ("shown", *sources, *(n + "_calibrated" for n in sources)):
        for phase, sc in heldout[name].items():
            table[f"{name} · {phase}"] = {k: sc[k] for k in ("positions", "brier", "log_loss", "ece", "confident_wrong")}
    cpu_games = [g["cpu_seconds"] for g in games]
    # the shipped file: the MLP the search's learned leaf uses (the retrained one only where it is the shown
    # source) with what the page shows in its metadata: the source, the baseline's weights, the calibration map
    mlp = models["value_retrained"] if shown == "value_retrained" else shipped
    ship_info = {k: v for k, v in mlp.info.items() if k not in ("calibration", "shown")}
    ship_info["calibration"] = maps[shown].to_dict()
    ship_info["shown"] = {"source": "value" if shown == "value_retrained" else shown,
                          "features": list(BASELINE_FEATURES),
                          "weights": [round(float(v), 6) for v in models["baseline"][0]],
                          "bias": round(float(models["baseline"][1]), 6),
                          "blend": {ph: {"weights": [round(float(v), 6) for v in w], "bias": round(float(b), 6)}
                                    for ph, (w, b) in models["blend"].items()},
                          "logistic": models["logistic"].to_dict(),
                          "chosen_by": "bench/game_calibration.py (lowest out-of-fold Brier on its training games)"}
    result = {
        "bench": "game_calibration", "command": command("game_calibration"),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "machine": game_machine(),
        "data": {"train": len(train_games), "heldout": len(held_games),
                  "heldout_decided": int(len({int(i) for i in held["game"]})),
                  "train_positions": int(len(train["won"])), "heldout_positions": int(len(held["won"])),
                  "cpu_seconds_total": round(sum(cpu_games), 1),
                  "cpu_seconds_per_game": round(float(np.mean(cpu_games)), 1) if cpu_games else None,
                  "record_cpu_seconds_per_game": round(float(np.mean([g["record_cpu_seconds"] for g in games])), 1)
                  if games else None,
                  "heldout_seats": {" vs ".join(k): v for k, v in sorted(
                      Counter(tuple(g["seats"]) for g in held_games).items())},
                  "heldout_cpu_seconds_by_seats": {" vs ".join(k): round(float(np.mean(
                      [g["cpu_seconds"] for g in held_games if tuple(g["seats"]) == k])), 1)
                      for k in sorted({tuple(g["seats"]) for g in held_games})},
                  "heldout_decks": sorted({d for g in held_games for d in g["decks"]}),
                  "heldout_limited_games": sum(g["id"].startswith("limited-") for g in held_games),
                  "train_decks": sorted({d for g in train_games for d in g["decks"]}),
                  "errors": sum(bool(g.get("error")) for g in games)},
        "shown": {"source": shown, "label": LABELS[shown], "chosen_by": f"lowest out-of-fold Brier score ({folds} folds "
                  "of the training decks: each fold's games scored by the games with none of its decks) after a "
                  "per-phase Platt map", "out_of_fold_brier": choice,
                  "eligible": sorted(eligible), "eligibility": f"sources of many inputs ({', '.join(MANY_INPUTS)}) "
                  f"only with >= {MIN_TRAIN_DECKS} training decks and >= {MIN_TRAIN_GAMES} training games (here "
                  f"{train_decks} decks, {len(train_games)} games)",
                  "logistic_l2": best_l2, "logistic_l2_out_of_fold_brier": {
                      str(l2): round(variant_brier[("logistic", l2)], 4) for l2 in LOGISTIC_L2},
                  "map_l2": map_l2[pick[shown]],
                  "calibration": maps[shown].to_dict()},
        "targets": targets, "table": table, "heldout": heldout,
        "shown_by_deck_kind": {kind: {ph: {k: sc[k] for k in ("positions", "brier", "ece")} for ph, sc in v.items()}
                               for kind, v in by_kind.items()},
        "maps": {name: m.to_dict() for name, m in maps.items()},
        "baseline": {"features": list(BASELINE_FEATURES), "weights": [round(float(v), 4) for v in models["baseline"][0]],
                     "bias": round(models["baseline"][1], 4)},
        "value_retrained": {k: (models["value_retrained"].info.get(k) if "value_retrained" in models else None) for k in ("rows", "valid_log_loss", "hidden",
                                                                                "best_epoch")},
        "report_cpu_seconds": round(time.process_time() - cpu0, 1),
    }
    write_result(result, RESULTS / "game_calibration.json", indent=1)
    (RESULTS / "game_calibration.svg").write_text(svg(heldout), encoding="utf-8")
    if args.ship:
        ship(value.ValueModel(mlp.layers, mlp.mean, mlp.std, ship_info), result)
    print(f"held-out: {len(held_games)} games, {len(held['won'])} positions; shown source {shown}")
    for phase, t in targets.items():
        print(f"  {phase:10s} ECE {t['ece']:.3f} ({'ok' if t['ece_ok'] else 'over 0.05'})  Brier {t['brier']:.4f} "
              f"vs baseline {t['baseline_brier']:.4f} ({100 * t['brier_gain_vs_baseline']:+.1f}%)")
    return 0


def manifest_metrics(result: dict) -> dict:
    """The registered version's metrics: the shown estimate's calibration on the held-out games, per phase (the
    expected calibration error, the Brier score) beside the plain baseline's Brier score."""
    shown, base = result["heldout"]["shown"], result["heldout"]["baseline"]
    out = {"heldout_games": result["data"]["heldout"], "heldout_positions": result["data"]["heldout_positions"]}
    for phase, sc in shown.items():
        key = phase.replace("turns ", "turns_").replace("-", "_").replace("+", "_plus")
        out[f"ece_{key}"] = sc["ece"]
        out[f"brier_{key}"] = sc["brier"]
    out["baseline_brier_all"] = base["all"]["brier"]
    return {"calibration": out}


def ship(model, result: dict) -> None:
    """Write the calibrated model to ml/weights/game_value.safetensors and its manifest entry (kept beside the
    other kinds' entries), so ``manage.py register_models`` registers it as the first game_value version."""
    import hashlib

    from gameplay.core.learning import value

    path = value.DEFAULT_WEIGHTS
    model.save(path)
    manifest = path.parent / "manifest.json"
    entries = [e for e in json.loads(manifest.read_text()) if e["kind"] != "game_value"]
    hidden = [int(w.shape[0]) for w, _ in model.layers[:-1]]
    t = result["targets"]
    notes = (f"Game value model, calibrated · shown estimate: {result['shown']['label']} · held-out "
             f"{result['data']['heldout']} games, {result['data']['heldout_positions']} positions (decks outside "
             f"the sample pool, mixed-strength seats) · ECE " + " / ".join(
                 f"{t[p]['ece']:.3f}" for p in t if p != "all") + " (turns 1-3 / 4-7 / 8+) · "
             f"{path.stat().st_size / 1e3:.1f} kB · held-out Brier loss {t['all']['brier']:.3f} against the plain "
             f"baseline's {t['all']['baseline_brier']:.3f}"
             + ("" if all(v["ece_ok"] for k, v in t.items() if k != "all") and t["all"]["brier_ok"]
                else " (targets not met: bench/results/game_calibration.md)"))
    entries.append({"kind": "game_value", "scope": "", "file": path.name,
                    "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                    "config": {"format": value.FORMAT, "hidden": hidden, "features": len(value.FEATURES)},
                    "metrics": manifest_metrics(result),
                    "data_snapshot": {"bench": "bench/results/game_calibration.json",
                                      "trained_on": model.info.get("games") and
                                      f"{model.info.get('games')} self-play games (sample decks)",
                                      "calibrated_on": f"{result['data']['train']} training games of "
                                                       f"bench/game_calibration.py"},
                    "notes": notes})
    manifest.write_text(json.dumps(sorted(entries, key=lambda e: (e["kind"], e["scope"])), indent=1, sort_keys=True))
    print(f"shipped {path} and its manifest entry")


def svg(heldout: dict) -> str:
    """Reliability plot: per phase, mean estimate (x) against the share won (y) per bin, one line per source."""
    from gameplay.core.learning import calibration as cal

    size, pad, gap = 220, 34, 30
    phases = [n for n, _, _ in cal.PHASES]
    width = pad + len(phases) * (size + gap) + 170
    height = size + 2 * pad + 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="11"><rect width="100%" height="100%" fill="white"/>']
    lines = ("shown", "value", "engine", "baseline")
    for i, phase in enumerate(phases):
        x0, y0 = pad + i * (size + gap), pad
        parts.append(f'<rect x="{x0}" y="{y0}" width="{size}" height="{size}" fill="none" stroke="#999"/>')
        parts.append(f'<line x1="{x0}" y1="{y0 + size}" x2="{x0 + size}" y2="{y0}" stroke="#ccc" '
                     f'stroke-dasharray="4 3"/>')
        n = heldout["shown"].get(phase, {}).get("positions", 0)
        parts.append(f'<text x="{x0}" y="{y0 - 8}">{phase} ({n} positions)</text>')
        parts.append(f'<text x="{x0 + size / 2 - 40}" y="{y0 + size + 16}">estimated P(win)</text>')
        if i == 0:
            parts.append(f'<text x="10" y="{y0 + size / 2}" transform="rotate(-90 10 {y0 + size / 2})">share '
                         f'won</text>')
        for name in lines:
            bins = heldout.get(name, {}).get(phase, {}).get("reliability") or []
            pts = " ".join(f"{x0 + b['mean_p'] * size:.1f},{y0 + (1 - b['won']) * size:.1f}" for b in bins)
            if pts:
                parts.append(f'<polyline points="{pts}" fill="none" stroke="{COLOURS[name]}" stroke-width="'
                             f'{2.5 if name == "shown" else 1.3}"/>')
                for b in bins:
                    parts.append(f'<circle cx="{x0 + b["mean_p"] * size:.1f}" cy="{y0 + (1 - b["won"]) * size:.1f}" '
                                 f'r="{1.5 + min(4.0, b["n"] ** 0.5 / 6):.1f}" fill="{COLOURS[name]}"/>')
    lx = pad + len(phases) * (size + gap)
    for k, name in enumerate(lines):
        parts.append(f'<rect x="{lx}" y="{pad + 16 * k}" width="10" height="10" fill="{COLOURS[name]}"/>')
        label = "shown estimate (calibrated)" if name == "shown" else name + " (raw)"
        parts.append(f'<text x="{lx + 14}" y="{pad + 9 + 16 * k}">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("play", help="play the training and held-out games (resumable)")
    p.add_argument("--train", type=int, default=60)
    p.add_argument("--heldout", type=int, default=70)
    p.add_argument("--limited", type=int, default=0, help="held-out games between two drafted Limited decks")
    p.add_argument("--train-limited", type=int, default=0, help="training games between two drafted Limited decks "
                   "of other pods")
    p.add_argument("--procs", type=int, default=2)
    p.add_argument("--copies", type=int, default=2, help="honest copies a position is recorded on")
    p.add_argument("--train-copies", type=int, default=1, help="honest copies a training position is recorded on")
    p.add_argument("--heldout-lead", type=int, default=3, help="held-out games played for each training game "
                   "until the held-out side is done")
    p.add_argument("--reverse", action="store_true", help="play the list from its end (a second run beside one)")
    sub.add_parser("archive", help=f"write every game played so far to {ARCHIVE.relative_to(ROOT)} (committed)")
    r = sub.add_parser("report", help="fit on the training games, score the held-out ones, write the results")
    r.add_argument("--games", default=str(GAMES), help="the games (default: this checkout's, with the archive's)")
    r.add_argument("--shipped", default=None, help="the value model scored as 'value' (default: the shipped v1)")
    r.add_argument("--train-only", action="store_true", help="print the training games' out-of-fold scores of "
                   "every source (by deck folds) and stop: the held-out games are not scored")
    r.add_argument("--ship", action="store_true", help="write the calibrated model to ml/weights/game_value.safetensors "
                   "and its entry in ml/weights/manifest.json (registered on setup: manage.py register_models)")
    args = ap.parse_args(argv)
    if args.cmd == "play":
        return cmd_play(args)
    if args.cmd == "archive":
        return cmd_archive(args)
    return report(args)


if __name__ == "__main__":
    sys.exit(main())
