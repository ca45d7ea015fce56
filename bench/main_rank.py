"""The main-deck ranker (issue 36, part 3): train it, choose it on the validation month, then one held-out run.

    python -m bench.main_rank [--months 2] [--per-month 1500] [--val 600] [--n 200] [--held-out 0] [--save PATH]
                              [--masked VERSION] [--split YYYY-MM-DD]

1. **Examples** (``decks.completion.models.mainrank.main_examples``): ``--per-month`` decks of each of the ``--months``
   months before the validation month (the month before the masked model's split date), each completed by the
   site's masked completer whose corpus is the decks before its own month; ``--val`` decks of the validation month.
   Cached under ``MTG_DATASET_DIR``.
2. **Fit** (``fit_main_ranker``): the epoch picked on the validation examples' proxy (the hidden main cards among the
   best-scored slots), against the masked model's own order on the same slots.
3. **Validation month, the whole completer** (``--n`` decks per K, corpus before the month): the masked completer
   with the ranker against without it and the tuned vote, deck by deck (sign test), legality checked.
``--masked VERSION``: the deck_masked version (its number) whose evidence the ranker learns from and that the
validation month's completers use (default: the figures version, else the active one). A version fitted before the
ranker's training months (e.g. split 2026-03-01) gives evidence on those months that is out of sample, as it is at
inference; the validation month and the held-out split stay ``--split`` (default: the figures version's split date).

4. ``--held-out N``: the same on N decks per K published on/after the split date (the figures versions; the ranker's
   examples all predate the split): run it once, after choosing on validation.

Writes bench/results/main_rank.json (and .md); ``--save`` writes the ranker's weights and config (safetensors + JSON).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import time
from pathlib import Path

from bench.harness.machine import machine
from bench.harness.paths import RESULTS, command, setup_django
from bench.harness.report import write_result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", choices=["services", "embedded"], default="embedded")
    parser.add_argument("--months", type=int, default=2)
    parser.add_argument("--per-month", type=int, default=1500)
    parser.add_argument("--val", type=int, default=600)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--listwise", type=float, default=0.0, help="weight of the listwise loss term (0: BCE only)")
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--plain", action="store_true", help="a plain ranker, not a residual on the masked logit")
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--n", type=int, default=200, help="validation-month decks per K for the whole completer")
    parser.add_argument("--held-out", type=int, default=0, help="held-out decks per K (0: none)")
    parser.add_argument("--known", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--save", default="")
    parser.add_argument("--out", default="main_rank", help="the results file's name (bench/results/OUT.json)")
    parser.add_argument("--load", default="", help="weights saved by --save: skip the examples and the fit")
    parser.add_argument("--masked", type=int, default=0,
                        help="deck_masked version number of the evidence (0: the figures version, else the active one)")
    parser.add_argument("--split", default="", help="the held-out split (default: the figures version's split date)")
    args = parser.parse_args()

    os.environ["MTG_STACK"] = args.stack
    setup_django()
    import numpy as np
    import torch
    from django.conf import settings
    from safetensors.torch import load_file, save_file

    from decks.core.rules import FORMATS
    from decks.completion.completers import build_masked_completer, figures_versions
    from decks.completion.datasets import (DEFAULT_SPLIT, card_features, card_tables, deck_arrays, land_mask,
                                           names_sha1, split_day)
    from decks.completion.evaluation import file_arrays
    from decks.completion.models.baselines import TunedVoteBaseline, VoteParams
    from decks.completion.models.deck_arrays import card_popularity, split_by_date
    from decks.completion.models.deckrank import month_start
    from decks.completion.models.evaluate import compare, paired, sample_test_rows
    from decks.completion.models.mainrank import (MAIN_SLOT_FEATURES, RANK_MAIN, MainExamples, MainRanker,
                                                  fit_main_ranker, main_ranker_from,
                                                  month_examples_before)
    from decks.completion.models.rank_features import SlotIndex, context_size
    from decks.completion.models.rank_model import RankerConfig
    from decks.embeddings.service import active_embeddings
    from ml.models import ModelVersion
    from ml.registry import active_version

    started = time.perf_counter()
    torch.set_num_threads(1)
    log = lambda *a: print(f"[{time.perf_counter() - started:7.0f}s]", *a, flush=True)  # noqa: E731
    names = active_embeddings().names
    V = len(names)
    tables = card_tables(names)
    land = land_mask(names)
    cards = card_features(names)
    figures_masked, figures_rank = figures_versions()
    masked_version = figures_masked or active_version("deck_masked")
    split = args.split or (masked_version.config or {}).get("split_date") or DEFAULT_SPLIT
    # the evidence's version: the ranker's examples and the validation month's completers
    evidence = (ModelVersion.objects.get(kind="deck_masked", scope="", version=args.masked) if args.masked
                else figures_masked)
    evidence_split = ((evidence or masked_version).config or {}).get("split_date") or DEFAULT_SPLIT
    val_start = month_start(split_day(split) - 1, 0)
    day = lambda d: str(np.datetime64(int(d), "D"))  # noqa: E731
    arrays = deck_arrays(names)
    train, _ = split_by_date(arrays, split_day(split))   # the held-out decks are dropped here
    popularity = card_popularity(train, V)
    Ks = tuple(args.known)

    def completer_before(first_day: int):
        c = build_masked_completer(version=evidence, split_date=day(first_day), rank=False)
        return c, SlotIndex(c.vote.fitted, cards, RANK_MAIN)

    doc = {"benchmark": "main_rank", "command": command("main_rank"),
           "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine(torch=torch.__version__), "stack": args.stack,
           "deck_masked": {"version": masked_version.version if masked_version else None, "split_date": split},
           "evidence": {"version": (evidence or masked_version).version if (evidence or masked_version) else None,
                        "split_date": evidence_split,
                        "examples_from": day(month_start(val_start, args.months)),
                        # True: the masked model saw the ranker's example decks (its evidence on them is in-sample)
                        "in_sample": bool(split_day(evidence_split) > month_start(val_start, args.months))},
           "validation_month": day(val_start)[:7], "rank": RANK_MAIN.to_dict()}
    config = RankerConfig(slot_features=MAIN_SLOT_FEATURES, context=context_size(len(FORMATS)), width=args.width,
                          layers=args.layers, heads=4)
    if args.load:
        model = main_ranker_from(json.loads(Path(args.load + ".json").read_text()), load_file(args.load))
        doc["fit"] = json.loads(Path(args.load + ".json").read_text()).get("metrics")
    else:
        key = f"{names_sha1(names)[:8]}-{len(arrays)}-{split}-{args.months}-{args.per_month}-{args.val}-{MAIN_SLOT_FEATURES}"
        if args.masked:   # another evidence version: its own examples
            key += f"-masked{evidence.pk}"
        cache = Path(settings.MTG_DATASET_DIR) / f"main-rank-examples-{key}.npz"
        if cache.exists():
            with np.load(cache) as z:
                tr, val = MainExamples.from_arrays(z, "tr_"), MainExamples.from_arrays(z, "val_")
            log(f"examples read back from {cache}")
        else:
            tr, val = month_examples_before(train, split_day(split), args.months, args.per_month, args.val, Ks,
                                            completer_before, land, popularity, log=log)
            cache.parent.mkdir(parents=True, exist_ok=True)
            with open(cache, "wb") as fh:
                np.savez(fh, **tr.arrays("tr_"), **val.arrays("val_"))
        model, metrics = fit_main_ranker(tr, val, config, epochs=args.epochs, lr=args.lr, listwise=args.listwise,
                                         residual=not args.plain, log=log)
        log("fit", metrics)
        doc["fit"] = metrics
        if args.save:
            save_file({k: v.detach().float().contiguous() for k, v in model.state_dict().items()}, args.save)
            Path(args.save + ".json").write_text(json.dumps(
                {"format": "deck-main-rank-v1", "board": "main", "model": config.to_dict(), "rank": RANK_MAIN.to_dict(),
                 "slot_features": MAIN_SLOT_FEATURES, "residual": not args.plain, "names_sha1": names_sha1(names), "split_date": split,
                 "plan": {"months": args.months, "per_month": args.per_month, "val": args.val, "epochs": args.epochs},
                 "metrics": metrics}, indent=1))

    def head_to_head(methods, test, n, label, chosen=None):
        rows = sample_test_rows(len(test), n, args.seed)
        q = compare(methods, test, popularity, Ks, n, args.seed, tables.legal, tables.copy_limit, decks=rows,
                    restricted=tables.restricted)
        out = {}
        for name in methods:
            out[name] = {str(K): {b: round(q[name][K][f"{b}_recall"], 4) for b in ("main", "side")}
                         | {"valid_share": q[name][K]["valid_share"]} for K in Ks}
        for K in Ks:
            for other in ("masked", "tuned_vote"):
                p = paired(q["ranked"][K]["main_recall_per_deck"], q[other][K]["main_recall_per_deck"])
                out["ranked"][str(K)][f"main_vs_{other}"] = {k: (round(v, 4) if isinstance(v, float) else v)
                                                             for k, v in p.items()}
        log(label, json.dumps(out))
        return out

    def tuned_vote(corpus):
        params = VoteParams()
        chosen = json.loads((RESULTS / "completion.json").read_text()).get("vote_tuning", {}).get("chosen")
        if chosen:
            params = VoteParams(**chosen)
        return TunedVoteBaseline(params).fit(corpus, V, tables.legal, tables.copy_limit, restricted=tables.restricted)

    if args.n:
        corpus, val_decks = split_by_date(train, val_start)
        completer, index = completer_before(val_start)
        ranked = completer.__class__.__new__(completer.__class__)
        ranked.__dict__.update(completer.__dict__)
        ranked.main_ranker = MainRanker(model, index, land)
        doc["validation"] = head_to_head({"masked": completer.complete_idx, "ranked": ranked.complete_idx,
                                          "tuned_vote": tuned_vote(corpus).complete}, val_decks, args.n, "validation")
        doc["validation"]["n"] = args.n
        del completer, ranked, index
    if args.held_out:
        corpus_file = Path(settings.MTG_DATA_DIR) / "mtg_decklistcache" / "decks_60main_15side.jsonl.xz"
        test, _ = file_arrays(corpus_file, names, split, None)
        # the sideboard ranker fitted before the split when one is registered (a refit saw the held-out decks);
        # none: the denoiser's sideboard (the main deck, which this bench measures, does not depend on it)
        completer = build_masked_completer(version=figures_masked, split_date=split, rank=figures_rank or False)
        ranked = completer.__class__.__new__(completer.__class__)
        ranked.__dict__.update(completer.__dict__)
        ranked.main_ranker = MainRanker(model, SlotIndex(completer.vote.fitted, cards, RANK_MAIN), land)
        doc["held_out"] = head_to_head({"masked": completer.complete_idx, "ranked": ranked.complete_idx,
                                        "tuned_vote": tuned_vote(train).complete}, test, args.held_out, "held-out")
        doc["held_out"]["n"] = args.held_out
        doc["held_out"]["side_ranker"] = completer.rank_version.version if completer.rank_version else None
    doc["seconds"] = round(time.perf_counter() - started, 1)
    doc["recipe"] = {"residual": not args.plain, "width": args.width, "layers": args.layers, "lr": args.lr,
                     "listwise": args.listwise, "epochs": args.epochs}
    path = write_result(doc, RESULTS / f"{args.out}.json")
    log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
