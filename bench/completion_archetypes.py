"""One completion per archetype (issue 36, part 4): on held-out inputs whose nearest decks split into two or more
archetype groups, the best of the per-archetype completions against today's single completion, and how coherent
each is; and the latency of a request with and without archetypes.

    python -m bench.completion_archetypes [--n 300] [--known 10 20 40] [--latency-runs 60] [--seed 0]

Held-out decks: the corpus lists first seen on/after the active deck_masked version's split date (the honest split
of bench/completion.py: the site's completer with its index of the decks before that date), the same decks and the
same K known main cards (``known_mask``, the bench's masking rule). An input is *ambiguous* when the nearest decks
split into 2 or 3 groups (``decks.completion.models.archetypes``). On those:

- **recall**: the share of the hidden main-deck cards recovered by today's single completion, by the first
  archetype (the largest share), and by the best of the returned archetypes (an oracle choice among at most 3
  tabs: what a player who picks the right tab gets);
- **coherence**: a generated main deck's overlap (copies counted) with its nearest real deck of the format among
  the decks before the split (the 50 most like it by the IDF-weighted retrieval): 1.0 = a deck someone played.
  Reported for today's single completion, each archetype's completion, and the share of inputs where each
  archetype's completion is more coherent than the single one.

Latency: the full name-based request (60 + 15, with archetypes) on ``--latency-runs`` held-out inputs at K = 10,
split by how many archetypes came back. Writes bench/results/completion_archetypes.json (+ .md).
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

from bench.harness.machine import machine
from bench.harness.paths import RESULTS, command, setup_django
from bench.harness.report import write_result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="held-out decks per K")
    parser.add_argument("--known", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--latency-runs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split", default=None, help="default: the active deck_masked version's split date")
    args = parser.parse_args()
    os.environ.setdefault("MTG_STACK", "embedded")
    setup_django()
    import numpy as np
    import torch
    from django.conf import settings

    from decks.completion.completers import build_masked_completer, figures_versions
    from decks.completion.datasets import DEFAULT_SPLIT, deck_arrays, split_day
    from decks.completion.evaluation import file_arrays
    from decks.completion.models.deck_arrays import card_popularity, split_by_date
    from decks.completion.models.evaluate import known_mask, multiset_difference, multiset_overlap, sample_test_rows
    from decks.core.rules import FORMATS
    from decks.embeddings.service import active_embeddings

    started, cpu0 = time.perf_counter(), time.process_time()
    torch.set_num_threads(1)
    names = active_embeddings().names
    split = args.split
    figures_masked, figures_rank = figures_versions()  # the dated-split versions when the active ones are refits
    if split is None:
        version = build_masked_completer(version=figures_masked, split_date=None, rank=False).version
        split = (version.config.get("split_date") if version is not None else None) or DEFAULT_SPLIT
    site = build_masked_completer(version=figures_masked, split_date=split, rank=figures_rank)
    corpus = Path(settings.MTG_DATA_DIR) / "mtg_decklistcache" / "decks_60main_15side.jsonl.xz"
    test, _ = file_arrays(corpus, names, split, None)
    train, _ = split_by_date(deck_arrays(names), split_day(split))
    popularity = card_popularity(train, len(names))  # the masking rule of bench/completion.py: the same known cards
    rows = sample_test_rows(len(test), args.n, args.seed)
    print(f"held-out decks {len(test)} from {split}; {rows.size} per K", flush=True)

    per_k = {}
    for K in args.known:
        inputs = amb = 0
        single_r, first_r, best_r = [], [], []
        single_c, group_c, first_c, more_coherent, groups_n = [], [], [], [], []
        for d in rows.tolist():
            row = test.main[d].astype(np.int64)
            row = row[row >= 0]
            fmt = int(test.fmt[d])
            mask = known_mask(row, K, popularity, args.seed, d)
            known, hidden = row[mask], row[~mask]
            (main, _), groups = site.archetypes_idx(known, np.zeros(0, np.int64), fmt, generate_side=False)
            inputs += 1
            if len(groups) < 2 or hidden.size == 0:
                continue
            amb += 1
            recall = lambda m: multiset_overlap(multiset_difference(m, known), hidden) / hidden.size  # noqa: E731
            r_groups = [recall(g[1]) for g in groups]
            single_r.append(recall(main))
            first_r.append(r_groups[0])
            best_r.append(max(r_groups))
            c_single = site.nearest_overlap(main, fmt)
            c_groups = [site.nearest_overlap(g[1], fmt) for g in groups]
            single_c.append(c_single)
            group_c += c_groups
            first_c.append(c_groups[0])
            more_coherent += [c > c_single for c in c_groups]
            groups_n.append(len(groups))
        mean = lambda x: round(float(np.mean(x)), 4) if x else None  # noqa: E731
        per_k[str(K)] = {
            "inputs": inputs, "ambiguous": amb, "ambiguous_share": round(amb / max(inputs, 1), 4),
            "groups_mean": mean(groups_n),
            "main_recall_single": mean(single_r), "main_recall_first_archetype": mean(first_r),
            "main_recall_best_archetype": mean(best_r),
            "best_minus_single_points": None if not single_r else round(float(100 * (np.mean(best_r) - np.mean(single_r))), 2),
            "best_beats_single_share": mean([b > s for b, s in zip(best_r, single_r)]),
            "best_below_single_share": mean([b < s for b, s in zip(best_r, single_r)]),
            "coherence_single": mean(single_c), "coherence_archetypes": mean(group_c),
            "coherence_first_archetype": mean(first_c),
            "archetype_more_coherent_share": mean(more_coherent),
        }
        print(K, per_k[str(K)], flush=True)

    # latency of the whole request by name (60 + 15, the sideboard ranker, the archetypes)
    lat_rng = np.random.default_rng(args.seed)
    times: dict[int, list[float]] = {}
    picks = lat_rng.choice(len(test), size=min(args.latency_runs, len(test)), replace=False)
    warm = test.main[int(picks[0])][:10]
    site.complete([(names[c], 1) for c in warm], [], FORMATS[int(test.fmt[int(picks[0])])])
    for d in picks.tolist():
        cards, counts = np.unique(test.main[d][:10], return_counts=True)
        req = [(names[c], int(n)) for c, n in zip(cards, counts)]
        t0, c0 = time.perf_counter(), time.process_time()
        out = site.complete(req, [], FORMATS[int(test.fmt[d])])
        times.setdefault(len(out.archetypes), []).append((time.perf_counter() - t0, time.process_time() - c0))
    pct = lambda a, q: round(float(np.percentile(a, q)) * 1000, 1)  # noqa: E731
    # wall time, and the process's CPU time (what the request costs when the 2 cores are shared with other work)
    latency = {str(k): {"requests": len(v), "ms_p50": pct([w for w, _ in v], 50), "ms_p95": pct([w for w, _ in v], 95),
                        "cpu_ms_p50": pct([c for _, c in v], 50), "cpu_ms_p95": pct([c for _, c in v], 95)}
               for k, v in sorted(times.items())}
    print("latency by archetypes returned", latency, flush=True)
    out = {
        "benchmark": "completion_archetypes", "command": command("completion_archetypes"),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "machine": machine(torch=torch.__version__),
        "split_date": split, "held_out_decks": len(test), "n": int(rows.size), "known": args.known,
        "model": None if site.version is None else {"kind": "deck_masked", "version": site.version.version},
        "side_ranker": None if site.rank_version is None else {"kind": "deck_rank", "version": site.rank_version.version},
        "per_k": per_k, "latency_by_archetypes_returned": latency,
        "seconds": round(time.perf_counter() - started, 1), "cpu_seconds": round(time.process_time() - cpu0, 1),
    }
    write_result(out, RESULTS / "completion_archetypes.json", newline=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
