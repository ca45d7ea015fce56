"""What would make the sideboard ranker better? Variants of the deck_rank training, scored on the validation month only.

    python -m bench.rank_study [--stack embedded] [--per-month 6000] [--val 3000] [--gaps 0 1 2] [--seeds 3]

The held-out decks (first seen on/after the shipped split date) are never read. Everything is scored on the
validation month (the month before the active deck_rank version's split date), by the training's own proxy: the
share of the true sideboard among the 15 best-scored candidate slots (``deckrank.topk_recall``).

The validation month is scored three times, with the retrieval corpus ending 0, 1 and 2 months before it
(``--gaps``): the site's corpus ages between imports, and the held-out months run up to three months past the
corpus. Each validation set is split in two fixed halves: the first picks the training epoch (gap 0 only), the
second is scored. Every variant is compared deck by deck with the active version (a sign test over the scored
halves of every gap).

Variants (the training examples are the months before the validation month, ``--per-month`` decks each, cached in
MTG_DATASET_DIR so a rerun only trains):

- ``base vote``: the candidates' own order (no network);
- ``shipped``: the active deck_rank version;
- ``as shipped, retrained``: its network and plan on the two months before the validation month;
- ``4 months``: twice the training decks;
- ``wider and deeper``: width 128, two attention layers, 6 epochs, on the 4 months;
- ``ensemble of N seeds``: the 4-month network trained with ``--seeds`` seeds, their logits averaged;
- ``gap-mixed months``: the 4 months plus three of them again with their corpus 1 and 2 months older.

Writes bench/results/rank_study.json (and .md).
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import time

import numpy as np

from bench.harness.machine import machine
from bench.harness.paths import RESULTS, command, setup_django
from bench.harness.report import write_result

TRAIN_MONTHS = 4
MIXED = ((1, 1), (2, 1), (3, 1), (1, 2), (2, 2), (3, 2))  # (months back, corpus gap) added for the gap-mixed run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", choices=["services", "embedded"], default="embedded")
    parser.add_argument("--per-month", type=int, default=6000, help="training decks per month")
    parser.add_argument("--val", type=int, default=3000, help="validation decks per corpus gap")
    parser.add_argument("--gaps", type=int, nargs="+", default=[0, 1, 2], help="corpus gaps (months) to score at")
    parser.add_argument("--seeds", type=int, default=3, help="members of the ensemble variant")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if 0 not in args.gaps:
        parser.error("--gaps must include 0 (its first half picks the epochs)")

    os.environ["MTG_STACK"] = args.stack
    setup_django()
    import torch
    from django.conf import settings

    from common.stats import sign_test
    from decks.completion.datasets import card_features, card_tables, deck_arrays, names_sha1, split_day
    from decks.completion.models import deckrank as dr
    from decks.completion.models.deck_arrays import card_popularity, split_by_date
    from decks.completion.training import RANK, training_embeddings
    from ml.registry import load_active

    started = time.perf_counter()
    torch.set_num_threads(1)
    loaded = load_active(RANK)
    version = loaded.version
    shipped = dr.ranker_from(loaded.config, loaded.tensors)
    split_date = loaded.config["split_date"]
    names = training_embeddings().names
    arrays = deck_arrays(names)
    split = split_day(split_date)
    train, _ = split_by_date(arrays, split)   # the held-out decks are dropped here, before anything else
    tables = card_tables(names)
    cards = card_features(names)
    popularity = card_popularity(train, len(names))
    params = dr.RankParams.from_dict(loaded.config.get("rank"))
    plan = dr.FitPlan(seed=args.seed)
    val_start = dr.month_start(split - 1, 0)
    key = hashlib.sha1(json.dumps([names_sha1(names), len(arrays), split_date, params.to_dict(),
                                   dr.SLOT_FEATURES, args.per_month, args.val, args.seed]).encode()).hexdigest()[:12]
    cache = settings.MTG_DATASET_DIR / f"rank-study-{key}"
    cache.mkdir(parents=True, exist_ok=True)

    def examples(back: int, gap: int, n: int) -> dr.Examples:
        path = cache / f"back{back}-gap{gap}.npz"
        fields = ("X", "C", "Y", "M", "covered", "K")
        if path.exists():
            with np.load(path) as z:
                return dr.Examples(*(z[k] for k in fields))
        start = dr.month_start(val_start, back)
        end = dr.month_start(val_start, back - 1) if back > 0 else split
        t = time.perf_counter()
        ex = dr.month_examples(train, len(names), tables.legal, tables.copy_limit, tables.restricted, cards,
                               popularity, start, end, n, np.random.default_rng([args.seed, back, gap]), plan, params,
                               gap=gap, seed=args.seed + back)
        if ex is None:
            raise SystemExit(f"no decks {back} month(s) before the validation month")
        with open(path, "wb") as fh:
            np.savez(fh, **{k: getattr(ex, k) for k in fields})
        print(f"examples: {back} month(s) back, corpus gap {gap}: {len(ex)} in {time.perf_counter() - t:.0f} s",
              flush=True)
        return ex

    def rows(ex, idx):
        return dr.Examples(*(getattr(ex, k)[idx] for k in ("X", "C", "Y", "M", "covered", "K")))

    val, pick = {}, None
    for gap in args.gaps:
        ex = examples(0, gap, args.val)
        half = np.random.default_rng([args.seed, 99, gap]).permutation(len(ex))
        val[gap] = (rows(ex, np.sort(half[:len(ex) // 2])), rows(ex, np.sort(half[len(ex) // 2:])))
    pick = val[0][0]
    months = {back: examples(back, 0, args.per_month) for back in range(1, TRAIN_MONTHS + 1)}
    mixed = [examples(back, gap, args.per_month) for back, gap in MIXED]

    def logits(model, ex) -> np.ndarray:
        if model is None:
            return np.where(ex.M, -np.arange(ex.M.shape[1])[None, :], -np.inf).astype(np.float64)
        with torch.no_grad():
            out = np.concatenate([model(torch.from_numpy(ex.X[i:i + 256]), torch.from_numpy(ex.C[i:i + 256]),
                                        torch.from_numpy(ex.M[i:i + 256])).double().numpy()
                                  for i in range(0, len(ex), 256)])
        return np.where(ex.M, out, -np.inf)

    def recall(scores, ex) -> np.ndarray:
        order = np.argsort(-scores, axis=1, kind="stable")
        return np.take_along_axis(ex.Y, order, axis=1)[:, :15].sum(1) / 15.0

    def fit(parts, config: dict, epochs: int, lr: float, seed: int):
        tr = dr.Examples.stack(parts)
        cfg = dr.RankerConfig(context=tr.C.shape[1], **config)
        t = time.perf_counter()
        model = dr.train_ranker(tr.X, tr.C, tr.Y, tr.M, cfg, epochs=epochs, batch=plan.batch, lr=lr, seed=seed,
                                valid=lambda m: float(dr.topk_recall(m, pick).mean()))
        return model, len(tr), time.perf_counter() - t

    shipped_cfg = {k: loaded.config["model"][k] for k in ("width", "layers", "heads")}
    shipped_plan = loaded.config.get("plan") or {}
    ship_epochs, ship_lr = int(shipped_plan.get("epochs", 3)), float(shipped_plan.get("lr", 1e-3))
    four = [months[b] for b in range(TRAIN_MONTHS, 0, -1)]
    variants: dict[str, dict] = {}

    def score(label: str, members: list, trained: int = 0, seconds: float = 0.0, what: str = "") -> None:
        per_gap, all_r = {}, []
        for gap, (_, scored) in val.items():
            s = np.mean([logits(m, scored) for m in members], axis=0) if members else logits(None, scored)
            r = recall(s, scored)
            all_r.append(r)
            per_gap[f"gap {gap}"] = {"all": round(float(r.mean()), 4),
                                     **{f"K={K}": round(float(r[scored.K == K].mean()), 4)
                                        for K in sorted(set(scored.K.tolist()))}}
        variants[label] = {"what": what, "training_examples": trained, "train_seconds": round(seconds, 1),
                           "recall": per_gap, "_r": np.concatenate(all_r)}
        print(f"{label}: " + ", ".join(f"{g} {v['all']:.4f}" for g, v in per_gap.items()), flush=True)

    score("base vote", [], what="the candidates' base-vote order, no network")
    score("shipped", [shipped], what=f"the active deck_rank v{version.version}")
    model, n, secs = fit([months[2], months[1]], shipped_cfg, ship_epochs, ship_lr, args.seed)
    score("as shipped, retrained", [model], n, secs, "its network and plan, 2 months")
    ensemble, total = [], 0.0
    for s in range(max(args.seeds, 1)):
        model, n, secs = fit(four, shipped_cfg, ship_epochs, ship_lr, args.seed + s)
        ensemble.append(model)
        total += secs
        if s == 0:
            score("4 months", [model], n, secs, "its network, twice the decks")
    if len(ensemble) > 1:
        score(f"ensemble of {len(ensemble)} seeds", ensemble, n, total, "the 4-month network, logits averaged")
    model, n, secs = fit(four, {"width": 128, "layers": 2, "heads": 4}, 6, 2e-3, args.seed)
    score("wider and deeper", [model], n, secs, "width 128, 2 attention layers, 6 epochs, 4 months")
    model, n, secs = fit(four + mixed, shipped_cfg, ship_epochs, ship_lr, args.seed)
    score("gap-mixed months", [model], n, secs, "4 months + 3 months again with the corpus 1 and 2 months older")

    base = variants["shipped"]["_r"]
    for label, v in variants.items():
        d = v.pop("_r") - base
        wins, losses = int((d > 1e-9).sum()), int((d < -1e-9).sum())
        v["against_shipped"] = {"mean_difference": round(float(d.mean()), 4), "wins": wins, "losses": losses,
                                "sign_test_p": sign_test(wins, losses) if label != "shipped" else None}
    doc = {
        "benchmark": "rank_study", "command": command("rank_study"),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(torch=torch.__version__), "stack": args.stack,
        "shipped": {"kind": RANK, "version": version.version, "split_date": split_date},
        "validation_month_start": str(np.datetime64(int(val_start), "D")),
        "metric": "share of the true sideboard among the 15 best-scored candidate slots (deckrank.topk_recall)",
        "validation": {f"gap {g}": {"picks_epochs": len(a) if g == 0 else 0, "scored": len(b)}
                       for g, (a, b) in val.items()},
        "training": {"per_month": args.per_month, "months": TRAIN_MONTHS, "gap_mixed": [list(m) for m in MIXED]},
        "variants": variants,
        "seconds": round(time.perf_counter() - started, 1),
    }
    path = write_result(doc, RESULTS / "rank_study.json")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
