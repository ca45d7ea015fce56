"""Evaluate deck completion against three baselines on any deck file in the corpus layout.

Each deck keeps K main cards (seeded, the training masking rule), the rest of the main deck and the
whole sideboard are generated; scores are main recall, side recall, share of fully valid outputs and
completions per second, for the completion model (method ``diffusion``: the masked model by default,
``--model manamorphosis`` for the continuous one) and the popularity, co-occurrence and nearest-deck
baselines (fitted on the corpus decks first seen before --split-date; so is the masked model's retrieval index).
"""
from __future__ import annotations

import datetime as dt
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from decks.core.catalogue import DataError, read_deck_corpus
from decks.core.rules import FORMATS, normalize_format
from decks.management.importing import progress
from ml.datasets import DEFAULT_SPLIT, EPOCH, card_tables, deck_arrays, split_day
from ml.registry import NoActiveModel

METHODS = ("diffusion", "popularity", "cooccurrence", "nearest")


def file_arrays(path: Path, names: list[str], from_date: str | None, limit: int | None):
    """Decks of a corpus-layout file whose 60 + 15 cards are all known -> DeckArrays (+ how many were skipped)."""
    from ml.diffusion.data import DeckArrays

    index = {n: i for i, n in enumerate(names)}
    folded = {}
    for i, n in enumerate(names):
        folded.setdefault(n.split(" // ")[0], i)
    decks, _, bad = read_deck_corpus(path)
    rows, skipped = [], 0
    for d in decks.values():
        if from_date and (d.first_seen or "") < from_date:
            continue
        fmt = normalize_format(d.format)
        if fmt is None:
            skipped += 1
            continue

        def expand(entries):
            out = []
            for name, count in entries:
                i = index.get(name, folded.get(name))
                if i is None:
                    return None
                out += [i] * count
            return out
        main, side = expand(d.main), expand(d.side)
        if main is None or side is None or len(main) != 60 or len(side) != 15:
            skipped += 1
            continue
        day = (dt.date.fromisoformat(d.first_seen) - EPOCH).days if d.first_seen else 0
        rows.append((main, side, FORMATS.index(fmt), day, d.occurrences))
    if limit:
        rows = rows[:limit]
    return DeckArrays.from_decks(rows), skipped + len(bad)


class DiffusionMethod:
    """Adapter from the evaluation's index interface to the name-based Completer."""

    def __init__(self, completer, names, sampler: str, steps: int):
        self.completer, self.names, self.sampler, self.steps = completer, names, sampler, steps
        self.index = {n: i for i, n in enumerate(names)}

    def __call__(self, main_known, side_known, fmt, seed):
        def counts(idx):
            u, c = np.unique(np.asarray(idx, dtype=np.int64), return_counts=True)
            return [(self.names[i], int(n)) for i, n in zip(u, c)]
        done = self.completer.complete(counts(main_known), counts(side_known), FORMATS[int(fmt)], seed=int(seed),
                                       sampler=self.sampler, steps=self.steps)
        expand = lambda pairs: np.array([self.index[n] for n, c in pairs for _ in range(c)], dtype=np.int64)
        return expand(done.main), expand(done.side)


class Command(BaseCommand):
    help = "Evaluate deck completion (diffusion vs popularity, co-occurrence, nearest-deck) on a corpus-layout file."

    def add_arguments(self, parser):
        parser.add_argument("--decks", required=True, help="JSONL(.xz) in the corpus layout")
        parser.add_argument("--known", type=int, nargs="+", required=True, help="K: main cards kept per deck")
        parser.add_argument("--out", required=True, help="results JSON")
        parser.add_argument("--n", type=int, default=300, help="decks evaluated (the same for every method and K)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--methods", default=",".join(METHODS),
                            help="diffusion is the model chosen by --model")
        parser.add_argument("--model", choices=["masked", "manamorphosis"], default="masked",
                            help="the completion model scored as method 'diffusion': masked (default, retrieval over "
                                 "the decks before --split-date + the active deck_masked version) or manamorphosis")
        parser.add_argument("--sampler", choices=["fast", "full"], default="fast", help="manamorphosis only")
        parser.add_argument("--steps", type=int, default=50, help="fast-sampler steps (manamorphosis only)")
        parser.add_argument("--from-date", help="only decks first seen on or after this date (a held-out split)")
        parser.add_argument("--split-date", default=DEFAULT_SPLIT, help="baselines fit on corpus decks before it")

    def handle(self, *args, **opts):
        from ml.completion.baselines import CooccurrenceBaseline, NearestDeckBaseline, PopularityBaseline
        from ml.completion.evaluate import compare
        from ml.diffusion.data import card_popularity, split_by_date
        from ml.embeddings.service import active_embeddings

        methods = [m.strip() for m in opts["methods"].split(",") if m.strip()]
        unknown = [m for m in methods if m not in METHODS]
        if unknown or not methods:
            raise CommandError(f"Unknown method(s) {unknown}; choose from {', '.join(METHODS)}.")
        if any(k < 1 or k > 59 for k in opts["known"]):
            raise CommandError("K must be between 1 and 59.")
        try:
            emb = active_embeddings()
        except NoActiveModel as exc:
            raise CommandError(str(exc))
        names = emb.names
        try:
            test, skipped = file_arrays(Path(opts["decks"]), names, opts["from_date"], None)
        except DataError as exc:
            raise CommandError(str(exc))
        if len(test) == 0:
            raise CommandError("No deck of the file could be evaluated (every deck has unknown cards or is not 60 + 15).")
        self.stdout.write(f"{len(test)} decks to sample from ({skipped} skipped); n={opts['n']}, K={opts['known']}")
        tables = card_tables(names)
        train, _ = split_by_date(deck_arrays(names), split_day(opts["split_date"]))
        V = len(names)
        popularity = card_popularity(train, V)

        fns = {}
        fit_seconds = {}
        for name, cls in (("popularity", PopularityBaseline), ("cooccurrence", CooccurrenceBaseline),
                          ("nearest", NearestDeckBaseline)):
            if name in methods:
                t0 = time.perf_counter()
                fns[name] = cls().fit(train, V, tables.legal, tables.copy_limit, restricted=tables.restricted)
                fit_seconds[name] = round(time.perf_counter() - t0, 2)
        version = None
        if "diffusion" in methods and opts["model"] == "masked":
            from ml.completion_service import build_masked_completer

            t0 = time.perf_counter()
            try:
                completer = build_masked_completer(split_date=opts["split_date"])
            except NoActiveModel as exc:
                raise CommandError(str(exc))
            fit_seconds["diffusion"] = round(time.perf_counter() - t0, 2)
            fns = {"diffusion": completer.complete_idx, **fns}
            version = completer.version
            if version is None:
                self.stdout.write("no active deck_masked version: scoring the neighbour vote (the model's prior)")
        elif "diffusion" in methods:
            from decks.completion import get_completer
            from ml.registry import active_version

            try:
                fns = {"diffusion": DiffusionMethod(get_completer("manamorphosis"), names, opts["sampler"],
                                                    opts["steps"]), **fns}
                version = active_version("deck_diffusion")
            except NoActiveModel as exc:
                raise CommandError(str(exc))

        bar = progress(total=1, desc="evaluating", unit="deck")

        def report(done, total, label):
            bar.total = total
            bar.n = done
            bar.set_description(label)
            bar.refresh()

        started = time.perf_counter()
        results = compare(fns, test, popularity, opts["known"], opts["n"], opts["seed"], tables.legal, tables.copy_limit,
                          progress=report, restricted=tables.restricted)
        bar.close()
        out = {
            "command": " ".join(["manage.py", "eval_completion", *sys.argv[2:]]) if sys.argv[1:2] == ["eval_completion"]
            else "manage.py eval_completion",
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"platform": platform.platform(), "python": platform.python_version()},
            "decks_file": str(opts["decks"]), "from_date": opts["from_date"], "split_date": opts["split_date"],
            "n": opts["n"], "known": opts["known"], "seed": opts["seed"], "model": opts["model"],
            "sampler": opts["sampler"],
            "steps": opts["steps"], "fit_seconds": fit_seconds, "seconds": round(time.perf_counter() - started, 1),
            "diffusion_version": {"id": version.pk, "kind": version.kind, "version": version.version,
                                  "config": {k: v for k, v in version.config.items() if k != "cards"},
                                  "metrics": version.metrics} if version else None,
            "results": {m: {str(k): r for k, r in per_k.items()} for m, per_k in results.items()},
        }
        Path(opts["out"]).parent.mkdir(parents=True, exist_ok=True)
        Path(opts["out"]).write_text(json.dumps(out, indent=2, default=_json_default))
        header = f"{'method':<13}" + "".join(f"  K={k:<3} main  side  valid" for k in opts["known"])
        self.stdout.write(header)
        for m, per_k in results.items():
            row = f"{m:<13}" + "".join(f"  {per_k[k]['main_recall']:>10.3f} {per_k[k]['side_recall']:.3f} {per_k[k]['valid_share']:.3f}"
                                        for k in opts["known"])
            self.stdout.write(row)
        self.stdout.write(self.style.SUCCESS(f"-> {opts['out']}"))


def _json_default(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(type(value))
