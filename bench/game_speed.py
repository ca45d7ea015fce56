"""Game speed: engine decisions and rollouts per second per core, advice latency, root-parallel scaling.

    python -m bench.game_speed [--positions 12] [--level default] [--procs 1 2 4] [--scaling-seconds 4]

- decisions/s: whole games played by the engine's AI at each level (both seats), decisions per
  CPU-second of one process; and the SearchPlayer at --level, its own decisions per CPU-second.
- rollouts/s: from the sample positions, one simulation = load a determinized copy, apply one root
  action, play on with the rollout policy to the horizon (1 and 2 turns) and evaluate; per CPU-second.
- advice latency: ``recommend`` at the level's budget on the sample positions (mid-game decisions
  worth searching: main-phase plays, attacks, blocks), wall-clock p50/p95, plus forced decisions.
- scaling: simulations per second of ``recommend`` with 1, 2, 4 processes (root parallelism) at a
  fixed time budget. This machine has os.cpu_count() cores; more processes than cores cannot scale.

Sample positions come from games between the four real sample decks (fixed seeds), so the run is
reproducible. Writes bench/results/game_speed.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
from bench.harness import games as fixtures
from bench.harness.paths import RESULTS, command
from bench.harness.report import write_result


PARTS = ["copy", "engine", "rollouts", "latency", "scaling"]


def pct(values, q):
    values = sorted(values)
    if not values:
        return None
    i = min(len(values) - 1, max(0, round(q / 100 * (len(values) - 1))))
    return values[i]


def sample_positions(n: int) -> list[dict]:
    """Mid-game decisions worth searching, from Medium-vs-Medium games of the sample decks (honest AIs)."""
    from gameplay.core.engine.honest import honest_ai_action
    from gameplay.core.matches.players import worth_searching
    from gameplay.core.search.pruning import prune_actions

    eng = fixtures.engine()
    decks = fixtures.load_sample_decks()
    pairs = list(itertools.permutations(sorted(decks), 2))
    out = []
    for i in itertools.count():
        if len(out) >= n or i > 4 * n:
            break
        a, b = pairs[i % len(pairs)]
        game = eng.new_game(fixtures.deck_list(decks, a), fixtures.deck_list(decks, b), seed=500 + i)
        rng = random.Random(500 + i)
        target_turn = 3 + i % 6
        taken = False
        for _ in range(3000):
            if game.is_over():
                break
            seat = game.seat_to_act()
            actions = game.legal_actions(seat)
            if (not taken and game.turn >= target_turn and len(actions) > 1 and worth_searching(game, seat)
                    and len(prune_actions(game, actions)) > 1):
                out.append({"state": game.state(), "seat": seat, "turn": game.turn, "decks": [a, b],
                            "prompt": game.prompt().get("type"), "actions": len(actions)})
                taken = True
                break
            game.apply(seat, honest_ai_action(game, seat, "Medium", rng) or actions[0])
    return out


def engine_decisions(levels, games: int) -> dict:
    from gameplay.core.matches.players import EnginePlayer

    eng = fixtures.engine()
    decks = fixtures.load_sample_decks()
    pairs = list(itertools.permutations(sorted(decks), 2))
    out = {}
    for level in levels:
        n, cpu, forced = 0, 0.0, 0
        for i in range(games):
            a, b = pairs[i % len(pairs)]
            game = eng.new_game(fixtures.deck_list(decks, a), fixtures.deck_list(decks, b), seed=700 + i)
            player = EnginePlayer(level)
            c = time.process_time()
            while not game.is_over() and n < 100_000:
                seat = game.seat_to_act()
                if len(game.legal_actions(seat)) == 1:
                    forced += 1
                game.apply(seat, player.choose(game, seat))
                n += 1
            cpu += time.process_time() - c
        out[level] = {"decisions": n, "cpu_seconds": round(cpu, 2), "decisions_per_second": round(n / cpu, 1),
                      "ms_per_decision": round(1000 * cpu / n, 1), "forced_share": round(forced / n, 3)}
        print(f"engine {level:<9} {n / cpu:7.1f} decisions/s ({1000 * cpu / n:.1f} ms each, {forced / n:.0%} forced)",
              flush=True)
    return out


def rollouts(positions, horizons, policy: str, per_position: int) -> dict:
    from gameplay.core.engine.adapter import Game
    from gameplay.core.search.base import Budget, SearchConfig
    from gameplay.core.search.flat import FlatSearch

    eng = fixtures.engine()
    out = {}
    for h in horizons:
        sims, cpu, dropped = 0, 0.0, 0
        for p in positions:
            game = eng.load(p["state"])
            cfg = SearchConfig(prior_level=None, horizon=h, determinizations=per_position, rollout_policy=policy,
                               opponent_policy=policy)
            search = FlatSearch(game, p["seat"], budget=Budget(simulations=per_position), config=cfg)
            c = time.process_time()
            search.run()
            cpu += time.process_time() - c
            sims += search.simulations
            dropped += search.dropped
            assert isinstance(game, Game)
        out[f"horizon_{h}"] = {"simulations": sims, "cpu_seconds": round(cpu, 2),
                               "rollouts_per_second": round(sims / cpu, 2), "dropped": dropped}
        print(f"rollouts horizon {h} ({policy}): {sims / cpu:.2f}/s per core ({cpu / sims * 1000:.0f} ms each)", flush=True)
    return out


def copy_cost(positions) -> dict:
    eng = fixtures.engine()
    state_ms, load_ms = [], []
    for p in positions:
        game = eng.load(p["state"])
        for _ in range(3):
            c = time.process_time()
            st = game.state()
            state_ms.append(1000 * (time.process_time() - c))
            c = time.process_time()
            eng.load(st)
            load_ms.append(1000 * (time.process_time() - c))
    return {"state_ms_p50": round(pct(state_ms, 50), 1), "load_ms_p50": round(pct(load_ms, 50), 1),
            "state_bytes_p50": pct([len(json.dumps(p["state"])) for p in positions], 50)}


def latency(positions, level: str) -> dict:
    from gameplay.core.engine.honest import honest_ai_action
    from gameplay.core.search.advisor import LEVELS, recommend

    eng = fixtures.engine()
    spec = LEVELS[level]
    walls, cpus, sims, first = [], [], [], []
    for i, p in enumerate(positions):
        game = eng.load(p["state"])
        progress = []
        t, c = time.perf_counter(), time.process_time()
        rec = recommend(game, p["seat"], algorithm=spec["algorithm"], budget=spec["budget"], seed=i,
                        workers=1, config=spec["config"], on_progress=lambda r: progress.append(time.perf_counter()))
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
        sims.append(rec.simulations)
        if progress:
            first.append(progress[0] - t)
        print(f"  advice {i + 1:>2}: {walls[-1]:.2f}s wall, {rec.simulations} sims, {rec.action.label!r}", flush=True)
    # forced decisions: the advisor answers them without searching
    forced = []
    game = eng.load(positions[0]["state"])
    rng = random.Random(0)
    for _ in range(150):
        if game.is_over():
            break
        seat = game.seat_to_act()
        actions = game.legal_actions(seat)
        if len(actions) == 1:
            t = time.perf_counter()
            recommend(game, seat, algorithm=spec["algorithm"], budget=spec["budget"])
            forced.append(time.perf_counter() - t)
        game.apply(seat, honest_ai_action(game, seat, "VeryEasy", rng) or actions[0])
    return {"level": level, "budget": spec["budget"].to_dict(), "positions": len(positions),
            "p50_seconds": round(pct(walls, 50), 2), "p95_seconds": round(pct(walls, 95), 2),
            "max_seconds": round(max(walls), 2), "cpu_p50_seconds": round(pct(cpus, 50), 2),
            "simulations_p50": pct(sims, 50), "first_progress_p50_seconds": round(pct(first, 50), 2) if first else None,
            "forced_decisions": len(forced), "forced_p50_ms": round(1000 * pct(forced, 50), 1) if forced else None,
            "forced_p95_ms": round(1000 * pct(forced, 95), 1) if forced else None}


def scaling(positions, procs, seconds: float) -> dict:
    from gameplay.core.search.advisor import recommend
    from gameplay.core.search.parallel import shutdown_pools
    from gameplay.core.search.base import Budget, SearchConfig

    eng = fixtures.engine()
    cfg = SearchConfig(prior_level=None, horizon=1, determinizations=8)
    out = {}
    rates_by_n: dict[int, list[float]] = {}
    for n in list(procs) * 2:  # two rounds, so a busy spell on a shared machine hits every setting
        rates = rates_by_n.setdefault(n, [])
        for i, p in enumerate(positions):
            game = eng.load(p["state"])
            if n > 1 and i == 0:  # start the pool outside the measurement
                recommend(game, p["seat"], budget=Budget(seconds=0.5), workers=n, config=cfg)
            t = time.perf_counter()
            rec = recommend(game, p["seat"], budget=Budget(seconds=seconds), workers=n, config=cfg, seed=i)
            rates.append(rec.simulations / (time.perf_counter() - t))
        shutdown_pools()
        out[str(n)] = {"simulations_per_second": round(statistics.mean(rates), 2), "runs": len(rates)}
        print(f"scaling {n} process(es): {statistics.mean(rates):.2f} simulations/s (mean of {len(rates)})", flush=True)
    base = out[str(procs[0])]["simulations_per_second"]
    out["cores"] = os.cpu_count()
    for n in procs:
        out[str(n)]["speedup"] = round(out[str(n)]["simulations_per_second"] / base, 2) if base else None
    return out


def search_player_rate(games: int, level: str) -> dict:
    """The SearchPlayer's own decisions per CPU-second in whole games against engine Medium."""
    rows = [fixtures.play_one(job) for job in fixtures.jobs_for(f"search:{level}", ["Medium"], games, 900, 3000)[:games]]
    decisions = sum(r["ours_decisions"] for r in rows)
    cpu = sum(r["ours_cpu_seconds"] for r in rows)
    return {"games": games, "decisions": decisions, "cpu_seconds": round(cpu, 1),
            "decisions_per_second": round(decisions / cpu, 2) if cpu else None,
            "game_cpu_seconds": [r["cpu_seconds"] for r in rows]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=12)
    parser.add_argument("--level", default="default")
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--scaling-seconds", type=float, default=4.0)
    parser.add_argument("--engine-games", type=int, default=2, help="games per engine level for decisions/s")
    parser.add_argument("--player-games", type=int, default=0, help="whole SearchPlayer games for its decisions/s")
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS,
                        help="what to measure (a partial run updates only those parts of the output)")
    parser.add_argument("--output", default=str(RESULTS / "game_speed.json"))
    args = parser.parse_args()
    started = time.time()
    fixtures.card_data_path()
    positions = sample_positions(args.positions)
    print(f"{len(positions)} sample positions (turns {sorted(p['turn'] for p in positions)})", flush=True)
    out = Path(args.output)
    this_command = command("game_speed")
    report = {}
    if args.parts != PARTS and out.exists():  # a partial run updates the parts it measures
        report = json.loads(out.read_text(encoding="utf-8"))
        report.setdefault("commands", [report.get("command")])
        report["commands"] = (report["commands"] + [this_command])[-10:]
    report.update({"benchmark": "game_speed", "date": dt.datetime.now().isoformat(timespec="seconds"),
                   "command": this_command, "machine": fixtures.game_machine(),
                   "positions": [{k: p[k] for k in ("turn", "seat", "decks", "prompt", "actions")} for p in positions]})
    if "copy" in args.parts:
        report["copy"] = copy_cost(positions)
        print(f"copy: state() {report['copy']['state_ms_p50']} ms, load {report['copy']['load_ms_p50']} ms", flush=True)
    if "engine" in args.parts and args.engine_games:
        report["engine_decisions"] = engine_decisions(("VeryEasy", "Easy", "Medium", "Hard", "VeryHard"),
                                                      args.engine_games)
    if "rollouts" in args.parts:
        report["rollouts"] = rollouts(positions, (1, 2), "Easy", 3)
    if "latency" in args.parts:
        report["advice_latency"] = latency(positions, args.level)
        lat = report["advice_latency"]
        print(f"advice latency ({args.level}): p50 {lat['p50_seconds']}s, p95 {lat['p95_seconds']}s; "
              f"forced p50 {lat['forced_p50_ms']} ms", flush=True)
    if "scaling" in args.parts:
        load_before = os.getloadavg()[0]
        report["scaling"] = scaling(positions[: max(2, len(positions) // 3)], args.procs, args.scaling_seconds)
        report["scaling"]["load_average_1min"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    if args.player_games:
        report["search_player"] = search_player_rate(args.player_games, args.level)
    report["run_seconds"] = round(time.time() - started, 1)
    write_result(report, out, newline=False, indent=1)
    print(f"wrote {out} in {report['run_seconds']}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
