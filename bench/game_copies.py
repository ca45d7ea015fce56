"""Copies that load (issue 29 item 3): the share of the pool's decision states whose honest copy the engine refuses.

    python -m bench.game_copies [--games 12] [--first 0] [--seed 8000] [--levels VeryHard Medium]
                                [--max-decisions 600] [--procs 1] [--card-data FILE] [--keep DIR]

Plays games on the deck pool of ``python -m bench.game_pool`` (bench/results/game_pool.json, card database
var/bench/game-pool-card-data.json): game i puts pool deck i against deck i+1 (cycled; the seats alternate), the
engine's honest AI at ``--levels`` (seat 0's level first). At every decision with a choice (more than one legal
action) the acting seat's honest copy (``determinize``: the other hand and both libraries re-dealt, a fresh engine
seed) is loaded twice: as the engine wrote it (``load_game`` of the raw JSON, no repair) and through
``PhaseEngine.load`` (which applies ``adapter.repair_state``). Refusals are grouped by the engine's error text
(numbers replaced by ``#``). ``--keep DIR`` writes each state still refused after repair there (for a test or a bug
report; not committed). Writes bench/results/game_copies.json.

Needs only phase, the repository and the two pool files (no Django, no MTG_DATA_DIR once the card database is
built).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

from bench.harness.games import game_machine, load_pool, pool_card_data_path
from bench.harness.paths import RESULTS, command
from bench.harness.report import write_result

os.environ.setdefault("OMP_NUM_THREADS", "1")
OUT = RESULTS / "game_copies.json"


def error_group(text: str) -> str:
    """An engine error's text with its numbers (ids, positions) replaced by ``#``: one group per kind of refusal."""
    text = text.removeprefix("the engine cannot load this state: ")
    return re.sub(r"\d+", "#", text)[:160]


def raw_load(engine, state: dict):
    """``state`` loaded as the engine wrote it (no ``repair_state``); the error text, or None when it loads."""
    from gameplay.core.engine.adapter import _guard

    try:
        _guard(engine._engine.load_game, state)
        return None
    except Exception as exc:  # noqa: BLE001 - every refusal is what this bench measures
        return f"{type(exc).__name__}: {exc}"


def repaired_load(engine, state: dict):
    from gameplay.core.engine.adapter import EngineError

    try:
        engine.load(state)
        return None
    except EngineError as exc:
        return f"{type(exc).__name__}: {exc}"


def play_and_try(engine, decks: tuple[list, list], levels: tuple[str, str], seed: int, max_decisions: int,
                 keep: Path | None, tag: str) -> dict:
    """One game of the honest engine AIs; at each decision with a choice, the acting seat's copy loaded raw and
    repaired. Returns counts and each refusal's group."""
    from gameplay.core.engine.adapter import determinize
    from gameplay.core.matches.players import make_player, play_game
    from gameplay.core.matches.roundrobin import expand

    rng = random.Random(seed)
    players = (make_player(f"engine:{levels[0]}", seed=seed), make_player(f"engine:{levels[1]}", seed=seed + 1))
    tally = {"states": 0, "refused_raw": 0, "refused_repaired": 0, "refused_real": 0, "raw": Counter(),
             "repaired": Counter(), "real": Counter(), "prompts": Counter(), "refused_prompts": Counter()}

    def probe(game, seat):
        if len(game.legal_actions(seat)) < 2:
            return
        state = game.state()
        copy = determinize(state, seat, rng)
        tally["states"] += 1
        prompt = (state["state"].get("waiting_for") or {}).get("type")
        tally["prompts"][prompt] += 1
        real = raw_load(engine, state)  # the real state, as written: is it the deal or the state itself?
        if real is not None:
            tally["refused_real"] += 1
            tally["real"][error_group(real)] += 1
        raw = raw_load(engine, copy)
        if raw is None:
            return
        tally["refused_raw"] += 1
        tally["raw"][error_group(raw)] += 1
        tally["refused_prompts"][prompt] += 1
        fixed = repaired_load(engine, copy)
        if fixed is not None:
            tally["refused_repaired"] += 1
            tally["repaired"][error_group(fixed)] += 1
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                (keep / f"{tag}-{tally['states']}.json").write_text(json.dumps(copy), encoding="utf-8")

    class Probing:
        def __init__(self, player):
            self.player, self.name = player, player.name

        def choose(self, game, seat):
            probe(game, seat)
            return self.player.choose(game, seat)

    c0 = time.process_time()
    game = engine.new_game(expand(decks[0]), expand(decks[1]), seed=seed)
    error = None
    try:
        result = play_game(game, (Probing(players[0]), Probing(players[1])), max_decisions=max_decisions)
    except Exception as exc:  # noqa: BLE001 - an engine crash ends the game; its states so far still count
        result, error = {"winner": None, "turns": game.turn}, f"{type(exc).__name__}: {str(exc)[:200]}"
    return {**tally, "winner": result.get("winner"), "turns": result.get("turns"), "error": error,
            "cpu_seconds": round(time.process_time() - c0, 1)}


_ENGINE = None


def _game_job(job: dict) -> dict:
    """One game in a worker process (``--procs``): the engine built once per process."""
    global _ENGINE
    from gameplay.core.engine.adapter import PhaseEngine

    if _ENGINE is None:
        _ENGINE = PhaseEngine(job["card_data"])
    return play_and_try(_ENGINE, tuple(job["cards"]), tuple(job["levels"]), job["seed"], job["max_decisions"],
                        Path(job["keep"]) if job["keep"] else None, job["tag"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--first", type=int, default=0, help="start at game FIRST (the deck pairs follow the index)")
    parser.add_argument("--seed", type=int, default=8000)
    parser.add_argument("--levels", nargs=2, default=["VeryHard", "Medium"], metavar=("SEAT0", "SEAT1"))
    parser.add_argument("--max-decisions", type=int, default=600)
    parser.add_argument("--procs", type=int, default=1, help="games played at once (processes)")
    parser.add_argument("--card-data", default=None, metavar="FILE",
                        help="the pool's card database (default var/bench/game-pool-card-data.json)")
    parser.add_argument("--keep", default=None, help="folder for the states still refused after repair")
    parser.add_argument("--output", default=str(OUT))
    args = parser.parse_args(argv)
    from gameplay.core.engine.adapter import ENGINE_LEVELS

    for level in args.levels:
        if level not in ENGINE_LEVELS:
            parser.error(f"level must be one of {', '.join(ENGINE_LEVELS)}")
    if args.card_data and not Path(args.card_data).is_file():
        parser.error(f"--card-data: no such file {args.card_data}")
    started = time.time()
    card_data = str(Path(args.card_data).resolve()) if args.card_data else str(pool_card_data_path())
    decks = load_pool()["decks"]
    totals = {"states": 0, "refused_raw": 0, "refused_repaired": 0, "refused_real": 0, "raw": Counter(),
              "repaired": Counter(), "real": Counter(), "prompts": Counter(), "refused_prompts": Counter()}
    games = []

    def write():  # after every game: a run cut short keeps what it measured
        n = max(1, totals["states"])
        report = {"benchmark": "game_copies", "date": dt.datetime.now().isoformat(timespec="seconds"),
                  "command": command("game_copies", argv), "machine": game_machine(),
                  "levels": args.levels, "games_played": len(games),
                  "states_tried": totals["states"],
                  "refused_before_repair": totals["refused_raw"],
                  "refused_before_repair_share": round(totals["refused_raw"] / n, 4),
                  "refused_after_repair": totals["refused_repaired"],
                  "refused_after_repair_share": round(totals["refused_repaired"] / n, 4),
                  # the real state itself (not a copy), loaded as written: whether a refusal comes from the deal
                  "real_state_refused_before_repair": totals["refused_real"],
                  "errors_real_state": dict(totals["real"].most_common()),
                  "errors_before_repair": dict(totals["raw"].most_common()),
                  "errors_after_repair": dict(totals["repaired"].most_common()),
                  "prompts": dict(totals["prompts"].most_common()),
                  "refused_prompts": dict(totals["refused_prompts"].most_common()),
                  "games": sorted(games, key=lambda g: g["game"]), "run_seconds": round(time.time() - started, 1)}
        write_result(report, Path(args.output), newline=False, indent=1)

    jobs = []
    for i in range(args.first, args.first + args.games):
        a, b = decks[i % len(decks)], decks[(i + 1) % len(decks)]
        seats = (a, b) if i % 2 == 0 else (b, a)
        jobs.append({"game": i, "names": [seats[0]["name"], seats[1]["name"]], "cards": [seats[0]["main"], seats[1]["main"]],
                     "levels": args.levels, "seed": args.seed + i, "max_decisions": args.max_decisions,
                     "keep": args.keep, "tag": f"g{i}", "card_data": card_data})

    def done(job, g):
        for k in ("states", "refused_raw", "refused_repaired", "refused_real"):
            totals[k] += g[k]
        for k in ("raw", "repaired", "real", "prompts", "refused_prompts"):
            totals[k].update(g[k])
        games.append({"game": job["game"], "decks": job["names"], "seed": job["seed"], "states": g["states"],
                      "refused_raw": g["refused_raw"], "refused_repaired": g["refused_repaired"],
                      "real_refused": g["refused_real"], "turns": g["turns"], "winner": g["winner"],
                      "cpu_seconds": g["cpu_seconds"], **({"error": g["error"]} if g["error"] else {})})
        print(f"[{len(games)}/{len(jobs)}] {job['names'][0]} v {job['names'][1]}: {g['states']} states, refused "
              f"{g['refused_raw']} raw / {g['refused_repaired']} repaired, {g['cpu_seconds']}s", flush=True)
        write()

    if args.procs <= 1:
        for job in jobs:
            done(job, _game_job(job))
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(max_workers=args.procs, mp_context=mp.get_context("spawn")) as pool:
            futures = {pool.submit(_game_job, job): job for job in jobs}
            for f in as_completed(futures):
                done(futures[f], f.result())
    write()
    print(f"{totals['states']} states: refused {totals['refused_raw']} before repair, {totals['refused_repaired']} "
          f"after; wrote {args.output}")
    for text, count in totals["repaired"].most_common():
        print(f"  {count:>4}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
