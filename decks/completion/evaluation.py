"""Deck completion against three baselines on any deck file in the corpus layout (``manage.py eval_completion``,
``bench/completion.py``).

Each deck keeps K main cards (seeded, the training masking rule), the rest of the main deck and the
whole sideboard are generated; scores are main recall, side recall, share of fully valid outputs and
completions per second, for the completion model (method ``diffusion``: the masked model by default,
``model="manamorphosis"`` for the continuous one) and the popularity, co-occurrence and nearest-deck
baselines (fitted on the corpus decks first seen before the split date; so is the masked model's retrieval index).
"""
from __future__ import annotations

import datetime as dt
import platform
import time
from pathlib import Path

from decks.completion.service import get_completer
from decks.core.catalogue import DataError, read_deck_corpus
from decks.core.rules import FORMATS, normalize_format
from decks.completion.models.baselines import CooccurrenceBaseline, NearestDeckBaseline, PopularityBaseline
from decks.completion.models.evaluate import compare
from decks.completion.completers import build_masked_completer
from decks.completion.training import DiffusionMethod
from decks.completion.datasets import DEFAULT_SPLIT, EPOCH, card_tables, deck_arrays, split_day
from decks.completion.models.deck_arrays import DeckArrays, card_popularity, split_by_date
from decks.embeddings.service import active_embeddings
from ml.kinds import TrainingError, settle
from ml.progress import Progress
from ml.registry import NoActiveModel, active_version

METHODS = ("diffusion", "popularity", "cooccurrence", "nearest")
DEFAULTS = {"n": 300, "seed": 0, "methods": ",".join(METHODS), "model": "masked", "sampler": "fast", "steps": 50,
            "from_date": None, "split_date": DEFAULT_SPLIT}


def file_arrays(path: Path, names: list[str], from_date: str | None, limit: int | None):
    """Decks of a corpus-layout file whose 60 + 15 cards are all known -> DeckArrays (+ how many were skipped)."""
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


def evaluate_file(params: dict, progress: Progress) -> dict:
    """The results document of one evaluation: params ``decks`` (a corpus-layout file), ``known`` (the Ks) and
    DEFAULTS' keys; ``results`` holds {method: {K: scores}}."""
    p = settle(params, DEFAULTS)
    methods = [m.strip() for m in p["methods"].split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise TrainingError(f"Unknown method(s) {unknown}; choose from {', '.join(METHODS)}.")
    if any(k < 1 or k > 59 for k in p["known"]):
        raise TrainingError("K must be between 1 and 59.")
    try:
        names = active_embeddings().names
        test, skipped = file_arrays(Path(p["decks"]), names, p["from_date"], None)
    except (NoActiveModel, DataError) as exc:
        raise TrainingError(str(exc)) from None
    if len(test) == 0:
        raise TrainingError("No deck of the file could be evaluated (every deck has unknown cards or is not 60 + 15).")
    progress.log(f"{len(test)} decks to sample from ({skipped} skipped); n={p['n']}, K={p['known']}")
    tables = card_tables(names)
    train, _ = split_by_date(deck_arrays(names), split_day(p["split_date"]))
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
    if "diffusion" in methods and p["model"] == "masked":
        t0 = time.perf_counter()
        try:
            completer = build_masked_completer(split_date=p["split_date"])
        except NoActiveModel as exc:
            raise TrainingError(str(exc)) from None
        fit_seconds["diffusion"] = round(time.perf_counter() - t0, 2)
        fns = {"diffusion": completer.complete_idx, **fns}
        version = completer.version
        if version is None:
            progress.log("no active deck_masked version: scoring the neighbour vote (the model's prior)")
    elif "diffusion" in methods:
        try:
            fns = {"diffusion": DiffusionMethod(get_completer("manamorphosis"), names, p["sampler"], p["steps"]),
                   **fns}
            version = active_version("deck_diffusion")
        except NoActiveModel as exc:
            raise TrainingError(str(exc)) from None

    bar = progress.bar(total=1, desc="evaluating", unit="deck")

    def report(done, total, label):
        bar.total = total
        bar.n = done
        bar.set_description(label)
        bar.refresh()

    started = time.perf_counter()
    results = compare(fns, test, popularity, p["known"], p["n"], p["seed"], tables.legal, tables.copy_limit,
                      progress=report, restricted=tables.restricted)
    bar.close()
    return {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "decks_file": str(p["decks"]), "from_date": p["from_date"], "split_date": p["split_date"],
        "n": p["n"], "known": p["known"], "seed": p["seed"], "model": p["model"], "sampler": p["sampler"],
        "steps": p["steps"], "fit_seconds": fit_seconds, "seconds": round(time.perf_counter() - started, 1),
        "diffusion_version": {"id": version.pk, "kind": version.kind, "version": version.version,
                              "config": {k: v for k, v in version.config.items() if k != "cards"},
                              "metrics": version.metrics} if version else None,
        "results": results,
    }
