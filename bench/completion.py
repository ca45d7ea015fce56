"""Deck-completion benchmark: the masked model against retrieval baselines on decks held out by date, and latency.

    python -m bench.completion [--stack services|embedded] [--n 400] [--known 10 20 40] [--latency-runs 60]
                               [--mana-n 150] [--ablation "label=<ModelVersion id>[@steps=N]" ...]
                               [--rank-ablation "label=<deck_rank ModelVersion id>" ...]

Quality: every corpus deck first seen on/after the active deck_masked version's split date (the model was
trained, and every method's retrieval index / statistics fitted, only on earlier decks). Each method completes
the same ``n`` decks from the same K known main cards (the training masking rule); main recall, sideboard
recall, share of legal 60 + 15 outputs. The headline compares the masked model deck by deck with the tuned vote
(``TunedVoteBaseline``, the strongest simple baseline: wins / losses, sign test), on all held-out decks and on
the slice whose main deck never appears verbatim among the training decks. The tuned vote's parameters are
chosen first, on the validation month (the decks of the month before the split date, the vote fitted on the
decks before that month; never on the held-out decks), over a small grid (``--tune-n`` decks per K; 0 = the
defaults of ``VoteParams``). Manamorphosis (the continuous model)
is scored on the first ``mana-n`` of the same decks. Ablations: other deck_masked versions (e.g. trained
without text-initialised embeddings, or without retrieval) on the same decks; "gate 1" is the neighbour vote.

The masked model is the site's completer: with an active ``deck_rank`` version its sideboard comes from the
deck-level ranker (decks/completion/models/deckrank.py); the ablations then add the denoiser's own sideboard
("no deck-level ranker") and every ``--rank-ablation label=<deck_rank version id>`` (e.g. the ranker without set
attention, without card features). ``per_format``: the model against the tuned vote in every format with at least
100 evaluated (deck, K) pairs.

Latency: one full 60 + 15 completion through the name-based API (what a user request runs), the masked
model and the neighbour vote and nearest-deck baselines in the same process on the same requests.
Writes bench/results/completion.json and bench/results/completion.svg (main recall against K).
"""
from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import os
import sys
import time
from pathlib import Path

from bench.harness.machine import machine
from bench.harness.paths import RESULTS, command, setup_django
from bench.harness.report import write_result

PER_DECK = ("rows", "main_recall_per_deck", "side_recall_per_deck")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", choices=["services", "embedded"], default="services")
    parser.add_argument("--n", type=int, default=400, help="held-out decks per K (the same for every method)")
    parser.add_argument("--known", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--latency-runs", type=int, default=60)
    parser.add_argument("--mana-n", type=int, default=150, help="decks for the (slow) Manamorphosis model; 0 = skip")
    parser.add_argument("--ablation", action="append", default=[],
                        help="label=ModelVersion id (deck_masked), optionally @steps=N (main unmasking rounds)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tune-n", type=int, default=300,
                        help="validation-month decks per K to tune the vote on (0: VoteParams' defaults)")
    parser.add_argument("--rank-ablation", action="append", default=[],
                        help="label=<deck_rank ModelVersion id>: the masked model with that sideboard ranker instead")
    parser.add_argument("--add-ablations", action="store_true",
                        help="only score the --ablation and --rank-ablation versions and add them to the existing "
                             "results file")
    args = parser.parse_args()

    os.environ["MTG_STACK"] = args.stack
    setup_django()
    import numpy as np
    import torch
    from django.conf import settings

    from decks.core.rules import FORMATS
    from decks.completion.models.baselines import (
        CooccurrenceBaseline, NearestDeckBaseline, PopularityBaseline, TunedVoteBaseline)
    from decks.completion.models.evaluate import compare, paired, sample_test_rows
    from decks.completion.evaluation import file_arrays
    from decks.completion.completers import build_masked_completer, figures_versions, rank_variant
    from decks.completion.evaluation import DiffusionMethod
    from decks.completion.datasets import DEFAULT_SPLIT, card_tables, deck_arrays, split_day
    from decks.completion.models.deck_arrays import card_popularity, split_by_date
    from decks.embeddings.service import active_embeddings
    from ml.models import ModelVersion

    started = time.perf_counter()
    torch.set_num_threads(1)
    corpus = Path(settings.MTG_DATA_DIR) / "mtg_decklistcache" / "decks_60main_15side.jsonl.xz"
    names = active_embeddings().names
    V = len(names)
    tables = card_tables(names)
    # the versions the figures come from: the shipped dated-split ones when the active ones are refits on every deck
    figures_masked, figures_rank = figures_versions()
    masked = build_masked_completer(version=figures_masked, split_date=None, rank=False)  # to read its split date
    version = masked.version
    split = (version.config.get("split_date") if version is not None else None) or DEFAULT_SPLIT
    del masked
    masked = build_masked_completer(version=figures_masked, split_date=split, rank=figures_rank)  # + its ranker
    rank_version = masked.rank_version
    train, _ = split_by_date(deck_arrays(names), split_day(split))
    test, skipped = file_arrays(corpus, names, split, None)
    popularity = card_popularity(train, V)
    print(f"train decks {len(train)}, held-out decks {len(test)} (from {split}; {skipped} skipped)", flush=True)

    # decks whose main deck never appears verbatim among the training decks
    seen = {row.tobytes() for row in np.sort(train.main, axis=1).astype(np.int32)}
    novel = np.array([row.tobytes() not in seen for row in np.sort(test.main, axis=1).astype(np.int32)])
    rows_all = sample_test_rows(len(test), args.n, args.seed)
    novel_idx = np.flatnonzero(novel)
    rows_novel = novel_idx[sample_test_rows(novel_idx.size, args.n, args.seed + 1)]

    kw = dict(restricted=tables.restricted)

    def ablation_completer(spec: str):
        """'label=<ModelVersion id>[@steps=N]' -> (label, that version's completer, N main rounds if given)."""
        label, _, rest = spec.partition("=")
        pk, _, option = rest.partition("@")
        # the figures version's sideboard ranker (the active one may be a refit that saw the held-out decks)
        other = build_masked_completer(version=ModelVersion.objects.get(pk=int(pk)), split_date=split,
                                       rank=figures_rank)
        if option:
            name, _, value = option.partition("=")
            if name != "steps":
                parser.error(f"--ablation {spec!r}: only @steps=N is understood")
            other.steps = int(value)
        return label, other

    if args.add_ablations:  # the same decks and masks as the results file's run
        out = json.loads((RESULTS / "completion.json").read_text())
        others = [ablation_completer(spec) for spec in args.ablation]  # every version loads before any is scored
        for spec in args.rank_ablation:  # deck_rank versions: the site's completer with that sideboard ranker
            label, _, pk = spec.partition("=")
            others.append((label, rank_variant(masked, names, ModelVersion.objects.get(pk=int(pk)))))
        for label, other in others:
            r = compare({"a": other.complete_idx}, test, popularity, args.known, args.n, args.seed, tables.legal,
                        tables.copy_limit, decks=rows_all, **kw)["a"]
            out["ablation"][label] = {str(K): {"main_recall": r[K]["main_recall"], "side_recall": r[K]["side_recall"],
                                               "valid_share": r[K]["valid_share"]} for K in args.known}
            print(label, {K: round(r[K]["main_recall"], 4) for K in args.known})
        out["command"] += " && " + command("completion")
        write_result(out, RESULTS / "completion.json", newline=False)
        return 0
    fit = lambda cls: cls().fit(train, V, tables.legal, tables.copy_limit, restricted=tables.restricted)  # noqa: E731
    params, tuning = tune_vote(train, split, V, tables, popularity, args, kw)
    print("tuned vote", params.to_dict(), round(time.perf_counter() - started), "s", flush=True)
    tuned = TunedVoteBaseline(params).fit(train, V, tables.legal, tables.copy_limit, restricted=tables.restricted)
    methods = {"masked": masked.complete_idx, "tuned_vote": tuned.complete, "neighbour_vote": masked.vote.complete,
               "nearest": fit(NearestDeckBaseline), "popularity": fit(PopularityBaseline),
               "cooccurrence": fit(CooccurrenceBaseline)}
    quality = compare(methods, test, popularity, args.known, args.n, args.seed, tables.legal, tables.copy_limit,
                      decks=rows_all, **kw)
    print("main slice done", round(time.perf_counter() - started), "s", flush=True)
    novel_q = compare({k: methods[k] for k in ("masked", "tuned_vote", "neighbour_vote", "nearest")}, test, popularity, args.known,
                      args.n, args.seed, tables.legal, tables.copy_limit, decks=rows_novel, **kw)
    ablation = {}
    if args.mana_n > 0:
        from decks.completion.service import get_completer

        try:
            mana = DiffusionMethod(get_completer("manamorphosis"), names, "fast", 50)
            quality["manamorphosis"] = compare({"m": mana}, test, popularity, args.known, args.mana_n, args.seed,
                                               tables.legal, tables.copy_limit, decks=rows_all[:args.mana_n], **kw)["m"]
        except Exception as exc:  # noqa: BLE001 - the variant is optional; say why it is missing
            print(f"manamorphosis skipped: {exc}")
    if masked.side_ranker is not None:  # the deck-level sideboard ranker's ablations, on the same corpus index
        plain = copy.copy(masked).with_side_ranker(None, None)
        ablation["no deck-level ranker (the denoiser's sideboard)"] = compare(
            {"a": plain.complete_idx}, test, popularity, args.known, args.n, args.seed, tables.legal, tables.copy_limit,
            decks=rows_all, **kw)["a"]
        for spec in args.rank_ablation:
            label, _, pk = spec.partition("=")
            other = rank_variant(masked, names, ModelVersion.objects.get(pk=int(pk)))
            ablation[label] = compare({"a": other.complete_idx}, test, popularity, args.known, args.n, args.seed,
                                      tables.legal, tables.copy_limit, decks=rows_all, **kw)["a"]
    gate_used = masked.gate if masked.gate is not None else (float(masked.model.gate()) if masked.model else 1.0)
    side_gate = masked.gate_for(1) if masked.gate_for(1) is not None else gate_used
    gates_label = f"gate {gate_used:.2f}" + (f", sideboard {side_gate:.2f}" if side_gate != gate_used else "")
    ablation = {"gate 1 (neighbour vote, no learned model)": quality["neighbour_vote"],
                f"full model (inference {gates_label}" + (", deck_rank sideboard" if masked.side_ranker is not None else "")
                + ")": quality["masked"], **ablation}
    if masked.model is not None and masked.gate is not None:
        learned = copy.copy(masked)
        learned.gate = learned.side_gate = None  # the gate as trained
        label = f"full model, trained gate {float(masked.model.gate().detach()):.2f}"
        ablation[label] = compare({"a": learned.complete_idx}, test, popularity, args.known, args.n, args.seed,
                                  tables.legal, tables.copy_limit, decks=rows_all, **kw)["a"]
    for spec in args.ablation:
        label, other = ablation_completer(spec)
        ablation[label] = compare({"a": other.complete_idx}, test, popularity, args.known, args.n, args.seed,
                                  tables.legal, tables.copy_limit, decks=rows_all, **kw)["a"]

    def head_to_head(q):
        out = {}
        for K in args.known:
            best = "tuned_vote"
            out[str(K)] = {"against": best,
                           "main": paired(q["masked"][K]["main_recall_per_deck"], q[best][K]["main_recall_per_deck"]),
                           "side": paired(q["masked"][K]["side_recall_per_deck"],
                                          q[best][K]["side_recall_per_deck"])}
        return out

    paired_all, paired_novel = head_to_head(quality), head_to_head(novel_q)

    # latency: the name-based request path, same requests for every method
    lat_rng = np.random.default_rng(args.seed)
    reqs = []
    for d in lat_rng.choice(len(test), size=args.latency_runs, replace=False):
        cards, counts = np.unique(test.main[d][:10], return_counts=True)
        reqs.append(([(names[c], int(n)) for c, n in zip(cards, counts)], FORMATS[int(test.fmt[d])],
                     test.main[d][:10], int(test.fmt[d])))
    masked.complete(reqs[0][0], [], reqs[0][1])  # warm-up

    def timed(fn):
        out = []
        for req in reqs:
            t0 = time.perf_counter()
            fn(req)
            out.append(time.perf_counter() - t0)
        return np.array(out)

    t_masked = timed(lambda r: masked.complete(r[0], [], r[1]))
    t_vote = timed(lambda r: masked.vote.complete(r[2], [], r[3]))
    t_tuned = timed(lambda r: tuned.complete(r[2], [], r[3]))
    t_near = timed(lambda r: methods["nearest"].complete(r[2], [], r[3]))
    pct = lambda a, q: round(float(np.percentile(a, q)) * 1000, 1)  # noqa: E731
    latency = {"runs": len(reqs), "torch_threads": torch.get_num_threads(),
               "masked_ms_p50": pct(t_masked, 50), "masked_ms_p95": pct(t_masked, 95),
               "neighbour_vote_ms_p50": pct(t_vote, 50), "neighbour_vote_ms_p95": pct(t_vote, 95),
               "tuned_vote_ms_p50": pct(t_tuned, 50), "tuned_vote_ms_p95": pct(t_tuned, 95),
               "nearest_ms_p50": pct(t_near, 50), "nearest_ms_p95": pct(t_near, 95),
               "masked_over_nearest_p50": round(float(np.median(t_masked) / np.median(t_near)), 1),
               "masked_over_vote_p50": round(float(np.median(t_masked) / np.median(t_vote)), 1),
               "steps": masked.steps, "side_steps": masked.side_steps, "gate": gate_used, "side_gate": side_gate}

    def strip(q):
        return {m: {str(K): {k: v for k, v in r.items() if k not in PER_DECK} for K, r in per_k.items()}
                for m, per_k in q.items()}

    legality = legality_summary({"all": quality["masked"], "novel": novel_q["masked"]}, args.known)
    out = {
        "benchmark": "completion",
        "command": command("completion"),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(torch=torch.__version__),
        "stack": args.stack,
        "model": None if version is None else {"kind": "deck_masked", "version": version.version,
                                               "config": {k: v for k, v in version.config.items() if k != "cards"},
                                               "metrics": version.metrics},
        "side_ranker": None if rank_version is None else {"kind": "deck_rank", "version": rank_version.version,
                                                          "config": rank_version.config,
                                                          "metrics": rank_version.metrics},
        "per_format": per_format(quality, test, args.known, FORMATS),
        "headline": headline(quality, paired_all, args.known),
        "vote_tuning": tuning,
        "split_date": split, "train_decks": len(train), "held_out_decks": len(test),
        "held_out_novel_decks": int(novel.sum()), "n": args.n, "known": args.known,
        "quality": strip(quality), "quality_novel": strip(novel_q),
        "paired": paired_all, "paired_novel": paired_novel,
        "ablation": {label: {str(K): {"main_recall": r[K]["main_recall"], "side_recall": r[K]["side_recall"],
                                      "valid_share": r[K]["valid_share"]} for K in args.known}
                     for label, r in ablation.items()},
        "legality": legality,
        "latency": latency,
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_result(out, RESULTS / "completion.json", newline=False)
    (RESULTS / "completion.svg").write_text(recall_svg(out["quality"], args.known))

    print(f"{'method':<16} " + " ".join(f"K={k:<3} main  side  valid " for k in args.known))
    for label, q in (("", quality), ("novel: ", novel_q)):
        for method, per_k in q.items():
            print(f"{label + method:<16} " + " ".join(
                f"{per_k[k]['main_recall']:>9.3f} {per_k[k]['side_recall']:.3f} {per_k[k]['valid_share']:.3f}"
                for k in args.known))
    for label, p in (("all", paired_all), ("novel", paired_novel)):
        for K, r in p.items():
            m = r["main"]
            print(f"paired {label} K={K} vs {r['against']}: main {m['wins']}-{m['losses']} (p={m['sign_test_p']:.2g}), "
                  f"side {r['side']['wins']}-{r['side']['losses']} (p={r['side']['sign_test_p']:.2g})")
    print(json.dumps(latency, indent=1))
    return 0


def legality_summary(results: dict, known) -> dict:
    """What the validity check found for the site's completer: per slice and K the share of valid 60 + 15 decks,
    the share keeping every given card, the outputs with an added card not legal in the format and the decks whose
    given cards include one the legality table does not allow; and where that table's rows came from."""
    from django.db.models import Count

    from decks.core.rules import FORMATS
    from decks.models import Legality

    sources = dict(Legality.objects.filter(format__in=FORMATS).values("source").annotate(n=Count("id"))
                   .values_list("source", "n"))
    out = {"checked": "60 + 15 cards, every given card kept (multiset), copy limits over main + side (restricted: 1), "
                      "every card legal in the format by card_tables() (the Legality table's legal / restricted rows "
                      "and the basic lands: the table the site's completer masks with)",
           "legality_rows_by_source": sources}
    for label, per_k in results.items():
        out[label] = {str(K): {"n": r["n"], "valid_share": round(r["valid_share"], 4),
                               "kept_given_share": round(1 - r["invalid"]["known"] / max(r["n"], 1), 4),
                               "added_illegal": r["added_illegal"], "given_illegal": r["given_illegal"]}
                      for K, r in per_k.items() if K in known}
    return out


def tune_vote(train, split: str, V, tables, popularity, args, kw):
    """The tuned vote's parameters: the best mean main + side recall over K on the validation month (the decks first
    seen in the month before the split, the vote fitted on the decks before that month), over a small grid."""
    import itertools

    import numpy as np

    from decks.completion.models.baselines import TunedVoteBaseline, VoteParams
    from decks.completion.models.deck_arrays import split_by_date
    from decks.completion.models.evaluate import compare, sample_test_rows

    from decks.completion.datasets import split_day

    if args.tune_n <= 0:
        return VoteParams(), {"skipped": "--tune-n 0: VoteParams defaults"}
    first = dt.date.fromisoformat(split)
    month = (first.replace(day=1) - dt.timedelta(days=1)).replace(day=1).isoformat()  # the month before the split
    fit_part, val = split_by_date(train, split_day(month))
    rows = sample_test_rows(len(val), args.tune_n, args.seed)
    vote = TunedVoteBaseline().fit(fit_part, V, tables.legal, tables.copy_limit, restricted=tables.restricted)
    grid = {}
    for n, kernel, days in itertools.product((25, 50, 100), (10.0, 20.0, 40.0), (30.0, 60.0, 120.0)):
        params = vote.params = VoteParams(neighbours=n, kernel=kernel, recency_days=days)
        r = compare({"v": vote.complete}, val, popularity, args.known, args.tune_n, args.seed, tables.legal,
                    tables.copy_limit, decks=rows, **kw)["v"]
        score = float(np.mean([r[K]["main_recall"] + r[K]["side_recall"] for K in args.known]) / 2)
        grid[f"N={n} kernel={kernel:g} recency={days:g}d"] = {
            "score": round(score, 4), **{f"K={K}": [round(r[K]["main_recall"], 4), round(r[K]["side_recall"], 4)]
                                        for K in args.known}}
        print("vote", params.to_dict(), round(score, 4), flush=True)
    best = max(grid, key=lambda k: grid[k]["score"])
    n, kernel, days = (float(x.split("=")[1].rstrip("d")) for x in best.split())
    chosen = VoteParams(neighbours=int(n), kernel=kernel, recency_days=days)
    return chosen, {"validation_month": month[:7], "validation_decks": len(val), "fit_decks": len(fit_part),
                    "n": args.tune_n,
                    "chosen": chosen.to_dict(), "score": "mean over K of (main recall + side recall) / 2",
                    "grid": grid}


def per_format(quality: dict, test, Ks, formats, least: int = 100) -> dict:
    """Per format with at least ``least`` evaluated (deck, K) pairs over all K: the masked model against the tuned
    vote, main and side (mean recall, paired sign test)."""
    import numpy as np

    from decks.completion.models.evaluate import paired

    fm = np.asarray(test.fmt).astype(np.int64)
    out = {}
    for f, name in enumerate(formats):
        pairs = {"main": ([], []), "side": ([], [])}
        for K in Ks:
            m, v = quality["masked"][K], quality["tuned_vote"][K]
            sel = fm[np.asarray(m["rows"])] == f
            for board in ("main", "side"):
                pairs[board][0].extend(np.asarray(m[f"{board}_recall_per_deck"])[sel].tolist())
                pairs[board][1].extend(np.asarray(v[f"{board}_recall_per_deck"])[sel].tolist())
        n = len(pairs["main"][0])
        if n < least:
            continue
        row = {"pairs": n}
        for board, (a, b) in pairs.items():
            p = paired(a, b)
            row[board] = {"model": round(float(np.nanmean(a)), 4), "tuned_vote": round(float(np.nanmean(b)), 4),
                          "wins": p["wins"], "losses": p["losses"], "sign_test_p": p["sign_test_p"]}
        out[name] = row
    return out


def headline(quality: dict, paired_all: dict, Ks) -> dict:
    """Per K: the masked model against the tuned vote, main and side recall, the paired per-deck sign test."""
    out = {}
    for K in Ks:
        m, v, p = quality["masked"][K], quality["tuned_vote"][K], paired_all[str(K)]
        out[f"K={K}"] = (f"main {m['main_recall']:.3f} vs tuned vote {v['main_recall']:.3f} "
                         f"({p['main']['wins']}-{p['main']['losses']}, p={p['main']['sign_test_p']:.2g}); "
                         f"side {m['side_recall']:.3f} vs {v['side_recall']:.3f} "
                         f"({p['side']['wins']}-{p['side']['losses']}, p={p['side']['sign_test_p']:.2g})")
    return out


def recall_svg(quality: dict, Ks) -> str:
    """Main recall against K for every method, as a small dependency-free SVG line chart."""
    colors = {"masked": "#d9531e", "tuned_vote": "#b5179e", "neighbour_vote": "#7b3fa0", "nearest": "#23479b", "cooccurrence": "#2e8b57",
              "popularity": "#888888", "manamorphosis": "#c9a227"}
    W, H, L, B = 700, 320, 50, 44
    x = lambda k: L + (W - L - 20) * (Ks.index(k) / max(1, len(Ks) - 1))  # noqa: E731
    y = lambda r: 20 + (H - B - 20) * (1 - r)  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
             f'<text x="{W / 2}" y="14" text-anchor="middle">Main-deck recall on held-out decks (K known cards)</text>']
    for r in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<line x1="{L}" x2="{W - 20}" y1="{y(r)}" y2="{y(r)}" stroke="#ddd"/>'
                     f'<text x="{L - 6}" y="{y(r) + 4}" text-anchor="end">{r:.2f}</text>')
    for k in Ks:
        parts.append(f'<text x="{x(k)}" y="{H - B + 16}" text-anchor="middle">K={k}</text>')
    for i, (method, per_k) in enumerate(quality.items()):
        pts = " ".join(f"{x(k):.1f},{y(per_k[str(k)]['main_recall']):.1f}" for k in Ks)
        color = colors.get(method, "#000")
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2.5"/>')
        parts += [f'<circle cx="{x(k):.1f}" cy="{y(per_k[str(k)]["main_recall"]):.1f}" r="3.5" fill="{color}"/>'
                  for k in Ks]
        parts.append(f'<text x="{L + 4 + 106 * i}" y="{H - 6}" fill="{color}">■ {method}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
