"""Game review quality and cost: how often the review marks a mistake, and what a judged decision costs.

    python -m bench.game_review [--games 3] [--pass-games 1] [--pass-turns 8] [--max-decisions 40] [--no-baseline]

- **VeryHard's own games**: honest VeryHard in both seats (``EnginePlayer("VeryHard")``: each decision on an
  honest copy) plays the sample decks' pairings (fixed seeds); the review of seat 0 judges its decisions. A good
  player's moves should rarely be marked: the share of reviewed decisions marked a mistake, per judge.
- **A player who passes every decision** (never plays a land) for ``--pass-turns`` turns against VeryEasy: every
  skipped land drop (a pass in its own main phase with a land playable and nothing on the stack) should be
  marked; the share marked, per judge.
- The cost: wall-clock seconds per judged decision (median, p90) and of the whole review.

Each game is reviewed by the ensemble judge (the default ``ReviewSettings``) and, as the baseline in the same
process, by the old judge (``judge="search"``: the advisor's flat search, 2 simulations per candidate move).
Writes bench/results/game_review.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
from bench.harness import games as fixtures  # noqa: E402
from bench.harness.paths import RESULTS, command  # noqa: E402
from bench.harness.report import write_result  # noqa: E402

PAIRINGS = [("mono_red_aggro", "dimir_terror"), ("mono_blue_faeries", "mono_white_weenie"),
            ("dimir_terror", "mono_blue_faeries"), ("mono_white_weenie", "mono_red_aggro")]


def play_pass_game(engine, decks, *, seed: int, turns: int) -> list[list]:
    """Seat 0 passes every decision (``PassPlayer``), seat 1 is VeryEasy, until turn ``turns`` is over (or the
    game is)."""
    from gameplay.core.matches.players import EnginePlayer, PassPlayer

    game = engine.new_game(*decks, seed=seed, first_player=0)
    players = (PassPlayer(), EnginePlayer("VeryEasy", seed=seed))
    moves = []
    while not game.is_over() and game.turn <= turns:
        seat = game.seat_to_act()
        if seat is None:
            break
        action = game.apply_or_next(seat, players[seat].choose(game, seat))
        moves.append([seat, action.key])
    return moves


def review(engine, decks, moves, *, seed: int, judge: str, max_decisions: int) -> dict:
    from gameplay.core.matches.decision_review import ReviewSettings, review_game

    settings = ReviewSettings(judge=judge, max_decisions=max_decisions)
    started = time.perf_counter()
    cpu = time.process_time()
    out = review_game(engine, decks, moves, seed=seed, first_player=0, seat=0, settings=settings)
    out["wall"] = time.perf_counter() - started
    out["cpu"] = time.process_time() - cpu
    return out


def summary(out: dict) -> dict:
    per = [d["seconds"] for d in out["decisions"] if d.get("seconds") is not None]
    return {"reviewed": out["reviewed"], "mistakes": out["mistakes"],
            "mistake_share": round(out["mistakes"] / max(1, out["reviewed"]), 4),
            "review_seconds": round(out["wall"], 1), "review_cpu_seconds": round(out["cpu"], 1),
            "decision_seconds_median": round(statistics.median(per), 2) if per else None,
            "decision_seconds_p90": round(sorted(per)[int(0.9 * (len(per) - 1))], 2) if per else None,
            "wall_per_reviewed_decision": round(out["wall"] / max(1, out["reviewed"]), 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=3, help="VeryHard self-play games reviewed")
    ap.add_argument("--pass-games", type=int, default=1, help="pass-everything games reviewed")
    ap.add_argument("--pass-turns", type=int, default=8)
    ap.add_argument("--max-decisions", type=int, default=40)
    ap.add_argument("--no-baseline", action="store_true", help="skip the old judge")
    args = ap.parse_args(argv)

    from gameplay.core.matches.decision_review import skipped_land_drops
    from gameplay.core.matches.players import EnginePlayer, play_game

    engine = fixtures.engine()
    decks = fixtures.load_sample_decks()
    judges = ["ensemble"] + ([] if args.no_baseline else ["search"])
    rows = []
    for i in range(args.games):
        a, b = PAIRINGS[i % len(PAIRINGS)]
        seed = 100 + i
        pair = (fixtures.deck_list(decks, a), fixtures.deck_list(decks, b))
        game = engine.new_game(*pair, seed=seed, first_player=0)
        moves = []
        started = time.perf_counter()
        result = play_game(game, (EnginePlayer("VeryHard", seed=seed), EnginePlayer("VeryHard", seed=seed + 1)),
                           on_decision=lambda g, s, act: moves.append([s, act.key]))
        row = {"kind": "VeryHard self-play", "decks": f"{a} vs {b}", "seed": seed, "turns": result["turns"],
               "moves": len(moves), "play_seconds": round(time.perf_counter() - started, 1)}
        for judge in judges:
            out = review(engine, pair, moves, seed=seed, judge=judge, max_decisions=args.max_decisions)
            row[judge] = summary(out)
            if judge == "ensemble":
                row["marked"] = [{"turn": d["turn"], "phase": d["phase"], "played": d["played"], "best": d["best"],
                                  "played_share": d["played_share"], "best_share": d["best_share"]}
                                 for d in out["decisions"] if d["mistake"]]
        rows.append(row)
        print(row, flush=True)
        save(rows, judges)
    for i in range(args.pass_games):
        a, b = PAIRINGS[i % len(PAIRINGS)]
        seed = 27 + i
        pair = (fixtures.deck_list(decks, a), fixtures.deck_list(decks, b))
        moves = play_pass_game(engine, pair, seed=seed, turns=args.pass_turns)
        skipped = skipped_land_drops(engine, pair, moves, seed=seed, first_player=0, seat=0)
        row = {"kind": "pass every decision", "decks": f"{a} vs {b}", "seed": seed, "turns": args.pass_turns,
               "moves": len(moves), "skipped_land_drops": len(skipped)}
        for judge in judges:
            out = review(engine, pair, moves, seed=seed, judge=judge, max_decisions=args.max_decisions)
            marked = {d["move"] for d in out["decisions"] if d["mistake"]}
            row[judge] = {**summary(out), "land_drops_marked": sum(1 for m in skipped if m in marked)}
        rows.append(row)
        print(row, flush=True)
        save(rows, judges)
    return 0


def save(rows: list[dict], judges: list[str]) -> None:
    """The totals so far and every game, written after each game (a run cut short keeps what it measured)."""

    def total(kind: str, judge: str) -> dict:
        mine = [r[judge] for r in rows if r["kind"] == kind and judge in r]
        reviewed = sum(m["reviewed"] for m in mine)
        mistakes = sum(m["mistakes"] for m in mine)
        return {"games": len(mine), "reviewed": reviewed, "mistakes": mistakes,
                "mistake_share": round(mistakes / max(1, reviewed), 4),
                "seconds_per_reviewed_decision": round(sum(m["review_seconds"] for m in mine) / max(1, reviewed), 2)}

    totals = {f"{kind} / {judge}": total(kind, judge) for kind in ("VeryHard self-play", "pass every decision")
              for judge in judges}
    for key, t in totals.items():
        print(key, t, flush=True)
    doc = {"bench": "game_review", "command": command("game_review"),
           "date": dt.datetime.now(dt.timezone.utc).isoformat(), "machine": fixtures.game_machine(),
           "totals": totals, "games": rows}
    write_result(doc, RESULTS / "game_review.json")


if __name__ == "__main__":
    raise SystemExit(main())
