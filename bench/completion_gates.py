"""Choose the masked sampler's gates and unmasking rounds on a validation month, never on the held-out decks.

    python -m bench.completion_gates --version ID [--until 2026-05-01] [--n 400] [--known 10 20 40]
                                     [--gates trained 0.6 0.85 1] [--steps 12] [--apply ID ...]

``--version``: a deck_masked version trained with an earlier split date (e.g. ``models train deck_masked --params
'{"split_date": "2026-04-01"}'``). Its validation decks are the corpus decks first seen between its split date and
``--until`` (the shipped model's split date, where the held-out test decks begin); the retrieval index holds
only decks before its split date. The main deck's gate g is swept first (score: main recall summed over K,
the sideboard filled with the same g; with several ``--steps``, every (gate, rounds) pair), then the sideboard's
gate with the chosen main gate and rounds (score: sideboard recall). "trained" in ``--gates`` is the gate the version learned. Every setting is also compared deck by deck
with the neighbour vote (gate 1). ``--apply``: write the chosen gates into those versions' sampler config
(the model that ships, trained with the later split). Writes bench/results/completion_gates.json.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from pathlib import Path

from bench.harness.paths import RESULTS, command, setup_django
from bench.harness.report import write_result



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", choices=["services", "embedded"], default="services")
    parser.add_argument("--version", type=int, required=True, help="ModelVersion id of the validation model")
    parser.add_argument("--until", default="2026-05-01", help="validation decks are first seen before this date")
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--known", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--gates", nargs="+", default=["trained", "0.6", "0.7", "0.85", "1"])
    parser.add_argument("--steps", type=int, nargs="+", default=[12], help="main-deck unmasking rounds to try")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--apply", type=int, nargs="*", default=[], help="ModelVersion ids to write the gates into")
    args = parser.parse_args()

    os.environ["MTG_STACK"] = args.stack
    setup_django()
    import torch
    from django.conf import settings

    from decks.completion.models.evaluate import compare, paired
    from decks.completion.evaluation import file_arrays
    from decks.completion.completers import build_masked_completer
    from decks.completion.datasets import card_tables, deck_arrays, split_day
    from decks.completion.models.deck_arrays import card_popularity, split_by_date
    from decks.embeddings.service import active_embeddings
    from ml.models import ModelVersion

    started = time.perf_counter()
    torch.set_num_threads(1)
    version = ModelVersion.objects.get(pk=args.version, kind="deck_masked")
    split = version.config["split_date"]
    if split >= args.until:
        parser.error(f"the version's split date {split} is not before --until {args.until}")
    names = active_embeddings().names
    V = len(names)
    tables = card_tables(names)
    completer = build_masked_completer(version=version, split_date=split)
    trained_gate = float(completer.model.gate().detach())
    train, _ = split_by_date(deck_arrays(names), split_day(split))
    corpus = Path(settings.MTG_DATA_DIR) / "mtg_decklistcache" / "decks_60main_15side.jsonl.xz"
    after, _ = file_arrays(corpus, names, split, None)
    val, _ = split_by_date(after, split_day(args.until))
    popularity = card_popularity(train, V)
    print(f"validation model v{version.version} (split {split}, learned gate {trained_gate:.3f}); "
          f"{len(val)} validation decks from {split} to {args.until}", flush=True)
    gates = [trained_gate if g == "trained" else float(g) for g in args.gates]
    kw = dict(restricted=tables.restricted)

    def run(gate: float, side_gate: float | None, steps: int | None = None):
        completer.gate, completer.side_gate = gate, side_gate
        completer.steps = steps or best_steps
        return compare({"m": completer.complete_idx}, val, popularity, args.known, args.n, args.seed, tables.legal,
                       tables.copy_limit, **kw)["m"]

    def summary(r, ref):
        return {str(K): {"main_recall": round(r[K]["main_recall"], 4), "side_recall": round(r[K]["side_recall"], 4),
                         "valid_share": r[K]["valid_share"],
                         "main_vs_vote": paired(r[K]["main_recall_per_deck"], ref[K]["main_recall_per_deck"]),
                         "side_vs_vote": paired(r[K]["side_recall_per_deck"], ref[K]["side_recall_per_deck"])}
                for K in args.known}

    best_steps = args.steps[0]
    vote = run(1.0, None)
    main_sweep = {}
    for steps in args.steps:
        for g in gates:
            r = vote if g >= 1.0 else run(g, None, steps)
            key = f"{g:.3f}" if len(args.steps) == 1 else f"{g:.3f}/{steps}"
            main_sweep[key] = {**summary(r, vote), "gate": g, "steps": steps}
            print(f"gate {g:.3f}, {steps} rounds: main " + " ".join(f"{r[K]['main_recall']:.4f}" for K in args.known)
                  + " side " + " ".join(f"{r[K]['side_recall']:.4f}" for K in args.known), flush=True)
    best = max(main_sweep.values(), key=lambda r: sum(r[str(K)]["main_recall"] for K in args.known))
    best_main, best_steps = best["gate"], best["steps"]
    side_sweep = {}
    for g in gates:
        r = run(best_main, g) if best_main < 1.0 else run(1.0, None)
        side_sweep[f"{g:.3f}"] = summary(r, vote)
        print(f"main gate {best_main:.3f}, side gate {g:.3f}: side "
              + " ".join(f"{r[K]['side_recall']:.4f}" for K in args.known), flush=True)
    best_side = max(gates, key=lambda g: sum(side_sweep[f"{g:.3f}"][str(K)]["side_recall"] for K in args.known))
    chosen = {"gate": round(best_main, 4), "side_gate": round(best_side, 4), "steps": best_steps}
    print("chosen:", chosen)
    for pk in args.apply:
        target = ModelVersion.objects.get(pk=pk, kind="deck_masked")
        target.config = {**target.config, "sampler": {**(target.config.get("sampler") or {}), **chosen,
                                                      "chosen_on": f"v{version.version}: {split} to {args.until}"}}
        target.save(update_fields=["config"])
        print(f"wrote {chosen} into deck_masked v{target.version}'s sampler config")
    out = {"benchmark": "completion_gates",
           "command": command("completion_gates"),
           "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "validation_model": {"version": version.version, "split_date": split, "learned_gate": trained_gate},
           "validation_decks": len(val), "until": args.until, "n": args.n, "known": args.known,
           "main_sweep": main_sweep, "side_sweep": side_sweep, "chosen": chosen,
           "seconds": round(time.perf_counter() - started, 1)}
    write_result(out, RESULTS / "completion_gates.json", newline=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
