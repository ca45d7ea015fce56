"""Game speed: engine decisions and rollouts per second per core, advice latency, root-parallel scaling.

    python -m bench.game_speed [--positions 12] [--level vote] [--baseline search:default] [--procs 1 2 4]
        [--scaling-seconds 4] [--parts latency concurrent]

- decisions/s: whole games played by the engine's AI at each level (both seats), decisions per
  CPU-second of one process; and the SearchPlayer at --level, its own decisions per CPU-second.
- rollouts/s: from the sample positions, one simulation = load a determinized copy, apply one root
  action, play on with the rollout policy to the horizon (1 and 2 turns) and evaluate; per CPU-second.
- advice latency: ``advisor.advise`` at --level (default: the advisor's default level, the ``vote``) on the
  sample positions (mid-game decisions worth searching: main-phase plays, attacks, blocks), wall-clock p50/p95,
  plus forced decisions; beside it --baseline (``search:default``, the advisor's default before the ensemble)
  on the same positions, alternating, with the ratios; for a vote level the copies asked, splits, searches,
  fallbacks and the engine calls cut off at its 1.5 s cap; the load average as it ran (a shared machine).
- concurrent advice: two games advised at the same time, as two games' advice tasks run on the site (two
  processes, each ``advisor.advise`` at --level over every sample position, one in order and one in reverse,
  started together): wall-clock p50/p95/max of every piece of advice, the copies counted, the calls cut off at
  the engine's cap; the advisor's promise is p95 <= 3 s with a second game's advice running.
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


PARTS = ["copy", "engine", "rollouts", "latency", "concurrent", "scaling"]
CONCURRENT_P95_TARGET = 3.0  # seconds: advice p95 with a second game's advice running (issue 34)


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


def _advice_once(eng, p, level: str, seed: int) -> dict:
    """One piece of advice at ``level`` (advisor.advise) on a sample position: wall, CPU, what it did."""
    from gameplay.core.search.advisor import advise

    game = eng.load(p["state"])
    progress = []
    t, c = time.perf_counter(), time.process_time()
    rec = advise(game, p["seat"], level, seed=seed, on_progress=lambda r: progress.append(time.perf_counter()))
    out = {"wall": time.perf_counter() - t, "cpu": time.process_time() - c, "simulations": rec.simulations,
           "first": progress[0] - t if progress else None, "label": rec.action.label}
    vote = rec.stats.get("vote")
    if vote is not None:
        out.update(copies=vote["copies"], split=vote["split"], searched=vote["searched"], cut_off=vote["cut_off"],
                   out_of_time=vote["out_of_time"], fallback=vote["fallback"], engine_seconds=vote["engine_seconds"])
    return out


def _latency_summary(level: str, runs: list[dict], forced: list[float]) -> dict:
    from gameplay.core.search.advisor import LEVELS, VOTE_LEVELS, resolve_level

    walls = [r["wall"] for r in runs]
    first = [r["first"] for r in runs if r["first"] is not None]
    kind, name = resolve_level(level)
    out = {"level": level, "positions": len(runs),
           "p50_seconds": round(pct(walls, 50), 2), "p95_seconds": round(pct(walls, 95), 2),
           "max_seconds": round(max(walls), 2), "cpu_p50_seconds": round(pct([r["cpu"] for r in runs], 50), 2),
           "simulations_p50": pct([r["simulations"] for r in runs], 50),
           "first_progress_p50_seconds": round(pct(first, 50), 2) if first else None,
           "forced_decisions": len(forced), "forced_p50_ms": round(1000 * pct(forced, 50), 1) if forced else None,
           "forced_p95_ms": round(1000 * pct(forced, 95), 1) if forced else None,
           "walls": [round(w, 2) for w in walls]}
    if kind == "search":
        out["budget"] = LEVELS[name]["budget"].to_dict()
    else:
        cfg = VOTE_LEVELS[name].ensemble
        out["ensemble"] = {"engine_level": cfg.level, "copies": cfg.copies, "settle": cfg.settle,
                           "workers": cfg.workers, "seconds": cfg.seconds, "search": VOTE_LEVELS[name].search}
        copies = [r["copies"] for r in runs]
        out.update(copies_p50=pct(copies, 50), copies_min=min(copies), copies_max=max(copies),
                   copies_total=sum(copies), split=sum(r["split"] for r in runs),
                   searched=sum(r["searched"] for r in runs),
                   cut_off_calls=sum(r["cut_off"] for r in runs),  # engine calls that hit its 1.5 s cap
                   out_of_time=sum(r["out_of_time"] for r in runs),
                   fallbacks=sum(bool(r["fallback"]) for r in runs))
    return out


def latency(positions, level: str, baseline: str | None = None) -> dict:
    """Advice wall-clock at ``level`` on the sample positions, and at ``baseline`` on the same positions in the
    same run, alternating position by position (a busy spell on the shared machine hits both)."""
    from gameplay.core.engine.honest import honest_ai_action
    from gameplay.core.search.advisor import advise

    eng = fixtures.engine()
    levels = [level] + ([baseline] if baseline and baseline != level else [])
    runs: dict[str, list[dict]] = {lv: [] for lv in levels}
    load = [round(os.getloadavg()[0], 2)]
    for i, p in enumerate(positions):
        for lv in levels:
            r = _advice_once(eng, p, lv, i)
            runs[lv].append(r)
            extra = f", {r['copies']} copies{' split' if r['split'] else ''}, {r['cut_off']} cut off" \
                if "copies" in r else ""
            print(f"  advice {i + 1:>2} {lv:<15} {r['wall']:.2f}s wall, {r['simulations']} sims{extra}, "
                  f"{r['label']!r}", flush=True)
        load.append(round(os.getloadavg()[0], 2))
    # forced decisions: the advisor answers them without searching
    forced = {lv: [] for lv in levels}
    game = eng.load(positions[0]["state"])
    rng = random.Random(0)
    for _ in range(150):
        if game.is_over():
            break
        seat = game.seat_to_act()
        actions = game.legal_actions(seat)
        if len(actions) == 1:
            for lv in levels:
                t = time.perf_counter()
                advise(game, seat, lv)
                forced[lv].append(time.perf_counter() - t)
        game.apply(seat, honest_ai_action(game, seat, "VeryEasy", rng) or actions[0])
    out = _latency_summary(level, runs[level], forced[level])
    if len(levels) > 1:
        base = _latency_summary(baseline, runs[baseline], forced[baseline])
        out["baseline"] = base
        out["p50_ratio_to_baseline"] = round(out["p50_seconds"] / base["p50_seconds"], 3)
        out["p95_ratio_to_baseline"] = round(out["p95_seconds"] / base["p95_seconds"], 3)
        out["same_action_as_baseline"] = sum(a["label"] == b["label"] for a, b in zip(runs[level], runs[baseline]))
    out["load_average_1min"] = load
    out["cores"] = os.cpu_count()
    return out


def _advise_all(positions, level: str, reverse: bool, barrier) -> list[dict]:
    """One game's advisor in its own process: every sample position in turn (reversed for the second game), after
    both processes are ready."""
    eng = fixtures.engine()
    order = list(range(len(positions)))[::-1 if reverse else 1]
    barrier.wait()
    return [{**_advice_once(eng, positions[i], level, 1000 * reverse + i), "position": i, "game": int(reverse)}
            for i in order]


def concurrent_latency(positions, level: str) -> dict:
    """Advice latency at ``level`` with two games advising at once (two processes, like two Celery workers or
    two threads of the embedded stack's server, each advising its game), over every sample position each."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")  # the engine is native code: no fork after it is loaded
    load = [round(os.getloadavg()[0], 2)]
    with context.Manager() as manager, ProcessPoolExecutor(2, mp_context=context) as pool:
        barrier = manager.Barrier(2)
        started = time.perf_counter()
        futures = [pool.submit(_advise_all, positions, level, reverse, barrier) for reverse in (False, True)]
        runs = [r for f in futures for r in f.result()]
        wall = time.perf_counter() - started
    load.append(round(os.getloadavg()[0], 2))
    for r in runs:
        print(f"  concurrent advice game {r['game']} position {r['position'] + 1:>2}: {r['wall']:.2f}s wall"
              + (f", {r['copies']} copies, {r['cut_off']} cut off" if "copies" in r else ""), flush=True)
    out = _latency_summary(level, runs, [])
    for key in ("forced_decisions", "forced_p50_ms", "forced_p95_ms", "first_progress_p50_seconds"):
        out.pop(key, None)
    out.update(games=2, pieces_of_advice=len(runs), wall_seconds=round(wall, 1), target_p95_seconds=CONCURRENT_P95_TARGET,
               meets_target=out["p95_seconds"] <= CONCURRENT_P95_TARGET, load_average_1min=load, cores=os.cpu_count())
    return out


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
    parser.add_argument("--level", default=None, help="the advisor level whose latency is measured "
                        "(default: the advisor's default level); also the SearchPlayer's level for --player-games")
    parser.add_argument("--baseline", default="search:default",
                        help="the level measured beside it on the same positions ('none': no baseline)")
    parser.add_argument("--procs", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--scaling-seconds", type=float, default=4.0)
    parser.add_argument("--engine-games", type=int, default=2, help="games per engine level for decisions/s")
    parser.add_argument("--player-games", type=int, default=0, help="whole SearchPlayer games for its decisions/s")
    parser.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS,
                        help="what to measure (a partial run updates only those parts of the output)")
    parser.add_argument("--output", default=str(RESULTS / "game_speed.json"))
    args = parser.parse_args()
    from gameplay.core.search.advisor import DEFAULT_LEVEL, resolve_level

    args.level = args.level or DEFAULT_LEVEL
    baseline = None if args.baseline == "none" else args.baseline
    for lv in (args.level, baseline):
        if lv is not None:
            resolve_level(lv)  # an unknown level fails here, not after the sample positions
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
        report["advice_latency"] = latency(positions, args.level, baseline)
        lat = report["advice_latency"]
        print(f"advice latency ({args.level}): p50 {lat['p50_seconds']}s, p95 {lat['p95_seconds']}s; "
              f"forced p50 {lat['forced_p50_ms']} ms", flush=True)
        if "baseline" in lat:
            b = lat["baseline"]
            print(f"baseline ({baseline}): p50 {b['p50_seconds']}s, p95 {b['p95_seconds']}s; ratio p50 "
                  f"{lat['p50_ratio_to_baseline']}, p95 {lat['p95_ratio_to_baseline']}", flush=True)
    if "concurrent" in args.parts:
        report["concurrent_advice"] = concurrent_latency(positions, args.level)
        con = report["concurrent_advice"]
        print(f"advice latency ({args.level}), two games at once: p50 {con['p50_seconds']}s, p95 {con['p95_seconds']}s, "
              f"max {con['max_seconds']}s (target p95 <= {CONCURRENT_P95_TARGET}s: "
              f"{'met' if con['meets_target'] else 'missed'})", flush=True)
    if "scaling" in args.parts:
        load_before = os.getloadavg()[0]
        report["scaling"] = scaling(positions[: max(2, len(positions) // 3)], args.procs, args.scaling_seconds)
        report["scaling"]["load_average_1min"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    if args.player_games:
        kind, name = resolve_level(args.level)
        report["search_player"] = search_player_rate(args.player_games, name if kind == "search" else "default")
    report["run_seconds"] = round(time.time() - started, 1)
    write_result(report, out, newline=False, indent=1)
    print(f"wrote {out} in {report['run_seconds']}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
