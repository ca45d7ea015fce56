"""Latency of one 60 + 15 completion through the name-based API: the site's completer (masked main deck + the
deck_rank sideboard ranker), the same completer with the denoiser's own sideboard, and the tuned vote, on the same
requests in one process (the latency part of bench/completion.py alone, for a quieter measurement).

    python -m bench.completion_latency [--runs 60] [--repeats 2] [--split 2026-05-01]

Writes bench/results/completion_latency.json.
"""
from __future__ import annotations

import argparse
import copy
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
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--split", default="2026-05-01")
    args = parser.parse_args()
    os.environ.setdefault("MTG_STACK", "embedded")
    setup_django()
    import numpy as np
    import torch
    from django.conf import settings

    from decks.completion.completers import build_masked_completer
    from decks.completion.datasets import card_tables, deck_arrays, split_day
    from decks.completion.evaluation import file_arrays
    from decks.completion.models.baselines import TunedVoteBaseline, VoteParams
    from decks.completion.models.deck_arrays import split_by_date
    from decks.core.rules import FORMATS
    from decks.embeddings.service import active_embeddings

    torch.set_num_threads(1)
    names = active_embeddings().names
    site = build_masked_completer(split_date=args.split)
    plain = copy.copy(site).with_side_ranker(None, None)
    tables = card_tables(names)
    train, _ = split_by_date(deck_arrays(names), split_day(args.split))
    params = VoteParams(100, 10.0, 30.0)  # the bench's tuned choice (bench/results/completion.md)
    tuned = TunedVoteBaseline(params).fit(train, len(names), tables.legal, tables.copy_limit,
                                          restricted=tables.restricted)
    corpus = Path(settings.MTG_DATA_DIR) / "mtg_decklistcache" / "decks_60main_15side.jsonl.xz"
    test, _ = file_arrays(corpus, names, args.split, None)
    reqs = []
    for d in np.random.default_rng(0).choice(len(test), size=args.runs, replace=False):
        cards, counts = np.unique(test.main[d][:10], return_counts=True)
        reqs.append(([(names[c], int(n)) for c, n in zip(cards, counts)], FORMATS[int(test.fmt[d])],
                     test.main[d][:10], int(test.fmt[d])))
    site.complete(reqs[0][0], [], reqs[0][1])  # warm-up
    plain.complete(reqs[0][0], [], reqs[0][1])

    def timed(fn):
        out = []
        for r in reqs:
            t0 = time.perf_counter()
            fn(r)
            out.append(time.perf_counter() - t0)
        return np.array(out) * 1000

    def pct(a):
        return {"p50_ms": round(float(np.median(a)), 1), "p95_ms": round(float(np.percentile(a, 95)), 1)}

    repeats = []
    for _ in range(args.repeats):
        repeats.append({"site (ranked sideboard)": pct(timed(lambda r: site.complete(r[0], [], r[1]))),
                        "masked, denoiser sideboard": pct(timed(lambda r: plain.complete(r[0], [], r[1]))),
                        "tuned vote": pct(timed(lambda r: tuned.complete(r[2], [], r[3])))})
        print(repeats[-1], flush=True)
    out = {"benchmark": "completion_latency", "command": command("completion_latency"),
           "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine(torch=torch.__version__), "runs": args.runs, "known": 10, "torch_threads": 1,
           "side_ranker": None if site.rank_version is None else site.rank_version.version,
           "tuned_vote": params.to_dict(), "repeats": repeats}
    write_result(out, RESULTS / "completion_latency.json", newline=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
