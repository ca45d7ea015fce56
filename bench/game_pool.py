"""The strength bench's deck pool: real tournament decks the engine fully supports, and which pairings are close.

    python -m bench.game_pool [--per-format 1] [--pauper 2] [--formats Pauper Modern Standard Pioneer Legacy Premodern Vintage]
                              [--games 2] [--seed 7000] [--procs 1] [--max-decisions 1200] [--max-minutes 30]
                              [--close 0.65]

1. Every card of the oracle corpus is built by our own conversion (``gameplay.core.engine.carddata``); a card is
   playable when the engine builds it with no unimplemented part (what ``carddb.deck_support`` says on the
   site). The distinct, most recent decks of the corpus (MTG_DATA_DIR/mtg_decklistcache) whose every main
   card is playable are taken, ``--per-format`` per format (``--pauper`` Pauper ones), most recent first, one
   per archetype (no two decks sharing more than half their cards besides basic lands). The four sample decks join them.
2. An engine-vs-engine round robin, the engine's VeryHard AI in both seats, every pairing of two decks
   (``--games`` games, seats swapped), cut after ``--max-minutes`` of the run (pairings
   never reached are not eligible). A pairing is *close* when no deck won more than ``--close`` of its
   decided games; the mirrors always are (the same deck sits on both sides). The headline of
   ``bench/game_strength.py`` plays the close pairings and the mirrors.

Writes bench/results/game_pool.json (the decks, every round-robin game, the close pairings) and caches the
pool's card database in var/bench/game-pool-card-data.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import itertools
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from bench.harness.games import CARD_DATA, POOL, save_card_data
from bench.harness.paths import command
from bench.harness.report import write_result

os.environ.setdefault("OMP_NUM_THREADS", "1")
from bench.harness.pool_decks import (BASICS, Support, _names, corpus_support,  # noqa: F401 - re-exported
                                      sample_pool_entries, tournament_decks)


def write_card_data(records: dict, decks: list[dict]) -> Path:
    names = {n for d in decks for n, _ in d["main"]} | BASICS
    by_name = _names(records)
    return save_card_data([records[by_name[n]] for n in names if n in by_name], CARD_DATA)


def _play(job: dict) -> dict:
    from gameplay.core.engine.adapter import PhaseEngine
    from gameplay.core.matches.roundrobin import expand, play_match

    global _ENGINE
    if _ENGINE is None:
        _ENGINE = PhaseEngine(str(CARD_DATA))
    c0 = time.process_time()
    out = play_match(_ENGINE, expand(job["cards"][0]), expand(job["cards"][1]), seed=job["seed"],
                     player="engine:VeryHard", max_decisions=job["max_decisions"])
    return {**{k: v for k, v in job.items() if k != "cards"}, **out, "cpu_seconds": round(time.process_time() - c0, 2)}


_ENGINE = None


def round_robin_jobs(decks: list[dict], games: int, seed: int, max_decisions: int) -> list[dict]:
    """Every pairing of two different decks (a mirror needs no measuring: the same deck sits on both sides),
    its ``games`` games one after the other with the seats swapped each game; the pairings in a shuffled
    order fixed by ``seed``, so a run cut short has measured whole pairings drawn from the whole pool."""
    import random

    index = {d["name"]: d for d in decks}
    pairings = list(itertools.combinations(index, 2))
    random.Random(seed).shuffle(pairings)
    jobs = []
    for p, (a, b) in enumerate(pairings):
        for g in range(games):
            seats = [a, b] if g % 2 == 0 else [b, a]
            jobs.append({"pairing": [a, b], "seats": seats, "game": g, "seed": seed + p * 100 + g // 2,
                         "cards": [index[seats[0]]["main"], index[seats[1]]["main"]], "max_decisions": max_decisions})
    return jobs


def close_pairings(games: list[dict], close: float, decks: list[str] = ()) -> list[dict]:
    """Each measured pairing's deck record, and the mirrors of ``decks``; close when neither deck won more than
    ``close`` of its decided games (at least two), a mirror always."""
    by: dict[tuple, dict] = {(d, d): {"pairing": [d, d], "games": 0, "decided": 0, "wins": {d: 0}} for d in decks}
    for g in games:
        a, b = g["pairing"]
        e = by.setdefault((a, b), {"pairing": [a, b], "games": 0, "decided": 0, "wins": {a: 0, b: 0}})
        e["games"] += 1
        if g.get("winner") in (0, 1) and not g.get("error"):
            e["decided"] += 1
            e["wins"][g["seats"][g["winner"]]] += 1
    out = []
    for (a, b), e in by.items():
        top = max(e["wins"].values()) / e["decided"] if e["decided"] and a != b else None
        e["deck_share"] = None if top is None else round(top, 3)
        e["mirror"] = a == b
        e["close"] = e["mirror"] or (top is not None and e["decided"] >= 2 and top <= close)
        out.append(e)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--formats", nargs="+",
                        default=["Pauper", "Modern", "Standard", "Pioneer", "Legacy", "Premodern", "Vintage"])
    parser.add_argument("--per-format", type=int, default=1)
    parser.add_argument("--pauper", type=int, default=2, help="Pauper decks (the sample decks' format)")
    parser.add_argument("--games", type=int, default=2, help="games per pairing (seats swapped)")
    parser.add_argument("--seed", type=int, default=7000)
    parser.add_argument("--procs", type=int, default=1)
    parser.add_argument("--max-decisions", type=int, default=1200)
    parser.add_argument("--max-minutes", type=float, default=30.0)
    parser.add_argument("--close", type=float, default=0.65)
    args = parser.parse_args(argv)
    started = time.time()
    records, problems = corpus_support()
    decks = sample_pool_entries() + tournament_decks(records, problems, args.formats, args.per_format, {"Pauper": args.pauper})
    write_card_data(records, decks)
    supported = sum(p == [] for p in problems.values())
    print(f"{supported} of {len(problems)} cards looked at fully supported; pool of {len(decks)} decks "
          f"({time.time() - started:.0f}s)", flush=True)
    jobs = round_robin_jobs(decks, args.games, args.seed, args.max_decisions)
    games: list[dict] = []
    report = {"benchmark": "game_pool", "date": dt.datetime.now().isoformat(timespec="seconds"),
              "command": command("game_pool", argv),
              "cards_supported": supported, "cards_looked_at": len(problems), "decks": decks,
              "settings": {k: v for k, v in vars(args).items()}}

    def write():
        report["games"] = games
        report["pairings"] = close_pairings(games, args.close, [d["name"] for d in decks])
        report["close"] = [p["pairing"] for p in report["pairings"] if p["close"]]
        report["run_seconds"] = round(time.time() - started, 1)
        write_result(report, POOL, newline=False, indent=1)

    deadline = started + args.max_minutes * 60
    import multiprocessing as mp

    with ProcessPoolExecutor(max_workers=max(1, args.procs), mp_context=mp.get_context("spawn")) as pool:
        pending = iter(jobs)
        running = {pool.submit(_play, j) for j in itertools.islice(pending, args.procs)}
        while running:
            for f in as_completed(running):
                running.remove(f)
                g = f.result()
                games.append(g)
                print(f"[{len(games)}/{len(jobs)}] {g['seats'][0]} vs {g['seats'][1]}: winner {g['winner']} "
                      f"turns {g['turns']} cpu {g['cpu_seconds']}s" + (f" ERROR {g['error']}" if g.get("error") else ""),
                      flush=True)
                write()
                if time.time() < deadline:
                    nxt = next(pending, None)
                    if nxt is not None:
                        running.add(pool.submit(_play, nxt))
                break
    write()
    close = [p for p in report["pairings"] if p["close"] and not p["mirror"]]
    print(f"{len(games)} games; {len(close)} close pairings (deck share <= {args.close}) + "
          f"{sum(p['mirror'] for p in report['pairings'])} mirrors; wrote {POOL}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
