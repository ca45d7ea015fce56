"""What would make the sideboard ranker better? Variants of the deck_rank training, scored on the validation month only.

    python -m bench.rank_study [--stack embedded] [--per-month 6000] [--val 3000] [--gaps 0 1 2] [--seeds 3]
                               [--query-mix 1 0.5 0.25] [--only recipes|query_mix]

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
- ``before``: the recipe shipped until 2026-11-28 (width 64, one attention layer, 3 epochs at lr 1e-3) on the two
  months before the validation month; the same on ``RANK_DEFAULTS["months"]`` months (4); an ensemble of
  ``--seeds`` such networks, their logits averaged; and on those months plus three of them again with their
  corpus 1 and 2 months older (gap-mixed);
- ``default``: ``RANK_DEFAULTS``' network (width 128, two attention layers, 6 epochs at lr 2e-3) on its months;
- ``default, query mix α`` (``--query-mix``): that recipe on examples whose sideboard retrieval weighs each deck by
  α x its overlap with the finished main deck + (1 - α) x its overlap with the user's cards
  (``RankParams.query_mix``), with validation examples of the same decks and known cards retrieved the same way.

Writes bench/results/rank_study.json (and .md); with ``--only``, rank_study_<only>.json.
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

MIXED = ((1, 1), (2, 1), (3, 1), (1, 2), (2, 2), (3, 2))  # (months back, corpus gap) added for the gap-mixed run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", choices=["services", "embedded"], default="embedded")
    parser.add_argument("--per-month", type=int, default=6000, help="training decks per month")
    parser.add_argument("--val", type=int, default=3000, help="validation decks per corpus gap")
    parser.add_argument("--gaps", type=int, nargs="+", default=[0, 1, 2], help="corpus gaps (months) to score at")
    parser.add_argument("--seeds", type=int, default=3, help="members of the ensemble variant")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--query-mix", type=float, nargs="*", default=[],
                        help="also train RANK_DEFAULTS' recipe on examples whose sideboard retrieval mixes the "
                             "finished main deck with the user's cards by these weights (RankParams.query_mix)")
    parser.add_argument("--only", choices=["recipes", "query_mix"],
                        help="run only these variants (besides the base vote and the shipped version); the results "
                             "go to rank_study_<only>.json")
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
    from decks.completion.training import RANK, RANK_DEFAULTS, training_embeddings
    from ml.registry import NoActiveModel, load_active

    started = time.perf_counter()
    torch.set_num_threads(1)
    try:
        loaded = load_active(RANK)
    except NoActiveModel as exc:
        parser.error(f"{exc} (the study compares against the active deck_rank version: run manage.py setup_site "
                     "or models train deck_rank --activate first)")
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
    train_months = RANK_DEFAULTS["months"]

    def examples(back: int, gap: int, n: int, params: dr.RankParams = params) -> dr.Examples:
        key = hashlib.sha1(json.dumps([names_sha1(names), len(arrays), split_date, params.to_dict(),
                                       dr.SLOT_FEATURES, args.per_month, args.val, args.seed]).encode()).hexdigest()[:12]
        cache = settings.MTG_DATASET_DIR / f"rank-study-{key}"
        cache.mkdir(parents=True, exist_ok=True)
        path = cache / f"back{back}-gap{gap}.npz"
        if path.exists():
            with np.load(path) as z:
                return dr.Examples.from_arrays(z)
        start = dr.month_start(val_start, back)
        end = dr.month_start(val_start, back - 1) if back > 0 else split
        t = time.perf_counter()
        ex = dr.month_examples(train, len(names), tables.legal, tables.copy_limit, tables.restricted, cards,
                               popularity, start, end, n, np.random.default_rng([args.seed, back, gap]), plan, params,
                               gap=gap, seed=args.seed + back)
        if ex is None:
            raise SystemExit(f"no decks {back} month(s) before the validation month")
        with open(path, "wb") as fh:
            np.savez(fh, **ex.arrays())
        print(f"examples: {back} month(s) back, corpus gap {gap}, {params.to_dict()}: {len(ex)} in "
              f"{time.perf_counter() - t:.0f} s", flush=True)
        return ex

    def validation(params: dr.RankParams) -> dict:
        """Per gap: (the half that picks the epochs, the scored half). The decks, their known cards and the halves
        do not depend on ``params``, so every variant is scored on the same decks."""
        out = {}
        for gap in args.gaps:
            ex = examples(0, gap, args.val, params)
            half = np.random.default_rng([args.seed, 99, gap]).permutation(len(ex))
            out[gap] = (ex.subset(np.sort(half[:len(ex) // 2])), ex.subset(np.sort(half[len(ex) // 2:])))
        return out

    val = validation(params)

    def fit(parts, config: dict, epochs: int, lr: float, seed: int, pick: dr.Examples = val[0][0]):
        tr = dr.Examples.stack(parts)
        cfg = dr.RankerConfig(context=tr.C.shape[1], **config)
        t = time.perf_counter()
        model = dr.train_ranker(tr.X, tr.C, tr.Y, tr.M, cfg, epochs=epochs, batch=plan.batch, lr=lr, seed=seed,
                                valid=lambda m: float(dr.topk_recall(m, pick).mean()))
        return model, len(tr), time.perf_counter() - t

    before = {"width": 64, "layers": 1, "heads": 4}   # the recipe shipped until 2026-11-28: 3 epochs at lr 1e-3
    default = {k: RANK_DEFAULTS[k] for k in ("width", "layers", "heads")}
    variants: dict[str, dict] = {}

    def score(label: str, members: list, trained: int = 0, seconds: float = 0.0, what: str = "",
              on: dict = val) -> None:
        per_gap, all_r = {}, []
        for gap, (_, scored) in on.items():
            r = dr.recall_of(np.mean([dr.example_scores(m, scored) for m in members or [None]], axis=0), scored)
            all_r.append(r)
            per_gap[f"gap {gap}"] = {"all": round(float(r.mean()), 4),
                                     **{f"K={K}": round(float(r[scored.K == K].mean()), 4)
                                        for K in sorted(set(scored.K.tolist()))}}
        variants[label] = {"what": what, "training_examples": trained, "train_seconds": round(seconds, 1),
                           "recall": per_gap, "_r": np.concatenate(all_r)}
        print(f"{label}: " + ", ".join(f"{g} {v['all']:.4f}" for g, v in per_gap.items()), flush=True)

    score("base vote", [], what="the candidates' base-vote order, no network")
    score("shipped", [shipped], what=f"the active deck_rank v{version.version}")
    if args.only != "query_mix":
        months = {back: examples(back, 0, args.per_month) for back in range(1, train_months + 1)}
        four = [months[b] for b in range(train_months, 0, -1)]
        model, n, secs = fit([months[2], months[1]], before, 3, 1e-3, args.seed)
        score("before: 2 months, width 64, 1 layer", [model], n, secs,
              "the recipe shipped until 2026-11-28, 3 epochs")
        ensemble, total = [], 0.0
        for s in range(max(args.seeds, 1)):
            model, n, secs = fit(four, before, 3, 1e-3, args.seed + s)
            ensemble.append(model)
            total += secs
            if s == 0:
                score("before, 4 months", [model], n, secs, "the same network, twice the decks")
        if len(ensemble) > 1:
            score(f"before, 4 months, ensemble of {len(ensemble)} seeds", ensemble, n, total, "logits averaged")
        model, n, secs = fit(four, default, RANK_DEFAULTS["epochs"], RANK_DEFAULTS["lr"], args.seed)
        score("default: width 128, 2 layers, 4 months", [model], n, secs,
              f"RANK_DEFAULTS: {RANK_DEFAULTS['epochs']} epochs at lr {RANK_DEFAULTS['lr']}")
        mixed = [examples(back, gap, args.per_month) for back, gap in MIXED]
        model, n, secs = fit(four + mixed, before, 3, 1e-3, args.seed)
        score("before, gap-mixed months", [model], n, secs,
              "4 months + 3 of them again with the corpus 1 and 2 months older")
    for mix in (args.query_mix if args.only != "recipes" else []):
        mixed_params = dr.RankParams(params.neighbours, params.slots, mix)
        on = validation(mixed_params)
        parts = [examples(back, 0, args.per_month, mixed_params) for back in range(train_months, 0, -1)]
        model, n, secs = fit(parts, default, RANK_DEFAULTS["epochs"], RANK_DEFAULTS["lr"], args.seed, pick=on[0][0])
        score(f"default, query mix {mix:g}", [model], n, secs,
              f"RANK_DEFAULTS' recipe; the sideboard's retrieval: {mix:g} x the overlap with the finished main deck "
              f"+ {1 - mix:g} x the overlap with the user's cards", on=on)

    base = variants["shipped"]["_r"]
    for label, v in variants.items():
        d = v.pop("_r") - base
        wins, losses = int((d > 1e-9).sum()), int((d < -1e-9).sum())
        v["against_shipped"] = {"mean_difference": round(float(d.mean()), 4), "wins": wins, "losses": losses,
                                "sign_test_p": sign_test(wins, losses) if label != "shipped" else None}
    doc = {
        "benchmark": "rank_study" if args.only is None else f"rank_study_{args.only}", "command": command("rank_study"),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(torch=torch.__version__), "stack": args.stack,
        "shipped": {"kind": RANK, "version": version.version, "split_date": split_date},
        "validation_month_start": str(np.datetime64(int(val_start), "D")),
        "metric": "share of the true sideboard among the 15 best-scored candidate slots (deckrank.topk_recall)",
        "validation": {f"gap {g}": {"picks_epochs": len(a) if g == 0 else 0, "scored": len(b)}
                       for g, (a, b) in val.items()},
        "training": {"per_month": args.per_month, "months": train_months, "gap_mixed": [list(m) for m in MIXED]},
        "variants": variants,
        "seconds": round(time.perf_counter() - started, 1),
    }
    path = write_result(doc, RESULTS / ("rank_study.json" if args.only is None else f"rank_study_{args.only}.json"))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
