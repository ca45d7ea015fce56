"""Evaluation of the deck-completion models (``manage.py models evaluate VERSION``, the kinds' ``evaluate``) and
deck completion against three baselines on any deck file in the corpus layout (``evaluate_file``, also
``bench/completion.py``).

Each deck keeps K main cards (seeded, the training masking rule), the rest of the main deck and the
whole sideboard are generated; scores are main recall, side recall, share of fully valid outputs and
completions per second, for the completion model (method ``diffusion``: the masked model by default,
``model="manamorphosis"`` for the continuous one) and the popularity, co-occurrence and nearest-deck
baselines (fitted on the corpus decks first seen before the split date; so is the masked model's retrieval index).
"""
from __future__ import annotations

import copy

import datetime as dt
import json
import platform
import time
from pathlib import Path

import numpy as np

from decks.completion.service import get_completer
from decks.core.catalogue import DataError, read_deck_corpus
from decks.core.names import CardIndex
from decks.core.rules import FORMATS, normalize_format
from decks.completion.models.baselines import CooccurrenceBaseline, NearestDeckBaseline, PopularityBaseline
from decks.completion.models.evaluate import compare
from decks.completion.completers import build_completer, build_masked_completer, figures_versions
from decks.completion.training import training_embeddings
from decks.completion.datasets import DEFAULT_SPLIT, EPOCH, card_tables, deck_arrays, split_day
from decks.completion.models.deck_arrays import DeckArrays, card_popularity, split_by_date
from decks.embeddings.service import active_embeddings
from ml.kinds import TrainingError, settle
from ml.models import ModelVersion
from ml.progress import Progress
from ml.registry import NoActiveModel, active_version

METHODS = ("diffusion", "popularity", "cooccurrence", "nearest")
DEFAULTS = {"n": 300, "seed": 0, "methods": ",".join(METHODS), "model": "masked", "sampler": "fast", "steps": 50,
            "from_date": None, "split_date": DEFAULT_SPLIT}


def _held_out(names, split_date: str):
    """(training decks, held-out decks, card tables) of the corpus split at ``split_date``."""
    train_arrays, test = split_by_date(deck_arrays(names), split_day(split_date))
    if len(test) == 0:
        raise TrainingError("no held-out decks (first seen after the split date) to evaluate on")
    return train_arrays, test, card_tables(names)


def _compare_bar(bar):
    """``compare``'s progress callback, moving ``bar``."""
    def report(done, total, label):
        bar.total, bar.n = max(total, 1), done
        bar.set_description(label)
        bar.refresh()
    return report


def _recall_metrics(results: dict, keys, Ks, out: dict, progress: Progress) -> dict:
    for k, r in results.items():
        for key in keys:
            if key in r:
                out[f"{key}_k{k}"] = r[key]
    if f"main_recall_k{Ks[0]}" in out:
        progress.metric(f"main_recall_k{Ks[0]}", out[f"main_recall_k{Ks[0]}"])
    return out


def _held_out_start(version: ModelVersion, progress: Progress):
    """(bar, names, split date, training decks, held-out decks, card tables) of a version's held-out evaluation."""
    progress.expect(2)
    bar = progress.bar(total=1, desc="loading decks and fitting the retrieval index")
    names = training_embeddings().names
    split = version.config.get("split_date") or DEFAULT_SPLIT
    train_arrays, test, tables = _held_out(names, split)
    return bar, names, split, train_arrays, test, tables


def evaluate_masked(version: ModelVersion, params: dict, progress: Progress) -> dict:
    """The measure (main/side recall at K, validity) on the decks first seen on or after the version's split date,
    with the retrieval index fitted on the decks before it (no leak); with ``decks`` (a corpus-layout file),
    :func:`evaluate_version_on_file` instead."""
    if params.get("decks"):
        return evaluate_version_on_file(version, params, progress)
    bar, names, split, train_arrays, test, tables = _held_out_start(version, progress)
    # the sideboard ranker of the figures (fitted before a dated split) when the active one is a refit on every deck
    completer = build_masked_completer(version=version, split_date=split, rank=figures_versions()[1])
    bar.update(1)
    n = int(params.get("n", 30))
    Ks = [int(k) for k in params.get("known", [10, 20])]
    report = _compare_bar(progress.bar(total=1, desc=f"completing {n} held-out decks"))
    started = time.perf_counter()
    results = compare({"masked": completer.complete_idx}, test, card_popularity(train_arrays, len(names)), Ks, n,
                      int(params.get("seed", 0)), tables.legal, tables.copy_limit, progress=report,
                      restricted=tables.restricted)
    out = {"decks": n, "formats": len(FORMATS), "split_date": split, "seconds": round(time.perf_counter() - started, 1)}
    return _recall_metrics(results["masked"], ("main_recall", "side_recall", "valid_share", "per_second"), Ks, out,
                           progress)


def evaluate_rank(version: ModelVersion, params: dict, progress: Progress) -> dict:
    """A deck_rank version inside the active masked completer, against the same completer with the denoiser's own
    sideboard: sideboard (and main) recall at K on the decks first seen on or after the version's split date, the
    index fitted on the decks before it."""
    bar, names, split, train_arrays, test, tables = _held_out_start(version, progress)
    completer = build_masked_completer(version=figures_versions()[0], split_date=split, rank=version)
    plain = copy.copy(completer).with_side_ranker(None, None)
    bar.update(1)
    n = int(params.get("n", 30))
    Ks = [int(k) for k in params.get("known", [10, 20])]
    report = _compare_bar(progress.bar(total=1, desc=f"completing {n} held-out decks twice"))
    started = time.perf_counter()
    results = compare({"ranked": completer.complete_idx, "denoiser": plain.complete_idx}, test,
                      card_popularity(train_arrays, len(names)), Ks, n, int(params.get("seed", 0)), tables.legal,
                      tables.copy_limit, progress=report, restricted=tables.restricted)
    out = {"decks": n, "formats": len(FORMATS), "split_date": split, "seconds": round(time.perf_counter() - started, 1)}
    for K in Ks:
        out[f"side_recall_denoiser_k{K}"] = round(float(results["denoiser"][K]["side_recall"]), 4)
    out = _recall_metrics(results["ranked"], ("main_recall", "side_recall", "valid_share"), Ks, out, progress)
    progress.metric(f"side_recall_k{Ks[0]}", out[f"side_recall_k{Ks[0]}"])  # the ranker's own figure
    return out


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

        def expand(pairs):
            return np.array([self.index[n] for n, c in pairs for _ in range(c)], dtype=np.int64)
        return expand(done.main), expand(done.side)


def evaluate_diffusion(version: ModelVersion, params: dict, progress: Progress) -> dict:
    """The measure (main/side recall at K, validity) on held-out corpus decks, for this version; with ``decks``
    (a corpus-layout file), :func:`evaluate_version_on_file` instead."""
    if params.get("decks"):
        return evaluate_version_on_file(version, params, progress)
    progress.expect(2)
    bar = progress.bar(total=1, desc="loading decks and the model")
    names = training_embeddings().names
    train_arrays, test, tables = _held_out(names, version.config.get("split_date") or DEFAULT_SPLIT)
    completer = build_completer(diffusion=version)
    n = int(params.get("n", 30))
    Ks = [int(k) for k in params.get("known", [10, 20])]
    method = DiffusionMethod(completer, names, params.get("sampler", "fast"), int(params.get("steps", 50)))
    bar.update(1)
    report = _compare_bar(progress.bar(total=1, desc=f"completing {n} held-out decks"))
    results = compare({"diffusion": method}, test, card_popularity(train_arrays, len(names)), Ks, n,
                      int(params.get("seed", 0)), tables.legal, tables.copy_limit, progress=report,
                      restricted=tables.restricted)
    return _recall_metrics(results["diffusion"], ("main_recall", "side_recall", "valid"), Ks,
                           {"decks": n, "formats": len(FORMATS)}, progress)


def file_arrays(path: Path, names: list[str], from_date: str | None, limit: int | None):
    """Decks of a corpus-layout file whose 60 + 15 cards are all known -> DeckArrays (+ how many were skipped)."""
    index = CardIndex(names)
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
                i = index.position(name)
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


def evaluate_file(params: dict, progress: Progress, version: ModelVersion | None = None) -> dict:
    """The results document of one evaluation: params ``decks`` (a corpus-layout file), ``known`` (the Ks) and
    DEFAULTS' keys; ``results`` holds {method: {K: scores}}. Method ``diffusion`` is ``version`` (a deck_masked or
    deck_diffusion ModelVersion) when given, else the active version of ``model``."""
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
            completer = build_masked_completer(version=version, split_date=p["split_date"])
        except NoActiveModel as exc:
            raise TrainingError(str(exc)) from None
        fit_seconds["diffusion"] = round(time.perf_counter() - t0, 2)
        fns = {"diffusion": completer.complete_idx, **fns}
        version = completer.version
        if version is None:
            progress.log("no active deck_masked version: scoring the neighbour vote (the model's prior)")
    elif "diffusion" in methods:
        try:
            completer = get_completer("manamorphosis") if version is None else build_completer(diffusion=version)
            fns = {"diffusion": DiffusionMethod(completer, names, p["sampler"], p["steps"]), **fns}
            version = version or active_version("deck_diffusion")
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


def evaluate_version_on_file(version: ModelVersion, params: dict, progress: Progress) -> dict:
    """:func:`evaluate_file` with ``version`` scored as method ``diffusion`` (``manage.py models evaluate VERSION
    --params '{"decks": ..., "known": [...], "out": ...}'``): the results document is written to ``out`` when given;
    the metrics are {"<method>_<score>_k<K>": value} and the file's facts."""
    model = "masked" if version.kind == "deck_masked" else "manamorphosis"
    file_params = {k: v for k, v in params.items() if k != "out"}
    file_params["known"] = [int(k) for k in params.get("known") or (10, 20)]
    doc = json.loads(json.dumps(evaluate_file({**file_params, "model": model}, progress, version=version),
                                default=json_default))
    results = doc["results"]
    if params.get("out"):
        out = Path(params["out"])
        out.parent.mkdir(parents=True, exist_ok=True)
        command = f"manage.py models evaluate {version.pk} --params '{json.dumps(params)}'"
        out.write_text(json.dumps({"command": command, **doc}, indent=2))
    metrics = {"decks_file": doc["decks_file"], "n": doc["n"], "known": doc["known"], "split_date": doc["split_date"],
               "seconds": doc["seconds"]}
    for method, per_k in results.items():
        for k, scores in per_k.items():
            for key in ("main_recall", "side_recall", "valid_share", "per_second"):
                if key in scores:
                    metrics[f"{method}_{key}_k{k}"] = scores[key]
    first = f"diffusion_main_recall_k{doc['known'][0]}"
    if first in metrics:
        progress.metric(first, metrics[first])
    return metrics


def json_default(value):
    """numpy scalars and arrays as JSON."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(type(value))
