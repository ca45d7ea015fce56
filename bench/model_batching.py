"""Deck-completion batching benchmark: throughput and per-job latency for batch sizes 1, 4, 8.

    python -m bench.model_batching [--stack services|embedded] [--n 32] [--known 20] [--sizes 1 4 8] [--repeats 2]

The same N partial decks (the first K main-deck cards of real decks first seen on or after the active
model's split date; sideboard generated) go through ``Completer.complete_many`` of the active
card_embeddings + deck_diffusion versions (what the inference task runs, on the device of MTG_DEVICE:
CUDA when available by default) in chunks of each batch size, in one process. Throughput = N / total wall time; a job's latency
is its chunk's wall time (a job waits for its whole batch). Each size gets a warm-up chunk first and the
whole pass is repeated ``--repeats`` times (the best pass is kept). Writes bench/results/model_batching.json.
Skips (exit 0, with a message) when no active models or no corpus are available.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import lzma
import os
import statistics
import sys
import time
from pathlib import Path

from bench.harness.machine import machine
from bench.harness.paths import RESULTS, command, setup_django
from bench.harness.report import write_result



def partial_decks(corpus: Path, since: str, n: int, known: int, completer) -> list[tuple[list, str]]:
    """(first ``known`` main cards, format) of the first ``n`` decks first seen on/after ``since`` whose cards the
    completer knows."""
    out = []
    with lzma.open(corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            deck = json.loads(line)
            if str(deck.get("date", "")) < since:
                continue
            taken, left = [], known
            for name, count in deck.get("main", []):
                if left <= 0:
                    break
                if name not in completer.index:
                    taken = None
                    break
                taken.append((name, min(int(count), left)))
                left -= taken[-1][1]
            if not taken:
                continue
            out.append((taken, str(deck.get("format") or "modern")))
            if len(out) == n:
                break
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", choices=["services", "embedded"], default="services")
    parser.add_argument("--n", type=int, default=32, help="partial decks (completion jobs)")
    parser.add_argument("--known", type=int, default=20, help="known main-deck cards per job")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--steps", type=int, default=50, help="DDIM steps (the task's default is 50)")
    args = parser.parse_args()

    os.environ["MTG_STACK"] = args.stack
    setup_django()
    import numpy as np
    import torch
    from django.conf import settings

    from decks.completion.service import get_completer
    from decks.completion.datasets import DEFAULT_SPLIT
    from decks.completion.models.common import CompletionError
    from ml.registry import NoActiveModel, active_version

    try:
        completer = get_completer("manamorphosis")
        version = active_version("deck_diffusion")
    except NoActiveModel as exc:
        print(f"SKIPPED: no active completion models in the {args.stack} stack's registry ({exc}).")
        return 0
    corpus = Path(settings.MTG_DATA_DIR) / "mtg_decklistcache" / "decks_60main_15side.jsonl.xz"
    if not corpus.exists():
        print(f"SKIPPED: the deck corpus {corpus} is missing (set MTG_DATA_DIR).")
        return 0
    split = version.config.get("split_date", DEFAULT_SPLIT)
    decks = partial_decks(corpus, split, args.n, args.known, completer)
    if len(decks) < max(args.sizes):
        print(f"SKIPPED: only {len(decks)} usable decks on/after {split} in {corpus}.")
        return 0
    requests = [(main, [], fmt) for main, fmt in decks]
    seeds = list(range(len(requests)))

    def run_pass(size: int) -> tuple[float, list[float], int]:
        latencies, errors = [], 0
        started = time.perf_counter()
        for start in range(0, len(requests), size):
            t0 = time.perf_counter()
            outs = completer.complete_many(requests[start:start + size], seeds=seeds[start:start + size], steps=args.steps)
            if completer.device.type == "cuda":
                torch.cuda.synchronize()
            took = time.perf_counter() - t0
            latencies += [took] * len(outs)
            errors += sum(isinstance(o, CompletionError) for o in outs)
        return time.perf_counter() - started, latencies, errors

    rows = {}
    for size in args.sizes:
        completer.complete_many(requests[:size], seeds=seeds[:size], steps=args.steps)  # warm-up (allocations, kernels)
        best = min((run_pass(size) for _ in range(args.repeats)), key=lambda r: r[0])
        total, lat, errors = best
        rows[str(size)] = {
            "jobs": len(requests), "seconds": round(total, 3), "jobs_per_second": round(len(requests) / total, 2),
            "latency_median_s": round(statistics.median(lat), 3),
            "latency_p90_s": round(float(np.percentile(lat, 90)), 3), "errors": errors,
        }
        print(f"batch {size}: {rows[str(size)]}", flush=True)
    base = rows[str(args.sizes[0])]
    for row in rows.values():
        row["throughput_vs_batch_1"] = round(row["jobs_per_second"] / base["jobs_per_second"], 2)
        row["latency_vs_batch_1"] = round(row["latency_median_s"] / base["latency_median_s"], 2)

    device = str(completer.device)
    out = {
        "benchmark": "model_batching",
        "command": command("model_batching"),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(torch=torch.__version__, torch_threads=torch.get_num_threads(),
                           gpu=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None),
        "device": device,
        "stack": args.stack,
        "model": {"version": version.version, "parameters": sum(p.numel() for p in completer.model.parameters()),
                  "config": version.config.get("model")},
        "workload": {"jobs": len(requests), "known_main_cards": args.known, "sideboard": "generated",
                     "sampler": "fast (DDIM)", "steps": args.steps, "decks_from": split, "decks_file": str(corpus),
                     "formats": dict(sorted({f: sum(1 for _, g in decks if g == f) for _, f in decks}.items()))},
        "results": rows,
    }
    write_result(out, RESULTS / "model_batching.json", newline=False)
    print(json.dumps({"device": device, "results": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
