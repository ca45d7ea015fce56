"""Deck-completion benchmark: quality against three baselines on a date-held-out split, and latency.

    python bench/completion.py [--stack services|embedded] [--n 200] [--known 10 20 40] [--latency-runs 10]

Quality: `manage.py eval_completion` on the corpus decks first seen on/after the split date (the
active diffusion model was trained only on earlier decks; the baselines are fitted on the same
earlier decks). Latency: one full 60 + 15 completion with the fast (DDIM) and the full (1000-step
DDPM) sampler, next to the nearest-deck baseline in the same process.
Writes bench/results/completion.json and bench/results/completion.svg (recall against K).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", choices=["services", "embedded"], default="services")
    parser.add_argument("--n", type=int, default=200, help="held-out decks per K")
    parser.add_argument("--known", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--latency-runs", type=int, default=10)
    parser.add_argument("--full-runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    os.environ["MTG_STACK"] = args.stack
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mtgsite.settings")
    import django

    django.setup()
    import numpy as np
    import torch
    from django.conf import settings
    from django.core.management import call_command

    from decks.completion import get_completer
    from ml.datasets import DEFAULT_SPLIT
    from ml.registry import active_version

    corpus = Path(settings.MTG_DATA_DIR) / "mtg_decklistcache" / "decks_60main_15side.jsonl.xz"
    version = active_version("deck_diffusion")
    split = version.config.get("split_date", DEFAULT_SPLIT)
    RESULTS.mkdir(parents=True, exist_ok=True)
    quality_path = RESULTS / "completion-quality.tmp.json"
    started = time.perf_counter()
    call_command("eval_completion", decks=str(corpus), known=args.known, out=str(quality_path), n=args.n,
                 seed=args.seed, from_date=split, split_date=split)
    quality = json.loads(quality_path.read_text())
    quality_path.unlink()

    # Latency: one completion of a real held-out deck's first 10 cards, fast vs full sampler vs nearest deck.
    completer = get_completer()
    known = [("Lightning Bolt", 4), ("Monastery Swiftspear", 4), ("Mountain", 2)]
    completer.complete(known, [], "modern", seed=0)  # warm-up
    fast = []
    for i in range(args.latency_runs):
        t0 = time.perf_counter()
        completer.complete(known, [], "modern", seed=i, sampler="fast")
        fast.append(time.perf_counter() - t0)
    full = []
    for i in range(args.full_runs):
        t0 = time.perf_counter()
        completer.complete(known, [], "modern", seed=i, sampler="full")
        full.append(time.perf_counter() - t0)
    nearest_rate = quality["results"].get("nearest", {}).get(str(args.known[0]), {}).get("per_second")

    figures = {
        "fast_sampler_seconds_median": round(statistics.median(fast), 3),
        "fast_sampler_seconds_p90": round(float(np.percentile(fast, 90)), 3),
        "full_sampler_seconds_median": round(statistics.median(full), 3),
        "full_over_fast": round(statistics.median(full) / statistics.median(fast), 1),
        "nearest_deck_seconds_per_completion": round(1 / nearest_rate, 4) if nearest_rate else None,
        "torch_threads": torch.get_num_threads(),
        "device": "cuda" if torch.cuda.is_available() else "cpu",
    }
    out = {
        "benchmark": "completion",
        "command": "python bench/completion.py " + " ".join(sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "torch": torch.__version__},
        "stack": args.stack,
        "model": {"version": version.version, "config": version.config["model"], "metrics": version.metrics,
                  "split_date": split},
        "quality": {"n": args.n, "known": args.known, "decks_file": str(corpus), "held_out_from": split,
                    "results": quality["results"], "fit_seconds": quality["fit_seconds"]},
        "latency": figures,
        "seconds": round(time.perf_counter() - started, 1),
    }
    (RESULTS / "completion.json").write_text(json.dumps(out, indent=2))
    (RESULTS / "completion.svg").write_text(recall_svg(out["quality"]))

    print(f"{'method':<13} " + " ".join(f"K={k:<3} main  side  valid" for k in args.known))
    for method, per_k in quality["results"].items():
        print(f"{method:<13} " + " ".join(
            f"{per_k[str(k)]['main_recall']:>9.3f} {per_k[str(k)]['side_recall']:.3f} {per_k[str(k)]['valid_share']:.3f}"
            for k in args.known))
    print(json.dumps(figures, indent=1))
    return 0


def recall_svg(quality: dict) -> str:
    """Main recall against K for every method, as a small dependency-free SVG line chart."""
    colors = {"diffusion": "#d9531e", "nearest": "#23479b", "cooccurrence": "#2e8b57", "popularity": "#888888"}
    Ks = quality["known"]
    W, H, L, B = 520, 300, 50, 40
    x = lambda k: L + (W - L - 20) * (Ks.index(k) / max(1, len(Ks) - 1))  # noqa: E731
    y = lambda r: 20 + (H - B - 20) * (1 - r)  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
             f'<text x="{W / 2}" y="14" text-anchor="middle">Main-deck recall on held-out decks (K known cards)</text>']
    for r in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{L}" x2="{W - 20}" y1="{y(r)}" y2="{y(r)}" stroke="#ddd"/>'
                     f'<text x="{L - 6}" y="{y(r) + 4}" text-anchor="end">{r:.2f}</text>')
    for k in Ks:
        parts.append(f'<text x="{x(k)}" y="{H - B + 18}" text-anchor="middle">K={k}</text>')
    for i, (method, per_k) in enumerate(quality["results"].items()):
        pts = " ".join(f"{x(k):.1f},{y(per_k[str(k)]['main_recall']):.1f}" for k in Ks)
        color = colors.get(method, "#000")
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2.5"/>')
        parts += [f'<circle cx="{x(k):.1f}" cy="{y(per_k[str(k)]["main_recall"]):.1f}" r="3.5" fill="{color}"/>' for k in Ks]
        parts.append(f'<text x="{L + 8 + 120 * i}" y="{H - 6}" fill="{color}">■ {method}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
