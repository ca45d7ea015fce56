"""Can a player trust the win estimate? Calibration of P(win) sources on held-out games unlike the training set.

    python -m bench.game_calibration play --train 60 --heldout 70 [--procs 2] [--copies 2]
    python -m bench.game_calibration report

``play`` plays games and writes them, resumably (a game already in the file is not played again), to
var/calibration/games.jsonl: decks outside the sample pool (``bench/harness/calibration_decks.py``: tournament
decks of the corpus the engine fully supports, split into a training half and a held-out half; the four sample
decks only on the training side) and seats of mixed strength (``SEATS``: VeryHard against Easy, a 2-copy
ensemble against Medium, a seat that plays at random for stretches, ...), seats swapped every other game. At the
first decision of every (turn, phase) the position is recorded from the deciding seat's side on ``--copies``
honest copies (hidden cards re-dealt from what that seat cannot see, ``determinize``): per copy the value
model's features from both sides and the engine's evaluation for both seats. Nothing is peeked: the estimate a
player sees is computed the same way.

``report`` fits, on the training games' positions only, the plain baseline (logistic regression on life, cards in
hand and board power) and a calibration map per source (``gameplay.core.learning.calibration``), then scores on
the held-out games, per phase of the game (turns 1-3, 4-7, 8+): Brier, log-loss, expected calibration error and
reliability bins, for the value model, the engine's squashed evaluation and the baseline, raw and calibrated;
the shown estimate is the best calibrated source on the training positions. Writes
bench/results/game_calibration.json (+ .md) and the reliability plot bench/results/game_calibration.svg.
"""
from __future__ import annotations

import argparse
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
# (seat 0, seat 1) of game i is SEATS[i % len(SEATS)], swapped on odd rounds
SEATS = (("engine:VeryHard", "engine:Easy"), ("ensemble:VeryHard:2", "engine:Medium"),
         ("stretch:VeryHard", "engine:Medium"), ("engine:Medium", "engine:Medium"),
         ("engine:Hard", "stretch:Easy"), ("engine:VeryHard", "engine:Medium"))
SEED = {"train": 81000, "heldout": 91000}


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
    from gameplay.core.matches.players import make_player

    if spec.startswith("stretch:"):
        return StretchPlayer(make_player("engine:" + spec.split(":", 1)[1], seed), seed)
    return make_player(spec, seed)


def jobs(side: str, games: int) -> list[dict]:
    decks = calibration_decks.load()[side]
    out = []
    for i in range(games):
        rng = random.Random(SEED[side] + i)
        a, b = rng.sample(range(len(decks)), 2)
        seats = SEATS[i % len(SEATS)]
        if (i // len(SEATS)) % 2:
            seats = seats[::-1]
        out.append({"id": f"{side}-{i}", "side": side, "seed": SEED[side] + i, "seats": list(seats),
                    "decks": [decks[a]["name"], decks[b]["name"]]})
    return out


_ENGINE = None
_DECKS = None


def _init(card_data: str):
    global _ENGINE, _DECKS
    from gameplay.core.engine.adapter import PhaseEngine

    _ENGINE = PhaseEngine(card_data)
    _DECKS = {d["name"]: d for side in calibration_decks.load().values() for d in side}


def record(engine, game, seat: int, rng, copies: int) -> dict | None:
    """The position from ``seat``'s side on ``copies`` honest copies (None when none loads)."""
    from gameplay.core.engine.adapter import EngineError, determinize
    from gameplay.core.learning.value import features

    state = game.state()
    out = []
    for _ in range(copies):
        try:
            copy = determinize(state, seat, rng)
            g = engine.load(copy)
            ev = [g.evaluate(seat), g.evaluate(1 - seat)]
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


def read_games(path: Path = GAMES) -> list[dict]:
    if not path.exists():
        return []
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a line cut by a killed run
    return out


def cmd_play(args) -> int:
    card_data = str(calibration_decks.card_data_path())
    done = {g["id"] for g in read_games()}
    # both sides in step (a run cut short leaves both about as far along), the held-out side a little ahead
    ranked = [(0.85 * i / args.heldout, j) for i, j in enumerate(jobs("heldout", args.heldout))]
    ranked += [(i / args.train, j) for i, j in enumerate(jobs("train", args.train))]
    todo = [j for _, j in sorted(ranked, key=lambda r: r[0]) if j["id"] not in done]
    print(f"{len(done)} games already played; {len(todo)} to play", flush=True)
    GAMES.parent.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(max(1, args.procs), initializer=_init, initargs=(card_data,)) as pool, \
            open(GAMES, "a", encoding="utf-8") as out:
        futures = [pool.submit(_play, (j, args.copies)) for j in todo]
        for f in as_completed(futures):
            g = f.result()
            out.write(json.dumps(g) + "\n")
            out.flush()
            print(f"{g['id']} {g['seats']} {g['decks']}: winner {g['winner']} turns {g['turns']} "
                  f"positions {len(g['positions'])} cpu {g['cpu_seconds']}s (record {g['record_cpu_seconds']}s)"
                  + (f" ERROR {g['error']}" if g["error"] else ""), flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("play", help="play the training and held-out games (resumable)")
    p.add_argument("--train", type=int, default=60)
    p.add_argument("--heldout", type=int, default=70)
    p.add_argument("--procs", type=int, default=2)
    p.add_argument("--copies", type=int, default=2, help="honest copies a position is recorded on")
    r = sub.add_parser("report", help="fit on the training games, score the held-out ones, write the results")
    r.add_argument("--games", default=str(GAMES))
    args = ap.parse_args(argv)
    if args.cmd == "play":
        return cmd_play(args)
    from bench.game_calibration_report import report

    return report(args)


if __name__ == "__main__":
    sys.exit(main())
