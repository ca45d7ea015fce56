"""Game strength: the paired yardstick on the deck pool (``--pool``), and the older per-level runs.

The yardstick (``--pool``, writes bench/results/game_strength.json):

    python -m bench.game_strength --pool [--players search:fast search:default] [--pairings close|mirrors|all]
                                  [--seeds 1] [--seed 9000] [--procs 1] [--celery] [--append] [--max-games N]

plays our players against the engine's VeryHard AI on the pool of `python -m bench.game_pool` (its close pairings and
the mirrors), and the engine's own VeryHard AI in our seat on the same jobs (same decks, seats, deal and
opponent): each pair of games is compared (``gameplay.core.matches.yardstick``), the discordant pairs counted with a
two-sided sign test, win rates with 95% Wilson intervals, CPU seconds per game. The baseline's games are played
once and shared by every player. ``--celery`` sends each game to the Celery workers (the task
``gameplay.strength_game``; the services stack's settings and broker), else ``--procs`` local processes.

The per-level runs (writes bench/results/game_strength_levels.json):

    python -m bench.game_strength [--ours search:default] [--opponents random VeryEasy Easy Medium Hard VeryHard]
                                  [--games 20] [--procs 2] [--seed 1000] [--append] [--model-opponent] [--oracle]

Every pairing plays mirrored pairs: the same seed and the same two decks twice, with the players
swapping seats, so neither the deck nor the seat favours anyone (mono-red wins ~71% of decisive
games). The decks are the four real lists whose every card the engine supports
(MTG_DATA_DIR/game/phase_supported_pauper_decks.json); pair i plays the i-th of the 12 ordered deck
pairs (cycled). The engine's card database is built from the real oracle corpus by our own
conversion (gameplay.core.engine.carddata), as the test fixtures do; no database is needed.

A draw or a game cut at --max-decisions counts half. Win rates come with a 95% Wilson interval.
Seconds per game are CPU-seconds of one process (the whole game: both players and the engine).
Games run in --procs processes (spawn); --append adds the new games to the ones already in
bench/results/game_strength_levels.json (same pairing, seed and seat replace the old record), so a long
run can be done a few games at a time. Writes bench/results/game_strength_levels.json and .svg.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from bench.harness.games import card_data_path, game_machine, jobs_for, load_pool, play_one
from bench.harness.paths import RESULTS, command
from bench.harness.report import write_result

os.environ.setdefault("OMP_NUM_THREADS", "1")
OPPONENTS = ("random", "VeryEasy", "Easy", "Medium", "Hard", "VeryHard")
TARGETS = {"Medium": 0.60, "VeryHard": 0.50}


def wilson_interval(wins: float, n: int) -> tuple[float, float]:
    from common.stats import wilson as core_wilson

    return core_wilson(wins, n)[1:]


def summarize(games: list[dict]) -> dict:
    out = {}
    for opponent in OPPONENTS + tuple(sorted({g["opponent"] for g in games} - set(OPPONENTS))):
        rows = [g for g in games if g["opponent"] == opponent]
        if not rows:
            continue
        n = len(rows)
        score = sum(g["score"] for g in rows)
        lo, hi = wilson_interval(score, n)
        wins = sum(g["score"] == 1.0 for g in rows)
        losses = sum(g["score"] == 0.0 for g in rows)
        cpu = sorted(g["cpu_seconds"] for g in rows)
        ours_cpu = sorted(g["ours_cpu_seconds"] for g in rows)
        entry = {"games": n, "wins": wins, "losses": losses, "draws": n - wins - losses,
                 "win_rate": round(score / n, 4), "ci95": [round(lo, 4), round(hi, 4)],
                 "seconds_per_game": round(sum(cpu) / n, 1), "seconds_per_game_max": cpu[-1],
                 "ours_seconds_per_game": round(sum(ours_cpu) / n, 1),
                 "turns_per_game": round(sum(g["turns"] or 0 for g in rows) / n, 1),
                 "decisions_per_game": round(sum(g["decisions"] or 0 for g in rows) / n, 1),
                 "games_over_2_minutes": sum(c > 120 for c in cpu),
                 "errors": sum(bool(g.get("error")) for g in rows)}
        searched = [g["ours_stats"] for g in rows if g.get("ours_stats")]
        if searched:
            entry["searched_decisions_per_game"] = round(sum(s.get("searched", 0) for s in searched) / len(searched), 1)
            entry["changed_from_engine_per_game"] = round(sum(s.get("changed", 0) for s in searched) / len(searched), 1)
            entry["search_seconds_per_game"] = round(sum(s.get("search_seconds", 0) for s in searched) / len(searched), 1)
            entry["dropped_simulations"] = sum(s.get("dropped", 0) for s in searched)
        if opponent in TARGETS:
            entry["target"] = TARGETS[opponent]
            entry["target_met"] = score / n >= TARGETS[opponent]
            entry["target_met_at_95"] = lo >= TARGETS[opponent]
        # mirrored pairs: where the seats and decks decide, a pair splits; only the rest say who plays better
        pairs: dict[tuple, list[float]] = {}
        for g in rows:
            pairs.setdefault((g["seed"], tuple(g["decks"])), []).append(g["score"])
        full = [v for v in pairs.values() if len(v) == 2]
        entry["pairs"] = {"complete": len(full), "won_both": sum(sum(v) == 2 for v in full),
                          "lost_both": sum(sum(v) == 0 for v in full),
                          "split": sum(sum(v) not in (0, 2) for v in full)}
        by_deck = {}
        for g in rows:
            d = g["decks"][g["ours_seat"]]
            s = by_deck.setdefault(d, [0.0, 0])
            s[0] += g["score"]
            s[1] += 1
        entry["ours_by_deck"] = {d: {"games": s[1], "win_rate": round(s[0] / s[1], 3)} for d, s in sorted(by_deck.items())}
        entry.update(by_role(rows, TARGETS.get(opponent)))
        out[opponent] = entry
    return out


def by_role(rows: list[dict], target: float | None = None) -> dict:
    """Our win rate with the favoured and with the underdog deck of each matchup. The favourite of a
    pair of decks is the one that won more of these games (whoever piloted it); a tie has none. With a
    target: the underdog win rate that would reach it, given ours as the favourite."""
    won: dict[tuple, dict[str, float]] = {}
    for g in rows:
        if g["winner"] is not None:
            tally = won.setdefault(tuple(sorted(g["decks"])), {})
            tally[g["decks"][g["winner"]]] = tally.get(g["decks"][g["winner"]], 0) + 1
    favourite = {}
    for pair, tally in won.items():
        ranked = sorted(tally.items(), key=lambda kv: -kv[1])
        if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
            favourite[pair] = ranked[0][0]
    roles = {"favourite": [0.0, 0], "underdog": [0.0, 0]}
    for g in rows:
        fav = favourite.get(tuple(sorted(g["decks"])))
        if fav is not None:
            r = roles["favourite" if g["decks"][g["ours_seat"]] == fav else "underdog"]
            r[0] += g["score"]
            r[1] += 1
    out = {f"ours_as_{k}": {"games": n, "win_rate": round(w / n, 3)} for k, (w, n) in roles.items() if n}
    fav_rate = out.get("ours_as_favourite", {}).get("win_rate")
    if target is not None and fav_rate is not None:
        out["underdog_win_rate_for_target"] = round(max(0.0, 2 * target - fav_rate), 3)
    return out


def game_key(g: dict) -> tuple:
    return (g["opponent"], g["seed"], tuple(g["decks"]), g["ours_seat"])


def paired(games: list[dict], other: list[dict]) -> dict:
    """Game by game against another player's results on the same seeds, decks and seats: where the
    results differ (flips), which way. Far more sensitive than comparing win rates, since the decks and
    seats decide most games the same way for both."""
    from common.stats import sign_test

    theirs = {game_key(g): g for g in other}
    out = {}
    for g in games:
        t = theirs.get(game_key(g))
        if t is None:
            continue
        e = out.setdefault(g["opponent"], {"games": 0, "ours_score": 0.0, "their_score": 0.0, "better": 0, "worse": 0})
        e["games"] += 1
        e["ours_score"] += g["score"]
        e["their_score"] += t["score"]
        e["better"] += g["score"] > t["score"]
        e["worse"] += g["score"] < t["score"]
    for e in out.values():
        e["ours_win_rate"] = round(e.pop("ours_score") / e["games"], 4)
        e["their_win_rate"] = round(e.pop("their_score") / e["games"], 4)
        e["sign_test_p"] = round(sign_test(e["better"], e["worse"]), 4)
    return out


def paired_reports(games: list[dict], paths: list[str]) -> list[dict]:
    reports = []
    for path in paths:
        other = json.loads(Path(path).read_text(encoding="utf-8"))
        reports.append({"with": Path(path).name, "their_player": other.get("ours"),
                        "by_opponent": paired(games, other.get("games") or [])})
    return reports


def svg(summary: dict, ours: str, baseline: dict | None = None) -> str:
    """Win rates with their intervals; ``baseline`` (another player's summary on the same seeds) as markers."""
    from common.figures import figure_bytes, new_figure as _new_figure

    names = list(summary)
    fig = _new_figure(figsize=(8, 4), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    xs = list(range(len(names)))
    rates = [summary[n]["win_rate"] for n in names]
    lows = [summary[n]["win_rate"] - summary[n]["ci95"][0] for n in names]
    highs = [summary[n]["ci95"][1] - summary[n]["win_rate"] for n in names]
    ax.bar(xs, rates, color="#1b9e77", width=0.6, yerr=[lows, highs], capsize=4, ecolor="#333333")
    for x, n in zip(xs, names):
        ax.text(x, 0.02, f"n={summary[n]['games']}", ha="center", fontsize=8, color="white")
        if n in TARGETS:
            ax.plot([x - 0.35, x + 0.35], [TARGETS[n]] * 2, color="#d95f02", linestyle="--", linewidth=1.5)
    if baseline and baseline.get("summary"):
        bx = [x for x, n in zip(xs, names) if n in baseline["summary"]]
        by = [baseline["summary"][n]["win_rate"] for n in names if n in baseline["summary"]]
        if bx:
            ax.scatter(bx, by, marker="D", color="#333333", zorder=3,
                       label=f"{baseline['ours']} on the same seeds")
            ax.legend(fontsize=8, frameon=False, loc="upper right")
    ax.axhline(0.5, color="#999999", linewidth=0.8)
    ax.set_xticks(xs, [n if n == "random" else f"engine\n{n}" for n in names])
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate of our search (95% Wilson)")
    ax.set_title(f"{ours} against the built-in AI (mirrored pairs); dashed: targets")
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.16, top=0.9)
    return figure_bytes(fig, "svg").decode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours", default="search:default", help="the player measured (search:<level>, engine:<level>)")
    parser.add_argument("--opponents", nargs="+", default=list(OPPONENTS), choices=OPPONENTS)
    parser.add_argument("--games", type=int, default=20, help="games per pairing (rounded up to mirrored pairs)")
    parser.add_argument("--procs", type=int, default=max(1, (os.cpu_count() or 2)))
    parser.add_argument("--seed", type=int, default=1000)
    parser.add_argument("--max-decisions", type=int, default=3000)
    parser.add_argument("--append", action="store_true",
                        help="merge with the games already in the output; games already there are not replayed")
    parser.add_argument("--model-opponent", action="store_true",
                        help="a search player models the engine opponent as the AI level it really is (search:<level>@<AI>)")
    parser.add_argument("--oracle", action="store_true",
                        help="diagnostic: the search sees the real hidden cards and library order (a ceiling for "
                             "what better inference of hidden information could give; cheats, never on the site)")
    parser.add_argument("--paired-with", nargs="+", default=[], metavar="FILE",
                        help="other results files on the same seeds: count the games whose result differs, each way")
    parser.add_argument("--redo", action="store_true", help="with --append: replay games already there")
    parser.add_argument("--output", default=str(RESULTS / "game_strength_levels.json"))
    parser.add_argument("--replot", action="store_true", help="only re-summarize and re-plot the output file")
    args = parser.parse_args()
    if args.model_opponent and not args.ours.startswith("search"):
        parser.error("--model-opponent needs a search player (--ours search:<level>)")
    if args.oracle and not args.ours.startswith("search"):
        parser.error("--oracle needs a search player (--ours search:<level>)")
    if args.replot:
        return replot(Path(args.output), args.paired_with)

    started = time.time()
    card_data_path()  # build once before the workers start
    jobs = jobs_for(args.ours, args.opponents, args.games, args.seed, args.max_decisions, args.model_opponent,
                    args.oracle)
    ours_name = args.ours + ("@opponent's AI" if args.model_opponent else "") + (" (clairvoyant)" if args.oracle else "")
    out_path = Path(args.output)
    old = []
    this_command = command("game_strength", sys.argv[1:])
    previous_commands: list[str] = []
    if args.append and out_path.exists():
        previous = json.loads(out_path.read_text(encoding="utf-8"))
        if previous.get("ours") == ours_name:
            old = previous.get("games", [])
            previous_commands = previous.get("commands") or [previous.get("command")]
    new: list[dict] = []

    if old and not args.redo:  # games already played (same pairing, seed, decks, seat) are kept
        done = {game_key(g) for g in old}
        jobs = [j for j in jobs if game_key(j) not in done]

    def write():
        merged = {game_key(g): g for g in old}
        merged.update({game_key(g): g for g in new})
        games = sorted(merged.values(), key=lambda g: (OPPONENTS.index(g["opponent"]) if g["opponent"] in OPPONENTS else 99,
                                                       g["seed"], g["ours_seat"]))
        summary = summarize(games)
        from gameplay.core.search import advisor

        level = args.ours.partition(":")[2] or "default"
        report = {"benchmark": "game_strength", "date": dt.datetime.now().isoformat(timespec="seconds"),
                  "command": this_command,
                  "machine": game_machine(), "ours": ours_name,
                  "level": advisor.level_spec(level) if args.ours.startswith("search") and level in advisor.LEVELS else None,
                  "targets": TARGETS, "summary": summary,
                  **({"paired": paired_reports(games, args.paired_with)} if args.paired_with else {}),
                  "games": games,
                  "commands": (previous_commands + [this_command])[-20:],
                  "run_seconds": round(time.time() - started, 1)}
        write_result(report, out_path, newline=False, indent=1, default=str)
        if summary:
            baseline_path = RESULTS / "game_strength_baseline.json"
            baseline = None
            if baseline_path.exists() and baseline_path != out_path:
                baseline = json.loads(baseline_path.read_text(encoding="utf-8"))
            out_path.with_suffix(".svg").write_text(svg(summary, ours_name, baseline), encoding="utf-8")
        return summary

    print(f"{len(jobs)} games ({args.ours} vs {', '.join(args.opponents)}) on {args.procs} processes", flush=True)
    if args.procs <= 1:
        for job in jobs:
            g = play_one(job)
            new.append(g)
            _report_game(g, len(new), len(jobs))
            write()
    else:
        import multiprocessing as mp

        with ProcessPoolExecutor(max_workers=args.procs, mp_context=mp.get_context("spawn")) as pool:
            futures = [pool.submit(play_one, job) for job in jobs]
            for f in as_completed(futures):
                g = f.result()
                new.append(g)
                _report_game(g, len(new), len(jobs))
                write()
    summary = write()
    print(f"\n{'opponent':<10} {'games':>5} {'win rate':>8} {'95% CI':>15} {'s/game':>7} {'max s':>6}")
    for name, e in summary.items():
        print(f"{name:<10} {e['games']:>5} {e['win_rate']:>8.3f} {str(e['ci95']):>15} {e['seconds_per_game']:>7} "
              f"{e['seconds_per_game_max']:>6}")
    print(f"wrote {out_path} and {out_path.with_suffix('.svg').name} in {time.time() - started:.0f}s")
    return 0


def replot(path: Path, paired_with: list[str] | None = None) -> int:
    report = json.loads(path.read_text(encoding="utf-8"))
    report["summary"] = summarize(report["games"])
    if paired_with:
        report["paired"] = paired_reports(report["games"], paired_with)
    write_result(report, path, newline=False, indent=1, default=str)
    baseline_path = RESULTS / "game_strength_baseline.json"
    baseline = json.loads(baseline_path.read_text(encoding="utf-8")) if baseline_path.exists() and baseline_path != path else None
    path.with_suffix(".svg").write_text(svg(report["summary"], report["ours"], baseline), encoding="utf-8")
    print(f"re-plotted {path.with_suffix('.svg')}")
    return 0


def _report_game(g: dict, done: int, total: int):
    print(f"[{done}/{total}] vs {g['opponent']:<8} pair {g['pair']:>3} seat {g['ours_seat']} {g['decks'][g['ours_seat']]:<18} "
          f"score {g['score']} turns {g['turns']} cpu {g['cpu_seconds']}s (ours {g['ours_cpu_seconds']}s)"
          + (f" ERROR {g['error']}" if g.get("error") else ""), flush=True)


# --- the paired yardstick on the deck pool (--pool) ------------------------------------------------------

YARDSTICK = RESULTS / "game_strength_v3.json"  # v2 (the peeking baseline): game_strength.json


def pool_jobs(pool: dict, which: str, seeds: int, seed: int, max_decisions: int, exclude=()) -> list[dict]:
    from gameplay.core.matches.yardstick import jobs

    rows = pool["pairings"]
    chosen = [p["pairing"] for p in rows if (which == "all") or (p["mirror"] if which == "mirrors" else p["close"])]
    chosen = [p for p in chosen if not set(p) & set(exclude)]
    return jobs(chosen, seeds=seeds, seed=seed, max_decisions=max_decisions)


_POOL_ENGINE = None
CARD_DATA_ENV = "MTG_GAME_POOL_CARD_DATA"  # --card-data, handed to the worker processes


class CallMeter:
    """Times every call of the engine's AI (``Game.ai_action``) in this process, by the side whose decision is
    running (``yardstick.play``'s ``on_turn``): calls, and calls that ran into the engine's 1.5 s wall-clock cap
    (``ensemble.ENGINE_CAP_SECONDS``) -- a cut-off search plays shallower, so none may pass unnoticed. The
    ensemble's copies call from threads; they all belong to the decision running."""

    def __init__(self):
        import threading

        from gameplay.core.engine.adapter import Game
        from gameplay.core.search.ensemble import ENGINE_CAP_SECONDS

        self.side, self.cap, self.lock = "ours", ENGINE_CAP_SECONDS, threading.Lock()
        self.counts: dict[str, dict] = {}
        original = Game.ai_action
        meter = self

        def timed(game, seat, difficulty="Medium"):
            started = time.perf_counter()
            try:
                return original(game, seat, difficulty)
            finally:
                meter.add(time.perf_counter() - started)

        timed.__wrapped__ = original
        Game.ai_action = timed  # this bench process only: one game at a time, every call counted

    def turn(self, side: str) -> None:
        self.side = side

    def add(self, seconds: float) -> None:
        with self.lock:
            c = self.counts.setdefault(self.side, {"calls": 0, "cut_off": 0, "seconds": 0.0})
            c["calls"] += 1
            c["cut_off"] += seconds >= self.cap
            c["seconds"] += seconds

    def take(self) -> dict:
        with self.lock:
            out = {side: {**c, "seconds": round(c["seconds"], 1)} for side, c in self.counts.items()}
            self.counts = {}
            self.side = "ours"
        return out


_METER: CallMeter | None = None


def pool_card_data() -> Path:
    """The pool's card database: --card-data (``MTG_GAME_POOL_CARD_DATA``), else var/bench/game-pool-card-data.json
    (built from MTG_DATA_DIR's oracle corpus when missing)."""
    path = os.environ.get(CARD_DATA_ENV)
    if path:
        if not Path(path).is_file():
            raise SystemExit(f"--card-data: no such file {path}")
        return Path(path)
    from bench.harness.games import pool_card_data_path

    return pool_card_data_path()


def play_pool_job(job: dict) -> dict:
    """One game of the yardstick in a local process, on the pool's card database; the engine's AI calls of each
    side metered (``engine_calls``)."""
    global _POOL_ENGINE, _METER
    from gameplay.core.engine.adapter import PhaseEngine
    from gameplay.core.matches.yardstick import play

    if _POOL_ENGINE is None:
        path = str(pool_card_data())
        _POOL_ENGINE = PhaseEngine(path)
        _POOL_ENGINE.card_source = path
        _METER = CallMeter()
    cards = {d["name"]: d["main"] for d in load_pool()["decks"]}
    _METER.take()
    game = play(_POOL_ENGINE, job, job["player"], cards, on_turn=_METER.turn)
    game["engine_calls"] = _METER.take()
    return game


def _celery_runner():
    """Submit a game to the Celery workers: (job -> AsyncResult); the services stack's settings."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mtgsite.settings")
    os.environ.setdefault("MTG_STACK", "services")
    import django

    django.setup()
    from gameplay.tasks import strength_game

    cards = {d["name"]: d["main"] for d in load_pool()["decks"]}
    return lambda job: strength_game.apply_async(args=[job, job["player"], cards, str(pool_card_data())])


YARDSTICK_TARGET = 0.58  # issue 19: the win rate against VeryHard in the close pairings and mirrors


def yardstick_svg(summary: dict, baseline: str) -> str:
    """Each player's win rate over its pairs (95% Wilson) beside the baseline's on the same pairs, the discordant
    split under each bar, the target dashed."""
    from common.figures import figure_bytes, new_figure as _new_figure

    names = [n for n in summary if summary[n]["all"]["pairs"]]
    fig = _new_figure(figsize=(max(6, 1.5 * len(names) + 2), 4.2), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    xs = list(range(len(names)))
    rows = [summary[n]["all"] for n in names]
    rates = [r["win_rate"] for r in rows]
    ax.bar(xs, rates, color="#1b9e77", width=0.6, capsize=4, ecolor="#333333",
           yerr=[[r["win_rate"] - r["ci95"][0] for r in rows], [r["ci95"][1] - r["win_rate"] for r in rows]])
    ax.scatter(xs, [r["baseline_win_rate"] for r in rows], marker="D", color="#333333", zorder=3,
               label=f"{baseline} in the same seats")
    for x, r in zip(xs, rows):
        ax.text(x, 0.03, f"{r['pairs']} pairs\n+{r['better']} / -{r['worse']}\np={r['sign_test_p']}", ha="center",
                fontsize=7, color="white")
    ax.axhline(YARDSTICK_TARGET, color="#d95f02", linestyle="--", linewidth=1.2, label=f"target {YARDSTICK_TARGET}")
    ax.axhline(0.5, color="#999999", linewidth=0.8)
    ax.set_xticks(xs, [n.replace(":", "\n", 1) for n in names], fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate against VeryHard (95% Wilson)")
    ax.set_title("Paired yardstick: each player in the seat VeryHard held, same deal and opponent", fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="upper right")
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.16, top=0.9)
    return figure_bytes(fig, "svg").decode()


# Yardstick v3 (issue 29 item 5): each player in the seat honest VeryHard held, against honest VeryHard
V3_PLAYERS = ["ensemble:VeryHard:1", "ensemble:VeryHard:4", "ensemble:VeryHard:8", "ensemble:VeryHard:16",
              "search:default", "search:default+net", "engine:VeryHard!peek"]
ADVISOR_DEFAULT = "ensemble:VeryHard:8"  # the advisor's default level's stand-in (--advisor-default)
_ENSEMBLE_K = re.compile(r"^ensemble:(?P<level>[A-Za-z]+):(?P<k>\d+)$")


def k_svg(summary: dict, baseline: str, reference: str | None) -> str | None:
    """Win rate against k for the ensemble players of one level (95% Wilson), the baseline's win rate on the same
    pairs and the peeking reference's as lines. None when fewer than one ensemble player has pairs."""
    from common.figures import figure_bytes, new_figure as _new_figure

    points = sorted((int(m["k"]), s["all"]) for p, s in summary.items()
                    if (m := _ENSEMBLE_K.match(p)) and s["all"]["pairs"])
    if not points:
        return None
    fig = _new_figure(figsize=(6, 4), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    ks = [k for k, _ in points]
    rates = [a["win_rate"] for _, a in points]
    ax.errorbar(ks, rates, yerr=[[a["win_rate"] - a["ci95"][0] for _, a in points],
                                 [a["ci95"][1] - a["win_rate"] for _, a in points]],
                marker="o", color="#1b9e77", capsize=4, label="ensemble of k honest VeryHard copies")
    for k, a in points:
        ax.annotate(f"{a['pairs']} pairs\n+{a['better']}/-{a['worse']} p={a['sign_test_p']}", (k, a["win_rate"]),
                    textcoords="offset points", xytext=(6, -22), fontsize=7)
    base = [a["baseline_win_rate"] for _, a in points if a["baseline_win_rate"] is not None]
    if base:
        ax.axhline(sum(base) / len(base), color="#333333", linestyle=":", linewidth=1.2,
                   label=f"{baseline} (honest, one copy) on the same pairs")
    if reference and reference in summary and summary[reference]["all"]["pairs"]:
        r = summary[reference]["all"]
        ax.axhline(r["win_rate"], color="#d95f02", linestyle="--", linewidth=1.2,
                   label=f"{reference} ({r['pairs']} pairs)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_ylim(0, 1)
    ax.set_xlabel("k (honest copies asked per decision)")
    ax.set_ylabel("win rate against honest VeryHard (95% Wilson)")
    ax.set_title("Yardstick v3: strength against the number of copies", fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="upper left")
    fig.subplots_adjust(left=0.11, right=0.97, bottom=0.13, top=0.9)
    return figure_bytes(fig, "svg").decode()


def _fmt(v, spec=""):
    return "-" if v is None else format(v, spec)


def player_order(name: str) -> tuple:
    """Ensembles by level and k first, then the rest by name (the order of the table)."""
    m = _ENSEMBLE_K.match(name)
    return (0, m["level"], int(m["k"]), "") if m else (1, "", 0, name)


def table(summary: dict, advisor_default: str | None = None) -> str:
    """The per-player table the run prints (and the docs quote)."""
    head = (f"{'player':<38} {'pairs':>5} {'win':>6} {'95% CI':>15} {'base':>6} {'better/worse':>12} {'disc':>5} "
            f"{'p':>6} {'cpu s/game':>10} {'max':>6} {'cut-off':>7} {'fallbk':>6}")
    lines = [head]
    for player in sorted(summary, key=player_order):
        a = summary[player]["all"]
        name = player + (" (advisor default)" if player == advisor_default else "")
        lines.append(f"{name:<38} {a['pairs']:>5} {_fmt(a['win_rate'], '.3f'):>6} {str(a['ci95']):>15} "
                     f"{_fmt(a['baseline_win_rate'], '.3f'):>6} {a['better']:>6}/{a['worse']:<5} "
                     f"{_fmt(a['discordant_share'], '.2f'):>5} {a['sign_test_p']:>6} "
                     f"{_fmt(a['cpu_seconds_per_game']):>10} {_fmt(a['cpu_seconds_max']):>6} "
                     f"{_fmt(a.get('cut_off')):>7} {a.get('fallbacks', 0):>6}")
    return "\n".join(lines)


def yardstick(argv: list[str]) -> int:
    from gameplay.core.matches import yardstick as strength
    from gameplay.core.search.ensemble import EnsembleConfig

    parser = argparse.ArgumentParser(description="the paired yardstick on the deck pool (v3)")
    parser.add_argument("--pool", action="store_true")
    parser.add_argument("--players", nargs="+", default=V3_PLAYERS,
                        help="the players measured in the baseline's seat (default: the v3 list: ensembles k = 1, 4, "
                             "8, 16, the search without and with the network, the peeking VeryHard reference)")
    parser.add_argument("--advisor-default", default=ADVISOR_DEFAULT,
                        help="which of --players is the advisor's default level (marked in the table and the result)")
    parser.add_argument("--baseline", default=strength.BASELINE)
    parser.add_argument("--pairings", choices=["close", "mirrors", "all"], default="close",
                        help="close: the pool's close pairings and the mirrors (the headline)")
    parser.add_argument("--seeds", type=int, default=1, help="deals per pairing")
    parser.add_argument("--seed", type=int, default=9000)
    parser.add_argument("--max-decisions", type=int, default=3000)
    parser.add_argument("--max-games", type=int, default=None, help="stop after this many new games")
    parser.add_argument("--slice", default=None, metavar="A:B",
                        help="only jobs A to B-1 of the job list (--list-jobs prints it): a smoke or a resumable slice; "
                             "every game already in the output still counts")
    parser.add_argument("--list-jobs", action="store_true", help="print the numbered job list and stop")
    parser.add_argument("--exclude", nargs="+", default=[], metavar="DECK",
                        help="leave out the pairings of these decks (the Legacy mirror's VeryHard-vs-VeryHard game ran "
                             "46 turns and 918 CPU-s: a pairing whose baseline alone is far past the per-game budget)")
    parser.add_argument("--procs", type=int, default=1)
    parser.add_argument("--ensemble-workers", type=int, default=None, metavar="N",
                        help="threads an ensemble player asks its copies on (default: 1 when --procs > 1, so no more "
                             "engine searches run at once than processes; else the ensemble's own default)")
    parser.add_argument("--card-data", default=None, metavar="FILE",
                        help="the pool's engine card database (default var/bench/game-pool-card-data.json, built from "
                             "MTG_DATA_DIR when missing): with it no data folder and no Django are needed")
    parser.add_argument("--celery", action="store_true", help="play the games on the Celery workers")
    parser.add_argument("--append", action="store_true", help="keep the games already in the output; play the rest")
    parser.add_argument("--replot", action="store_true", help="only re-summarize, re-plot and print the output file")
    parser.add_argument("--output", default=None, help=f"default {YARDSTICK.name}; with --sprt {SPRT_RESULT.name}")
    parser.add_argument("--sprt", action="store_true",
                        help="the sequential test: one player (default advisor:vote, the advisor's default level) in "
                             "honest VeryHard's seat, pairs played until the SPRT over the discordant ones concludes")
    parser.add_argument("--p0", type=float, default=SPRT_P0, help="H0: P(better | discordant pair)")
    parser.add_argument("--p1", type=float, default=SPRT_P1, help="H1: P(better | discordant pair)")
    parser.add_argument("--alpha", type=float, default=SPRT_ALPHA)
    parser.add_argument("--beta", type=float, default=SPRT_BETA)
    parser.add_argument("--keep-going", action="store_true", help="with --sprt: play on after the test concludes")
    args = parser.parse_args(argv)
    if args.sprt:
        if args.players == V3_PLAYERS:
            args.players = [SPRT_PLAYER]
        if len(args.players) != 1:
            parser.error("--sprt measures one player")
        args.advisor_default = args.players[0]
        if args.seeds == 1:
            args.seeds = SPRT_SEEDS
    args.output = args.output or str(SPRT_RESULT if args.sprt else YARDSTICK)
    if args.card_data:
        os.environ[CARD_DATA_ENV] = str(Path(args.card_data).resolve())
    workers = args.ensemble_workers or (1 if args.procs > 1 else None)
    if args.sprt and not workers:  # every batch of the vote that wide, its first too: cores shared by the processes
        workers = max(1, (os.cpu_count() or 1) // args.procs)
    searches = args.procs * max(workers or EnsembleConfig().workers, 1)
    if args.sprt and not args.celery and searches > (os.cpu_count() or 1):
        parser.error(f"{args.procs} processes x {workers or EnsembleConfig().workers} ensemble threads = {searches} "
                     f"engine searches at once on {os.cpu_count()} cores: the measured player would be cut off at "
                     "the engine's wall-clock cap by the measurement itself (lower --procs or --ensemble-workers)")
    started = time.time()
    pool = load_pool()
    unknown = set(args.exclude) - {d["name"] for d in pool["decks"]}
    if unknown:
        parser.error(f"no such deck in the pool: {', '.join(sorted(unknown))}")
    from gameplay.core.matches.players import make_player

    for spec in [args.baseline, *args.players]:
        try:
            make_player(spec)
        except (ValueError, OSError) as exc:
            parser.error(f"player {spec!r}: {exc}")
    out_path = Path(args.output)
    if args.replot:
        return replot_yardstick(out_path, args.baseline, args.advisor_default, args.exclude)
    base_jobs = pool_jobs(pool, args.pairings, args.seeds, args.seed, args.max_decisions, args.exclude)
    if args.list_jobs:
        for i, j in enumerate(base_jobs):
            print(f"{i:>4}  {j['decks'][0]} v {j['decks'][1]}  seed {j['seed']}  ours in seat {j['ours_seat']}")
        return 0
    if args.slice:
        a, _, b = args.slice.partition(":")
        try:
            base_jobs = base_jobs[int(a or 0):int(b) if b else None]
        except ValueError:
            parser.error(f"--slice takes A:B (whole numbers), not {args.slice!r}")
    if not args.celery:
        pool_card_data()  # built (or found) once, before the workers start
    old, commands = [], []
    if args.append and out_path.exists():
        previous = json.loads(out_path.read_text(encoding="utf-8"))
        old, commands = previous.get("games", []), previous.get("commands", [])
    done = {(strength.key(g), g["player"]) for g in old}
    # each job: the baseline first (its result is shared), then each player; job by job, so a cut run has pairs
    todo = [{**j, "player": p, **({"workers": workers} if workers and p.startswith(("ensemble", "advisor")) else {})}
            for j in base_jobs for p in [args.baseline, *args.players] if (strength.key(j), p) not in done]
    if args.max_games is not None:
        todo = todo[:args.max_games]
    commands.append("python -m bench.game_strength " + " ".join(argv))
    new: list[dict] = []

    test = {"p0": args.p0, "p1": args.p1, "alpha": args.alpha, "beta": args.beta}

    def write():
        if args.sprt:
            return write_sprt(out_path, old + new, args.players[0], args.baseline, args.exclude, commands, pool,
                              args.pairings, started, test)
        return write_yardstick(out_path, old + new, args.baseline, args.advisor_default, args.exclude, commands,
                               pool, args.pairings, started)

    def concluded() -> bool:
        if not args.sprt or args.keep_going:
            return False
        counted = [g for g in old + new if not set(g["decks"]) & set(args.exclude)]
        return strength.sequential(counted, args.players[0], args.baseline, **test)["state"] != "running"

    def done_one(g):
        g["order"] = len(old) + len(new)  # its place in the run (appended runs continue the count): the SPRT's order
        new.append(g)
        calls = (g.get("engine_calls") or {}).get("ours") or {}
        print(f"[{len(new)}/{len(todo)}] {g['player']:<22} {g['decks'][0]} v {g['decks'][1]} seed {g['seed']} "
              f"seat {g['ours_seat']}: score {g['score']} turns {g['turns']} cpu {g['cpu_seconds']}s "
              f"calls {calls.get('calls', 0)} cut-off {calls.get('cut_off', 0)}"
              + (f" ERROR {g['error']}" if g.get("error") else ""), flush=True)
        write()

    where = "Celery workers" if args.celery else f"{args.procs} processes"
    print(f"{len(todo)} games ({', '.join(args.players)} and {args.baseline}) on {where}"
          + (f", ensembles on {workers} thread(s)" if workers else ""), flush=True)
    if concluded():
        todo = []
        print("the sequential test has already concluded (--keep-going plays on)", flush=True)
    if args.celery:
        submit = _celery_runner()
        for result in [submit(j) for j in todo]:
            done_one(result.get(disable_sync_subtasks=False))
    elif args.procs <= 1:
        for job in todo:
            done_one(play_pool_job(job))
            if concluded():
                break
    else:
        import multiprocessing as mp

        with ProcessPoolExecutor(max_workers=args.procs, mp_context=mp.get_context("spawn")) as pool_:
            for f in as_completed([pool_.submit(play_pool_job, j) for j in todo]):
                done_one(f.result())
                if concluded():
                    pool_.shutdown(wait=True, cancel_futures=True)
                    break
    summary = write()
    print()
    if args.sprt:
        print(sprt_line(summary))
    else:
        print(table(summary, args.advisor_default))
    print(f"wrote {out_path} in {time.time() - started:.0f}s")
    return 0


# The sequential test (issue 34 item 5), as fishtest settles a patch: H0 P(better | discordant pair) = 0.5 against
# H1 0.65, alpha = beta = 0.05 (Wald's bounds +-2.944), the advisor's default level in honest VeryHard's seat.
SPRT_RESULT = RESULTS / "game_strength_sprt.json"
SPRT_PLAYER = "advisor:vote"
SPRT_P0, SPRT_P1, SPRT_ALPHA, SPRT_BETA = 0.5, 0.65, 0.05, 0.05
SPRT_SEEDS = 12  # deals per pairing in the job list (40 jobs a deal on the close pairings): more than a test needs


def sprt_line(summary: dict) -> str:
    cap = summary["engine_cap"]
    share = lambda side: "-" if cap[side]["share"] is None else f"{100 * cap[side]['share']:.1f}%"  # noqa: E731
    return (f"SPRT {summary['state']}: LLR {summary['llr']:+.3f} in ({summary['lower']:+.3f}, {summary['upper']:+.3f}), "
            f"{summary['pairs']} pairs, {summary['discordant']} discordant (+{summary['better']} / -{summary['worse']}); "
            f"cut-off calls: ours {share('ours')}, baseline {share('baseline')}, opponent {share('opponent_of_ours')}; "
            f"{summary['flagged_pairs']} pairs with a game over {int(100 * cap['flag_share'])}% cut off")


def sprt_svg(summary: dict) -> str:
    """The LLR after each discordant pair, between Wald's bounds."""
    from common.figures import figure_bytes, new_figure as _new_figure

    fig = _new_figure(figsize=(6.4, 3.6), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    trace = [0.0] + list(summary["trace"])
    ax.step(range(len(trace)), trace, where="post", color="#1b9e77", label="log-likelihood ratio")
    for bound, text in ((summary["upper"], "H1 accepted: better"), (summary["lower"], "H0 accepted: not better")):
        ax.axhline(bound, color="#d95f02", linestyle="--", linewidth=1.1)
        ax.text(0.2, bound, text, fontsize=7, va="bottom", color="#d95f02")
    ax.axhline(0, color="#999999", linewidth=0.7)
    ax.set_xlabel("discordant pairs, in the order they were played")
    ax.set_ylabel("LLR")
    ax.set_ylim(min(summary["lower"] * 1.25, min(trace) - 0.2), max(summary["upper"] * 1.25, max(trace) + 0.2))
    ax.set_title(f"SPRT: H0 p = {summary['p0']} vs H1 p = {summary['p1']}, {summary['state']} "
                 f"({summary['pairs']} pairs)", fontsize=9)
    fig.subplots_adjust(left=0.1, right=0.97, bottom=0.15, top=0.9)
    return figure_bytes(fig, "svg").decode()


def write_sprt(out_path: Path, games: list[dict], player: str, baseline: str, exclude: list[str], commands: list[str],
               pool: dict, pairings: str, started: float, test: dict) -> dict:
    """The sequential test's result JSON (and .md, and the LLR plot): the state, the LLR and its bounds, the pairs,
    the discordant ones, the engine cap's cut-offs per side, and every game (so a later run appends)."""
    from gameplay.core.matches import yardstick as strength

    counted = [g for g in games if not set(g["decks"]) & set(exclude)]
    summary = strength.sequential(counted, player, baseline, **test)
    comparison = summary.pop("comparison") or {}
    report = {"benchmark": "game_strength_sprt",
              "test": f"SPRT over discordant pairs: H0 P(better) = {test['p0']} against H1 {test['p1']}, "
                      f"alpha = {test['alpha']}, beta = {test['beta']}",
              "player": player, "baseline": baseline, "opponent": baseline,
              "date": dt.datetime.now().isoformat(timespec="seconds"), "commands": commands[-20:],
              "machine": game_machine(), "pool": {"file": "bench/results/game_pool.json", "pairings": pairings},
              "excluded_decks": exclude,
              "headline": {k: summary[k] for k in ("state", "llr", "lower", "upper", "pairs", "discordant", "better",
                                                   "worse", "flagged_pairs")}
                          | {"cut_off_share_ours": summary["engine_cap"]["ours"]["share"],
                             "cut_off_share_baseline": summary["engine_cap"]["baseline"]["share"],
                             "cut_off_share_opponent": summary["engine_cap"]["opponent_of_ours"]["share"],
                             "win_rate": comparison.get("win_rate"), "baseline_win_rate": comparison.get("baseline_win_rate"),
                             "cpu_seconds_per_pair": None if comparison.get("cpu_seconds_per_game") is None else round(
                                 comparison["cpu_seconds_per_game"] + sum(g["cpu_seconds"] for g in counted
                                                                          if g["player"] == baseline)
                                 / max(1, sum(g["player"] == baseline for g in counted)), 1)},
              "sprt": summary, "comparison": comparison, "games": games,
              "run_seconds": round(time.time() - started, 1)}
    write_result(report, out_path, newline=False, indent=1, default=str)
    out_path.with_suffix(".svg").write_text(sprt_svg(summary), encoding="utf-8")
    return summary


def write_yardstick(out_path: Path, games: list[dict], baseline: str, advisor_default: str | None,
                    exclude: list[str], commands: list[str], pool: dict, pairings: str, started: float) -> dict:
    """Summarize ``games`` (every game is kept in the file; the excluded decks' are not counted), write the result
    JSON (and its .md), the bar chart and the plot against k. Returns the summary."""
    from gameplay.core.matches import yardstick as strength

    counted = [g for g in games if not set(g["decks"]) & set(exclude)]
    summary = strength.summarize(counted, baseline)
    summary = {p: summary[p] for p in sorted(summary, key=player_order)}
    base_cpu = [g["cpu_seconds"] for g in counted if g["player"] == baseline]
    base_mean = sum(base_cpu) / len(base_cpu) if base_cpu else 0.0
    # a pair is our game and the baseline's (played once, shared by every player)
    per_pair = {p: None if s["all"]["cpu_seconds_per_game"] is None else s["all"]["cpu_seconds_per_game"] + base_mean
                for p, s in summary.items()}
    report = {"benchmark": "game_strength", "yardstick": "v3: each player in the seat honest VeryHard held, against "
                                                         "honest VeryHard, same deal",
              "date": dt.datetime.now().isoformat(timespec="seconds"), "commands": commands[-20:],
              "machine": game_machine(), "pool": {"file": "bench/results/game_pool.json", "pairings": pairings,
                                                 "close": pool.get("close")},
              "baseline": baseline, "advisor_default": advisor_default, "excluded_decks": exclude,
              "table": {p: {k: s["all"].get(k) for k in ("pairs", "win_rate", "ci95", "baseline_win_rate", "better",
                                                         "worse", "discordant_share", "sign_test_p",
                                                         "cpu_seconds_per_game", "cpu_seconds_max",
                                                         "ours_cpu_seconds_per_game", "cut_off", "engine_calls",
                                                         "opponent_cut_off", "baseline_cut_off", "fallbacks")}
                        for p, s in summary.items()},
              "summary": summary,
              "baseline_cpu_seconds_per_game": round(base_mean, 1),
              "projection_200_pairs_cpu_hours": {p: None if s is None else round(200 * s / 3600, 1)
                                                 for p, s in per_pair.items()},
              "games": games, "run_seconds": round(time.time() - started, 1)}
    write_result(report, out_path, newline=False, indent=1, default=str)
    if any(s["all"]["pairs"] for s in summary.values()):
        out_path.with_suffix(".svg").write_text(yardstick_svg(summary, baseline), encoding="utf-8")
        plot = k_svg(summary, baseline, "engine:VeryHard!peek")
        if plot:
            out_path.with_name(out_path.stem + "_k.svg").write_text(plot, encoding="utf-8")
    return summary


def replot_yardstick(path: Path, baseline: str, advisor_default: str | None, exclude: list[str]) -> int:
    if not path.is_file():
        raise SystemExit(f"--replot: no results file {path}")
    report = json.loads(path.read_text(encoding="utf-8"))
    summary = write_yardstick(path, report["games"], baseline, advisor_default, exclude, report.get("commands", []),
                              load_pool(), (report.get("pool") or {}).get("pairings", "close"), time.time())
    print(table(summary, advisor_default))
    return 0


if __name__ == "__main__":
    sys.exit(yardstick(sys.argv[1:]) if "--pool" in sys.argv[1:] else main())
