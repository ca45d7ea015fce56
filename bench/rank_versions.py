"""deck_rank versions through the site's completer, on the validation month only.

    python -m bench.rank_versions VERSION_ID [VERSION_ID ...] [--stack embedded] [--n 1500] [--known 10 20 40]

``bench.rank_study`` scores rankers by a proxy (the top 15 candidate slots, the main deck the tuned vote
completes). This bench runs what a user gets: the active deck_masked model's main deck, then the sideboard of each
given deck_rank version (its own retrieval parameters), on decks of the validation month (the month before the
active deck_masked version's split date) with the corpus of the decks first seen before that month; the tuned vote
(the parameters ``bench.completion`` chose) beside them. The held-out decks (on/after the split date) are never
read. Every version completes the same decks from the same known cards; each is compared deck by deck with the
first version given and with the tuned vote (sign test, per K and pooled).

The masked model was trained on decks up to the split date, the validation month included, so the main decks
here are better than on held-out decks: compare rankers with each other on these figures, not with the held-out
ones.

Writes bench/results/rank_versions.json (and .md).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import time

from bench.harness.machine import machine
from bench.harness.paths import RESULTS, command, setup_django
from bench.harness.report import write_result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", type=int, nargs="+", help="deck_rank ModelVersion ids (the first: the reference)")
    parser.add_argument("--stack", choices=["services", "embedded"], default="embedded")
    parser.add_argument("--n", type=int, default=1500, help="validation decks per K")
    parser.add_argument("--known", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()

    os.environ["MTG_STACK"] = args.stack
    setup_django()
    import numpy as np
    import torch

    from common.stats import sign_test
    from decks.completion.completers import build_masked_completer, rank_variant
    from decks.completion.datasets import DEFAULT_SPLIT, card_tables, deck_arrays, split_day
    from decks.completion.models.baselines import TunedVoteBaseline, VoteParams
    from decks.completion.models.deck_arrays import card_popularity, split_by_date
    from decks.completion.models.deckrank import month_start
    from decks.completion.models.evaluate import compare, paired, sample_test_rows
    from decks.embeddings.service import active_embeddings
    from ml.models import ModelVersion

    started = time.perf_counter()
    torch.set_num_threads(1)
    try:
        versions = [ModelVersion.objects.get(pk=pk, kind="deck_rank") for pk in args.versions]
    except ModelVersion.DoesNotExist:
        parser.error(f"each id must be a deck_rank version (manage.py models list deck_rank): {args.versions}")
    masked = build_masked_completer(split_date=None, rank=False)
    split = ((masked.version.config.get("split_date") if masked.version is not None else None) or DEFAULT_SPLIT)
    month = str(np.datetime64(month_start(split_day(split) - 1, 0), "D"))  # the validation month's first day
    names = active_embeddings().names
    V = len(names)
    tables = card_tables(names)
    train, _ = split_by_date(deck_arrays(names), split_day(split))   # the held-out decks are dropped here
    corpus, val = split_by_date(train, split_day(month))
    popularity = card_popularity(corpus, V)
    rows = sample_test_rows(len(val), args.n, args.seed)
    masked = build_masked_completer(split_date=month, rank=False)
    params = VoteParams()
    tuned_from = "VoteParams defaults"
    if (RESULTS / "completion.json").exists():
        chosen = json.loads((RESULTS / "completion.json").read_text()).get("vote_tuning", {}).get("chosen")
        if chosen:
            params, tuned_from = VoteParams(**chosen), "bench/results/completion.json"
    vote = TunedVoteBaseline(params).fit(corpus, V, tables.legal, tables.copy_limit, restricted=tables.restricted)
    methods = {"tuned_vote": vote.complete}
    labels = {}
    for v in versions:
        site = rank_variant(masked, names, v)
        label = f"v{v.version} (id {v.pk}, query_mix {site.rank_index.params.query_mix:g})"
        labels[label] = v
        methods[label] = site.complete_idx
    quality = compare(methods, val, popularity, args.known, args.n, args.seed, tables.legal, tables.copy_limit,
                      decks=rows, restricted=tables.restricted)
    reference = next(iter(labels))
    out = {}
    for label, v in labels.items():
        entry = {"rank": v.config.get("rank")}
        for board in ("main", "side"):
            entry[f"{board}_recall"] = {str(K): round(quality[label][K][f"{board}_recall"], 4) for K in args.known}
        for other in ("tuned_vote", reference):
            if other == label:
                continue
            per_k = {str(K): paired(quality[label][K]["side_recall_per_deck"],
                                    quality[other][K]["side_recall_per_deck"]) for K in args.known}
            wins = sum(p["wins"] for p in per_k.values())
            losses = sum(p["losses"] for p in per_k.values())
            entry[f"side_against_{'vote' if other == 'tuned_vote' else 'reference'}"] = {
                **{K: {"mean_difference": round(p["mean_difference"], 4), "wins": p["wins"], "losses": p["losses"],
                       "sign_test_p": p["sign_test_p"]} for K, p in per_k.items()},
                "pooled": {"wins": wins, "losses": losses, "sign_test_p": sign_test(wins, losses)}}
        out[label] = entry
        print(label, entry["side_recall"], flush=True)
    doc = {
        "benchmark": "rank_versions", "command": command("rank_versions"),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(torch=torch.__version__), "stack": args.stack,
        "deck_masked": {"version": masked.version.version if masked.version is not None else None,
                        "split_date": split},
        "validation_month": month[:7], "corpus_decks": len(corpus), "validation_decks": len(val), "n": args.n,
        "known": args.known, "reference": reference,
        "tuned_vote": {"params": params.to_dict(), "from": tuned_from,
                       "side_recall": {str(K): round(quality["tuned_vote"][K]["side_recall"], 4) for K in args.known}},
        "versions": out,
        "seconds": round(time.perf_counter() - started, 1),
    }
    path = write_result(doc, RESULTS / "rank_versions.json")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
