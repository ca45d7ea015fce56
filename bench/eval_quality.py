"""Leaf quality: how well does what the search scores a position with predict who wins the game?

    python -m bench.eval_quality [--games 24] [--level Medium] [--procs 2]

The search's value of a simulation is the engine's evaluation (squashed by ``EVAL_SCALE``) at the
end of a rollout played by a cheap engine AI. This bench plays whole games between two copies of
the engine AI at ``--level`` (the four real sample decks, every ordered pair, fixed seeds), takes
the position at the start of each turn, and scores it from the active player's side these ways:

- ``static``: ``win_probability(evaluate)`` of the position itself;
- ``static_fit``: the same with the scale fitted to these games by maximum likelihood;
- ``learned``: the learned value model (``gameplay.core.learning.value``, trained on other self-play games by
  ``manage.py models train game_value``) on the position itself; skipped, like the ``*_learned`` rollouts,
  when there is no model;
- ``rollout``: one rollout of two turns (the search's horizon) by its rollout policy (Easy), on a
  determinization of what the active player can see, then ``win_probability`` (or 1/0 if it ends);
- ``rollout_1``: the same, cut at the end of the current turn;
- ``rollout_rescued``: the two-turn rollout with ``SearchConfig.rescue_policy`` (a seat whose Easy
  AI passes with a land in hand on its own main phase is handed to Medium);
- ``rollout_learned`` / ``rollout_1_learned``: the two-turn / one-turn rollout with the cut position
  scored by the learned model instead of the engine's evaluation (``SearchConfig.leaf="learned"``).

For each: log-loss and Brier score against the game's real winner (lower is better), accuracy of
the favourite, and the CPU each estimate costs. The rollouts of a position start from the same
determinization and engine seed, so their differences are the horizon's and the policy's, measured
in one process.
Writes bench/results/eval_quality.json and .svg (``--replot`` redraws the SVG from the JSON);
``--rows FILE`` also keeps every scored position (JSON lines: decks, seed, turn, each way's estimate).
"""
from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import math
import os
import random
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
from bench.harness import games as fixtures
from bench.harness.paths import RESULTS, command
from bench.harness.report import write_result

ROLLOUTS = {"rollout": {"horizon": 2}, "rollout_1": {"horizon": 1}, "rollout_rescued": {"horizon": 2, "rescue_policy": "Medium"},
            "rollout_learned": {"horizon": 2, "leaf": "learned"}, "rollout_1_learned": {"horizon": 1, "leaf": "learned"}}
EPS = 0.02  # probabilities are clipped to [EPS, 1 - EPS] for the log-loss (a rollout may end the game)


def log_loss(pairs) -> float:
    total = 0.0
    for p, y in pairs:
        p = min(1 - EPS, max(EPS, p))
        total -= math.log(p) if y else math.log(1 - p)
    return total / max(1, len(pairs))


def brier(pairs) -> float:
    return sum((p - y) ** 2 for p, y in pairs) / max(1, len(pairs))


def accuracy(pairs) -> float:
    decided = [(p, y) for p, y in pairs if p != 0.5]
    return sum((p > 0.5) == bool(y) for p, y in decided) / max(1, len(decided))


def fit_scale(values_and_wins, grid=None) -> float:
    """The logistic scale that maximises the likelihood of the winners given the raw evaluations."""
    from gameplay.core.search.evaluation import win_probability

    grid = grid or [x / 2 for x in range(2, 121)]
    return min(grid, key=lambda s: log_loss([(win_probability(v, s), y) for v, y in values_and_wins]))


def learned_model():
    """The learned leaf's model, or None when there is none to measure (the learned ways are skipped)."""
    from gameplay.core.learning.weights import shipped_models
    from gameplay.core.learning.value import ValueModelError

    try:
        return shipped_models().leaf_model()  # the shipped file (or MTG_GAME_VALUE_WEIGHTS): the bench names its model
    except ValueModelError:
        return None


def play_one(job: dict) -> list[dict]:
    """One engine-vs-engine game; every turn start scored every way (runs in a worker)."""
    from gameplay.core.engine.honest import honest_ai_action
    from gameplay.core.search.base import Search, SearchConfig
    from gameplay.core.search.evaluation import SearchModels, win_probability

    model = learned_model()

    decks = fixtures.load_sample_decks()
    eng = fixtures.engine()
    game = eng.new_game(fixtures.deck_list(decks, job["decks"][0]), fixtures.deck_list(decks, job["decks"][1]), seed=job["seed"])
    rng = random.Random(job["seed"])
    ai_rng = random.Random(job["seed"] + 1)  # the honest copies the engine's AIs decide on
    rows, seen_turns = [], set()
    decisions = 0
    while not game.is_over() and decisions < 3000:
        seat = game.seat_to_act()
        if seat is None:
            break
        if game.turn not in seen_turns and game.turn >= 2 and game.prompt().get("type") == "Priority":
            seen_turns.add(game.turn)
            me = game.active_player()
            row = {"turn": game.turn, "seat": me, "static_value": game.evaluate(me), "decks": job["decks"],
                   "seed": job["seed"]}
            det_seed = rng.randrange(2 ** 31)
            c = time.process_time()
            state = game.state()  # one snapshot; each search re-deals its own copy of it
            row["state_cpu"] = time.process_time() - c
            if model is not None:
                c = time.process_time()
                row["learned"] = model.win_probability(state, me, row["static_value"], game.evaluate(1 - me))
                row["learned_cpu"] = time.process_time() - c + row["state_cpu"]  # the leaf needs the state too
            for name, cfg in ROLLOUTS.items():
                if cfg.get("leaf") == "learned" and model is None:
                    continue
                search = Search(game, me, config=SearchConfig(prior_level=None, **cfg), seed=det_seed, actions=[],
                                state=state, models=SearchModels(leaf_model=lambda: model))
                c = time.process_time()
                try:
                    copy = search.load(0)  # the same determinization and engine seed for every rollout
                    row[name] = search.rollout(copy)
                except Exception as exc:  # noqa: BLE001 - an engine error costs this estimate only
                    row[name] = None
                    row[f"{name}_error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
                row[f"{name}_cpu"] = time.process_time() - c
                if name == "rollout_rescued":
                    row["rescued_seats"] = len(search._rescued)
            c = time.process_time()
            win_probability(game.evaluate(me))
            row["static_cpu"] = time.process_time() - c
            rows.append(row)
        action = honest_ai_action(game, seat, job["level"], ai_rng) or game.legal_actions(seat)[0]
        game.apply(seat, action)
        decisions += 1
    winner = (game.result() or {}).get("winner")
    for row in rows:
        row["won"] = None if winner is None else int(winner == row["seat"])
    return rows


def score(rows: list[dict]) -> dict:
    from gameplay.core.search.evaluation import EVAL_SCALE, win_probability

    rows = [r for r in rows if r["won"] is not None]
    scale = fit_scale([(r["static_value"], r["won"]) for r in rows])
    ways = {
        "static": [(win_probability(r["static_value"]), r["won"]) for r in rows],
        "static_fit": [(win_probability(r["static_value"], scale), r["won"]) for r in rows],
        "learned": [(r["learned"], r["won"]) for r in rows if r.get("learned") is not None],
        **{name: [(r[name], r["won"]) for r in rows if r.get(name) is not None] for name in ROLLOUTS},
    }
    ways = {name: pairs for name, pairs in ways.items() if pairs}  # no model: no learned ways
    cpu = {"static": "static_cpu", "static_fit": "static_cpu", "learned": "learned_cpu",
           **{name: f"{name}_cpu" for name in ROLLOUTS}}
    out = {"positions": len(rows), "eval_scale": EVAL_SCALE, "fitted_scale": scale, "by_way": {}}
    for name, pairs in ways.items():
        costs = [r[cpu[name]] for r in rows if r.get(cpu[name]) is not None]
        out["by_way"][name] = {"n": len(pairs), "log_loss": round(log_loss(pairs), 4), "brier": round(brier(pairs), 4),
                               "accuracy": round(accuracy(pairs), 4),
                               "cpu_ms": round(1000 * sum(costs) / max(1, len(costs)), 2)}
    # the same positions split by game phase: a leaf early in a game says less than a late one
    def estimate(r, name):
        return win_probability(r["static_value"]) if name == "static" else r.get(name)

    out["by_turns"] = {}
    for label, lo, hi in (("turns 2-5", 2, 5), ("turns 6-9", 6, 9), ("turns 10+", 10, 999)):
        part = [r for r in rows if lo <= r["turn"] <= hi]
        entry = {"positions": len(part)}
        for name in (n for n in ("static", "learned", *ROLLOUTS) if n in ways):
            entry[name] = round(brier([(estimate(r, name), r["won"]) for r in part if estimate(r, name) is not None]), 4)
        out["by_turns"][label] = entry
    rescued = [r for r in rows if r.get("rescued_seats")]
    out["rescued_positions"] = len(rescued)
    by = out["by_way"]
    out["ratios"] = {f"{name}_over_rollout": {"brier": round(by[name]["brier"] / by["rollout"]["brier"], 4),
                                              "cpu": round(by[name]["cpu_ms"] / by["rollout"]["cpu_ms"], 4)}
                     for name in ("static", "learned", "rollout_1", "rollout_rescued", "rollout_learned", "rollout_1_learned")
                     if name in by}
    return out


def svg(result: dict) -> str:
    """Brier score of each way, overall and by stage of the game (lower is better), and its CPU."""
    from common.figures import figure_bytes, new_figure as _new_figure

    palette = {"static": "#999999", "learned": "#e7298a", "rollout_1": "#7570b3", "rollout": "#1b9e77",
               "rollout_rescued": "#d95f02", "rollout_1_learned": "#a6761d", "rollout_learned": "#66a61e"}
    ways = [w for w in palette if w in result["by_way"]]
    colours = [palette[w] for w in ways]
    stages = list(result["by_turns"])
    fig = _new_figure(figsize=(9, 4), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / len(ways)
    groups = ["all"] + stages
    for i, (way, colour) in enumerate(zip(ways, colours)):
        values = [result["by_way"][way]["brier"]] + [result["by_turns"][s][way] for s in stages]
        xs = [g + (i - (len(ways) - 1) / 2) * width for g in range(len(groups))]
        ms = result["by_way"][way]["cpu_ms"]
        ax.bar(xs, values, width=width, color=colour, label=f"{way} ({ms:.0f} ms)" if ms >= 1 else f"{way} (free)")
    ax.axhline(0.25, color="#999999", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(groups)), [f"{g}\n({result['positions'] if g == 'all' else result['by_turns'][g]['positions']} positions)"
                                       for g in groups])
    ax.set_ylim(0, 0.3)
    ax.set_ylabel("Brier score against the winner (lower is better)")
    ax.set_title(f"Leaf estimates against the winner, {result['games']} {result['level']} self-play games (dashed: a coin)",
                 fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.16, top=0.9)
    return figure_bytes(fig, "svg").decode()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=24)
    ap.add_argument("--level", default="Medium", help="the engine AI that plays both seats of the games")
    ap.add_argument("--seed", type=int, default=5000)
    ap.add_argument("--procs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--output", default=str(RESULTS / "eval_quality.json"))
    ap.add_argument("--replot", action="store_true", help="only redraw the SVG from the JSON in --output")
    ap.add_argument("--rows", help="also write every scored position to this JSON-lines file")
    args = ap.parse_args()
    output = Path(args.output)
    if args.replot:
        output.with_suffix(".svg").write_text(svg(json.loads(output.read_text(encoding="utf-8"))), encoding="utf-8")
        return 0
    from gameplay.core.engine.adapter import DIFFICULTIES

    if args.level not in DIFFICULTIES:
        ap.error(f"--level must be one of {', '.join(DIFFICULTIES)}")
    fixtures.engine()  # build the card data once, before the workers start
    pairs = list(itertools.permutations(sorted(fixtures.load_sample_decks()), 2))
    jobs = [{"decks": list(pairs[i % len(pairs)]), "seed": args.seed + i, "level": args.level}
            for i in range(args.games)]
    start = time.perf_counter()
    rows = []
    with ProcessPoolExecutor(max_workers=max(1, args.procs)) as pool:
        for i, part in enumerate(pool.map(play_one, jobs), 1):
            rows.extend(part)
            print(f"[{i}/{len(jobs)}] {len(part)} positions", flush=True)
    result = {"benchmark": "eval_quality", "date": dt.datetime.now().isoformat(timespec="seconds"),
              "command": command("eval_quality"), "machine": fixtures.game_machine(),
              "games": args.games, "level": args.level, **score(rows),
              "run_seconds": round(time.perf_counter() - start, 1)}
    if args.rows:
        with open(args.rows, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
    write_result(result, output, newline=False, indent=1)
    output.with_suffix(".svg").write_text(svg(result), encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("positions", "fitted_scale", "by_way", "by_turns", "ratios")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
