"""The policy/value network on held-out self-play: does it predict VeryHard's choices and the winner?

    python -m bench.game_policy --weights FILE --heldout FILE [--strength N] [--procs 2]

``--heldout`` holds decision records of self-play games never trained on (``manage.py models train
game_policy_net`` with the parameter ``records``, or ``--games`` here to play them: seeds 31000 + i, both seats VeryHard, the four sample decks,
every ordered pair in turn). For every real decision (more than one distinct action) of those games:

- **move prediction**: the network's most likely action against VeryHard's choice (top-1 and top-2), beside a
  trivial baseline: the first offered action of the kind VeryHard chose most often in the training games;
- **value**: the Brier score of P(the deciding seat wins) against the game's winner, beside 0.5, the engine's
  evaluation squashed as the search does (``value.win_probability``) and the current 36-feature value model
  (``ml/weights/game_value.safetensors``) on the same positions.

``--strength N`` adds a small strength comparison on the same seeds (5000 + i, the ordered deck pairs in turn,
seat 0 ours, seat 1 the engine's VeryHard): ``search:default`` with the network, the same level without it,
the network alone (``net``) and VeryHard itself in seat 0 (the paired baseline). Small samples: counts, not
verdicts. Writes bench/results/game_policy.json and prints a short table.
"""
from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
from bench.harness import games as fixtures
from bench.harness.paths import RESULTS, command
from bench.harness.report import write_result

PLAYERS = ("search:default+net", "search:default", "net", "engine:VeryHard")


def read(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def play_records(games: int, seed: int, procs: int) -> list[dict]:
    from gameplay.core.matches import selfplay

    decks = fixtures.load_sample_decks()
    pairs = list(itertools.permutations(sorted(decks), 2))
    jobs = [{"index": i, "names": list(pairs[i % len(pairs)]), "levels": ["VeryHard", "VeryHard"], "seed": seed + i,
             "deck0": fixtures.deck_list(decks, pairs[i % len(pairs)][0]), "deck1": fixtures.deck_list(decks, pairs[i % len(pairs)][1])}
            for i in range(games)]
    out = []
    with ProcessPoolExecutor(procs, initializer=selfplay.pool_init, initargs=(str(fixtures.card_data_path()),)) as pool:
        for _, records, error in pool.map(selfplay.pool_decisions, jobs):
            out += records
            if error:
                print("a game failed:", error, file=sys.stderr)
    return out


def by_kind(evaluator, records: list[dict]) -> dict:
    """Top-1 accuracy per kind of VeryHard's choice (how many decisions of each)."""
    from gameplay.core.learning import network as policy

    out = {}
    for kind in sorted({r["actions"][r["choice"]]["type"] for r in records if r.get("choice") is not None}):
        part = [r for r in records if r.get("choice") is not None and r["actions"][r["choice"]]["type"] == kind]
        s = policy.score(evaluator, part)
        out[kind] = {"decisions": s["labelled"], "net_accuracy": s["net_accuracy"],
                     "baseline_accuracy": s["baseline_accuracy"]}
    return out


def strength_game(job: dict) -> dict:
    from gameplay.core.learning import network as policy
    from gameplay.core.matches.players import EnginePlayer, NetPlayer, SearchPlayer, play_game

    engine = fixtures.engine()
    evaluator = policy.evaluator_at(job["weights"])
    name = job["player"]
    if name == "net":
        ours = NetPlayer(evaluator)
    elif name.startswith("search:"):
        ours = SearchPlayer("default", seed=job["seed"], evaluator=evaluator if name.endswith("+net") else None)
    else:
        ours = EnginePlayer("VeryHard", seed=job["seed"])
    game = engine.new_game(job["deck0"], job["deck1"], seed=job["seed"])
    cpu = time.process_time()
    result = play_game(game, (ours, EnginePlayer("VeryHard", seed=job["seed"] + 1)))
    return {"player": name, "seed": job["seed"], "decks": job["names"], "winner": result["winner"],
            "turns": result["turns"], "cpu_seconds": round(time.process_time() - cpu, 1)}


def strength(weights: str, games: int, procs: int) -> dict:
    decks = fixtures.load_sample_decks()
    pairs = list(itertools.permutations(sorted(decks), 2))
    jobs = [{"player": p, "seed": 5000 + i, "names": list(pairs[i % len(pairs)]), "weights": weights,
             "deck0": fixtures.deck_list(decks, pairs[i % len(pairs)][0]), "deck1": fixtures.deck_list(decks, pairs[i % len(pairs)][1])}
            for i in range(games) for p in PLAYERS]
    with ProcessPoolExecutor(procs) as pool:
        results = list(pool.map(strength_game, jobs))
    out = {"games_per_player": games, "opponent": "engine:VeryHard (seat 1)", "seeds": f"5000..{5000 + games - 1}",
           "players": {}}
    won = {(r["player"], r["seed"]): r["winner"] == 0 for r in results}
    for p in PLAYERS:
        mine = [r for r in results if r["player"] == p]
        out["players"][p] = {"wins": sum(r["winner"] == 0 for r in mine), "games": len(mine),
                             "draws_or_cut": sum(r["winner"] is None for r in mine),
                             "cpu_seconds_per_game": round(sum(r["cpu_seconds"] for r in mine) / max(1, len(mine)), 1)}
    seeds = sorted({r["seed"] for r in results})
    for a, b in (("search:default+net", "search:default"), ("search:default+net", "engine:VeryHard"),
                 ("net", "engine:VeryHard")):
        out[f"{a} vs {b}"] = {"better": sum(won[a, s] and not won[b, s] for s in seeds),
                              "worse": sum(won[b, s] and not won[a, s] for s in seeds)}
    out["games"] = results
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", required=True, help="the network (safetensors, game-policy-net-v1)")
    ap.add_argument("--heldout", help="held-out decision records (JSON lines); else --games are played")
    ap.add_argument("--games", type=int, default=12, help="held-out games to play when --heldout is not given")
    ap.add_argument("--strength", type=int, default=0, help="games per player for the strength comparison (0: none)")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--out", default=str(RESULTS / "game_policy.json"))
    args = ap.parse_args()

    from gameplay.core.learning import network as policy
    from gameplay.core.learning import value

    evaluator = policy.evaluator_at(args.weights)
    records = read(args.heldout) if args.heldout else play_records(args.games, 31000, args.procs)
    cpu = time.process_time()
    scores = policy.score(evaluator, records, value.ValueModel.load(value.DEFAULT_WEIGHTS))
    scores["net_ms_per_decision"] = round(1000 * (time.process_time() - cpu) / max(1, len(records)), 2)
    info = evaluator.info
    result = {"bench": "game_policy", "command": command("game_policy"), "date": dt.datetime.now(dt.timezone.utc)
              .isoformat(timespec="seconds"), "machine": fixtures.game_machine(),
              "network": {k: info.get(k) for k in ("games", "decisions", "valid_games", "best_epoch", "config", "imitate",
                                                    "seeds", "parameters", "train_cpu_seconds", "epochs")}
              | {"bytes": Path(args.weights).stat().st_size},
              "heldout": {"seeds": sorted({r["seed"] for r in records}), **scores}, "by_kind": by_kind(evaluator, records)}
    if args.strength:
        result["strength"] = strength(str(Path(args.weights).resolve()), args.strength, args.procs)
    write_result(result, Path(args.out), indent=1)
    s = result["heldout"]
    print(f"held-out: {s['games']} games, {s['labelled']} VeryHard decisions ({s['mean_actions']} actions on average)")
    print(f"  move prediction  network {s['net_accuracy']:.3f} (top-2 {s['net_top2']:.3f})  baseline {s['baseline_accuracy']:.3f}")
    print(f"  value Brier      network {s['net_brier']:.4f}  36-feature model {s['value_model_brier']:.4f}  "
          f"engine eval {s['engine_brier']:.4f}  0.5 {s['constant_brier']:.4f}")
    for p, row in (result.get("strength") or {}).get("players", {}).items():
        print(f"  {p:20s} {row['wins']}/{row['games']} against VeryHard, {row['cpu_seconds_per_game']} s CPU a game")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
