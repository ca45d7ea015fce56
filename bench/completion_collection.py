"""Completing from a collection (issue 36, part 1): the deck that can be played against the owned-only deck it
replaced, on held-out decks, with small and large collections; and issue 36's Burn-core case.

    python -m bench.completion_collection [--n 300] [--known 20] [--seed 0]

Held-out decks (first seen on/after the figures version's split date; the completer's index holds the decks before
it). For each deck, K main cards are given (the bench's masking rule) and a collection is made:

- **large**: the deck's own 75 cards + 4 copies of each of the format's 300 most played main-deck and 150 most
  played sideboard cards (the case where the owned-only deck put basic lands in 49 of 300 sideboards);
- **small**: the given cards + half the deck's other cards (copies rounded down), nothing else.

Per method (``owned-only``: the deck built from owned cards alone, as before; ``playable``: the deck shown now):
the share of sideboards holding a basic land where the real sideboard holds none, the share of main decks whose
land count is within the 10 nearest decks' range, the mean number of open (not owned) slots, main recall of the
hidden cards. Writes bench/results/completion_collection.json (+ .md).
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from collections import Counter
from pathlib import Path

from bench.harness.machine import machine
from bench.harness.paths import RESULTS, command, setup_django
from bench.harness.report import write_result

BURN_MAIN = [("Lightning Bolt", 4), ("Goblin Guide", 4), ("Monastery Swiftspear", 4)]
BURN_COLLECTION = BURN_MAIN + [("Mountain", 20), ("Lava Spike", 4), ("Rift Bolt", 4), ("Skewer the Critics", 2)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--known", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("MTG_STACK", "embedded")
    setup_django()
    import numpy as np
    import torch
    from django.conf import settings

    from decks.completion.completers import build_masked_completer, figures_versions
    from decks.completion.datasets import DEFAULT_SPLIT, deck_arrays, split_day
    from decks.completion.evaluation import file_arrays
    from decks.completion.models.baselines import DeckBuilder
    from decks.completion.models.collection import RANGE_DECKS
    from decks.completion.models.deck_arrays import card_popularity, split_by_date
    from decks.completion.models.evaluate import known_mask, multiset_difference, multiset_overlap, sample_test_rows
    from decks.core.rules import FORMATS
    from decks.embeddings.service import active_embeddings

    started, cpu0 = time.perf_counter(), time.process_time()
    torch.set_num_threads(1)
    names = active_embeddings().names
    figures_masked, figures_rank = figures_versions()
    version = build_masked_completer(version=figures_masked, split_date=None, rank=False).version
    split = (version.config.get("split_date") if version is not None else None) or DEFAULT_SPLIT
    site = build_masked_completer(version=figures_masked, split_date=split, rank=figures_rank)
    train, _ = split_by_date(deck_arrays(names), split_day(split))
    popularity = card_popularity(train, len(names))
    test, _ = file_arrays(Path(settings.MTG_DATA_DIR) / "mtg_decklistcache" / "decks_60main_15side.jsonl.xz", names,
                          split, None)
    fit = site.vote.fitted
    basic = np.zeros(len(names), bool)
    basic[site.basics] = True
    land = site.land

    # issue 36's case, by name (what the page and the API run)
    burn = site.complete(BURN_MAIN, [], "modern", collection=BURN_COLLECTION)
    burn_case = {"main": burn.main, "side": burn.side, "not_owned": burn.not_owned, "missing_table": burn.missing_table,
                 "notes": burn.notes, "lands": burn.lands,
                 "lands_in_17_24": 17 <= burn.lands["count"] <= 24,
                 "basic_in_side": any(n in {names[b] for b in site.basics} for n, _ in burn.side)}
    print("burn", burn_case, flush=True)

    rows = sample_test_rows(len(test), args.n, args.seed)
    out_rows = {}
    for size in ("large", "small"):
        stats = {m: {"side_basic_wrong": 0, "lands_in_range": 0, "open_slots": 0, "recall": [], "n": 0}
                 for m in ("owned-only", "playable")}
        for d in rows.tolist():
            row = test.main[d].astype(np.int64)
            row = row[row >= 0]
            side_true = test.side[d].astype(np.int64)
            side_true = side_true[side_true >= 0]
            f = int(test.fmt[d])
            mask = known_mask(row, args.known, popularity, args.seed, d)
            known, hidden = row[mask], row[~mask]
            if size == "large":
                top_main = fit.main_rank[f][:300]
                top_side = fit.side_rank[f][:150]
                have = Counter({int(c): 4 for c in np.concatenate([top_main, top_side])})
                have.update(Counter(row.tolist()) + Counter(side_true.tolist()))
            else:
                rest = Counter(row.tolist()) - Counter(known.tolist())
                have = Counter(known.tolist()) + Counter({c: n // 2 for c, n in rest.items() if n // 2})
            collection = [(names[c], n) for c, n in have.items()]
            owned = site.owned(collection)
            nb, *_, main_o, side_o = site._run(DeckBuilder(fit, f, known.tolist(), [], owned), f, True,
                                               lambda fraction, message: None)
            out = site.complete([(names[c], int(n)) for c, n in Counter(known.tolist()).items()], [], FORMATS[f],
                                collection=collection, archetypes=False)
            idx = site.card_index.position
            main_p = np.array([idx(n) for n, c in out.main for _ in range(c)], dtype=np.int64)
            side_p = np.array([idx(n) for n, c in out.side for _ in range(c)], dtype=np.int64)
            lands_near = np.asarray(site.index.main[nb.rows[:RANGE_DECKS]] @ land.astype(np.int64)).ravel()
            lo, hi = (int(lands_near.min()), int(lands_near.max())) if lands_near.size else (0, 60)
            for m, main, side, open_slots in (("owned-only", main_o, side_o, 0),
                                              ("playable", main_p, side_p, sum(c for _, c in out.not_owned))):
                s = stats[m]
                s["n"] += 1
                s["side_basic_wrong"] += int(basic[side].any() and not basic[side_true].any())
                s["lands_in_range"] += int(lo <= int(land[main].sum()) <= hi)
                s["open_slots"] += open_slots
                if hidden.size:
                    s["recall"].append(multiset_overlap(multiset_difference(main, known), hidden) / hidden.size)
        out_rows[size] = {m: {"decks": s["n"], "side_basic_where_real_has_none": s["side_basic_wrong"],
                              "lands_within_nearest_range_share": round(s["lands_in_range"] / max(s["n"], 1), 4),
                              "open_not_owned_slots_mean": round(s["open_slots"] / max(s["n"], 1), 2),
                              "main_recall": round(float(np.mean(s["recall"])), 4) if s["recall"] else None}
                          for m, s in stats.items()}
        print(size, out_rows[size], flush=True)
    doc = {"benchmark": "completion_collection", "command": command("completion_collection"),
           "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine(torch=torch.__version__), "split_date": split, "n": int(rows.size), "known": args.known,
           "model": None if site.version is None else {"kind": "deck_masked", "version": site.version.version},
           "burn_core_case": burn_case, "collections": out_rows,
           "seconds": round(time.perf_counter() - started, 1), "cpu_seconds": round(time.process_time() - cpu0, 1)}
    write_result(doc, RESULTS / "completion_collection.json", newline=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
