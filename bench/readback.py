"""Read-back: how often phase.rs cannot read a state it wrote, and what the site does about it.

    python -m bench.readback [--games 12] [--every 5]

Games between the four sample decks (every ordered pair, fixed seeds; the engine's Easy AI against
its Medium AI, and every other game a uniformly random seat 0, which reaches more prompts) are
played with every move recorded as the site records it. At every decision that is not a plain
priority pass, and at every ``--every``-th one, the state is read back three ways:

- raw: the engine's own reader on ``Game.state()``;
- repaired: ``PhaseEngine.load``, which rewrites what the reader refuses in a pump target prompt;
- replayed (for the positions still unreadable): ``PhaseEngine.replay`` from the decks, seed and
  recorded moves, checked identical to the real state, with its time against one ``load`` of a
  readable state of the same game (a ratio in the same process; this machine is shared).

And at the end of every game, the whole game is replayed from its moves and checked identical (what
a rebuild costs at the end of a game, however rare the need).

Also counted: the engine AI's choices that ``legal_actions`` does not list (the site now plays
them as chosen instead of replacing them with the first offered action).
Writes bench/results/readback.json.
"""
from __future__ import annotations

import argparse
import collections
import datetime as dt
import itertools
import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
from bench.harness import games as fixtures
from bench.harness.paths import RESULTS, command
from bench.harness.report import write_result


REASONS = [("unknown variant", "pump target detail (Increase/Decrease)"),
           ("copiable trigger origins", "copiable trigger origins do not align"),
           ("ZoneChanged record", "current-turn ZoneChanged record")]


def reason(exc: Exception) -> str:
    text = str(exc)
    return next((label for marker, label in REASONS if marker in text), text[:80])


def run(games: int, every: int) -> dict:
    from gameplay.core.engine.adapter import BadState, EngineError
    from gameplay.core.matches.players import EnginePlayer, RandomPlayer

    eng = fixtures.engine()
    decks = fixtures.load_sample_decks()
    pairs = list(itertools.permutations(sorted(decks), 2))
    counts = collections.Counter()
    reasons_raw, reasons_left = collections.Counter(), collections.Counter()
    replay_ratio, replay_seconds, moves_at = [], [], []
    whole = {"identical": 0, "seconds": [], "moves": [], "x_one_load": []}
    for g in range(games):
        a, b = pairs[g % len(pairs)]
        deck_a, deck_b = fixtures.deck_list(decks, a), fixtures.deck_list(decks, b)
        seed, first = 300 + g, g % 2
        game = eng.new_game(deck_a, deck_b, seed=seed, first_player=first)
        players = (RandomPlayer(seed) if g % 2 else EnginePlayer("Easy"), EnginePlayer("Medium"))
        moves, load_time = [], None
        for step in range(3000):
            seats = game.seats_to_act()
            if not seats:
                break
            prompt = game.prompt()
            if prompt.get("type") != "Priority" or step % every == 0:
                counts["positions"] += 1
                state = game.state()
                try:
                    eng._engine.load_game(state)
                except (ValueError, TypeError, KeyError) as exc:
                    counts["unreadable_raw"] += 1
                    reasons_raw[reason(exc)] += 1
                try:
                    t = time.perf_counter()
                    eng.load(state)
                    load_time = time.perf_counter() - t
                except BadState as exc:
                    counts["unreadable_repaired"] += 1
                    reasons_left[reason(exc)] += 1
                    t = time.perf_counter()
                    try:
                        copy = eng.replay(deck_a, deck_b, moves, seed=seed, first_player=first)
                        same = json.dumps(copy.state(), sort_keys=True) == json.dumps(state, sort_keys=True)
                    except EngineError:
                        same = False
                    took = time.perf_counter() - t
                    counts["rebuilt_identical" if same else "rebuild_failed"] += 1
                    replay_seconds.append(took)
                    moves_at.append(len(moves))
                    if load_time:
                        replay_ratio.append(took / load_time)
            seat = seats[0]
            action = players[seat].choose(game, seat)
            if seat == 1:
                counts["ai_decisions"] += 1
                counts["ai_choices_not_listed"] += action.key not in {x.key for x in game.legal_actions(seat)}
            game.apply(seat, action)
            moves.append([seat, action.key])
        counts["decisions"] += len(moves)
        t = time.perf_counter()
        eng.load(game.state())
        one_load = time.perf_counter() - t
        t = time.perf_counter()
        copy = eng.replay(deck_a, deck_b, moves, seed=seed, first_player=first)
        took = time.perf_counter() - t
        whole["identical"] += json.dumps(copy.state(), sort_keys=True) == json.dumps(game.state(), sort_keys=True)
        whole["seconds"].append(took)
        whole["moves"].append(len(moves))
        whole["x_one_load"].append(took / one_load)
    n = counts["positions"]
    return {
        "counts": dict(counts),
        "unreadable_raw_share": round(counts["unreadable_raw"] / n, 4) if n else None,
        "unreadable_repaired_share": round(counts["unreadable_repaired"] / n, 4) if n else None,
        "reasons_raw": dict(reasons_raw),
        "reasons_after_repair": dict(reasons_left),
        "replay": {
            "seconds_p50": round(statistics.median(replay_seconds), 3) if replay_seconds else None,
            "seconds_max": round(max(replay_seconds), 3) if replay_seconds else None,
            "moves_p50": statistics.median(moves_at) if moves_at else None,
            "x_one_load_p50": round(statistics.median(replay_ratio), 1) if replay_ratio else None,
        },
        "whole_game_replay": {
            "games": len(whole["seconds"]),
            "identical": whole["identical"],
            "moves_p50": statistics.median(whole["moves"]),
            "seconds_p50": round(statistics.median(whole["seconds"]), 3),
            "seconds_max": round(max(whole["seconds"]), 3),
            "ms_per_move_p50": round(1000 * statistics.median(s / m for s, m in zip(whole["seconds"], whole["moves"])), 2),
            "x_one_load_p50": round(statistics.median(whole["x_one_load"]), 1),
        },
        "ai_choices_not_listed_share": round(counts["ai_choices_not_listed"] / max(1, counts["ai_decisions"]), 4),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=12)
    ap.add_argument("--every", type=int, default=5, help="also check every N-th plain priority decision")
    ap.add_argument("--out", default=str(RESULTS / "readback.json"))
    args = ap.parse_args()
    t = time.time()
    result = run(args.games, args.every)
    out = {
        "bench": "readback",
        "command": command("readback"),
        "when": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": fixtures.game_machine(),
        "games": args.games,
        "seconds": round(time.time() - t, 1),
        **result,
    }
    write_result(out, Path(args.out))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
