"""Deck-completion evaluation: hide cards of held-out decks, complete them, score (pure numpy, no Django).

A *completer* is any ``fn(main_known_idx, side_known_idx, fmt, seed) -> (main [60], side [15])`` (card
indices, copies repeated): a baseline's ``.complete`` or a wrapper around the diffusion ``Completer``.

For each of ``n_decks`` test decks (drawn with ``seed``; the same decks for every method and every K):

- ``known`` = ``known_from_count(main_row, K, popularity, rng)`` (the training masking rule, so the
  evaluation hides the cards the model learned to fill), with ``rng`` seeded from (seed, K, deck); the
  sideboard is generated from scratch (no known side cards);
- ``main_recall`` = |generated ∩ hidden| / |hidden| (multisets), generated = output main - known cards,
  hidden = true main - known cards;
- ``side_recall`` = |output side ∩ true side| / 15 (multisets);
- ``valid``: exactly 60 + 15 cards, every known card kept, copy limits respected with main and side counted
  together (0 = unlimited, restricted = 1), every card legal in the format;
- ``per_second``: completions per second of wall time spent inside the completer calls only.

A completer that raises counts as an error: invalid, recall 0 (``errors`` and ``first_error`` say so).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable

import numpy as np

from common.stats import sign_test
from decks.completion.models.masking import known_from_count

__all__ = ["evaluate", "compare", "paired", "sample_test_rows", "known_mask", "multiset_overlap", "multiset_difference",
           "check_completion"]

MAIN_SIZE = 60
SIDE_SIZE = 15


# ----------------------------------------------------------------------------------------- multisets

def multiset_overlap(a, b) -> int:
    """|a ∩ b| for multisets of card indices."""
    ua, ca = np.unique(np.asarray(a, dtype=np.int64), return_counts=True)
    ub, cb = np.unique(np.asarray(b, dtype=np.int64), return_counts=True)
    _, ia, ib = np.intersect1d(ua, ub, assume_unique=True, return_indices=True)
    return int(np.minimum(ca[ia], cb[ib]).sum())


def multiset_difference(a, b) -> np.ndarray:
    """a - b for multisets (each copy in b removes one copy from a), sorted."""
    a = np.sort(np.asarray(a, dtype=np.int64))
    ub, cb = np.unique(np.asarray(b, dtype=np.int64), return_counts=True)
    if a.size == 0 or ub.size == 0:
        return a
    # j-th copy (0-based) of card c in a is kept when j >= count of c in b
    first = np.searchsorted(a, a, side="left")
    j = np.arange(a.size) - first
    pos = np.searchsorted(ub, a)
    pos_c = np.minimum(pos, ub.size - 1)
    inb = np.where(ub[pos_c] == a, cb[pos_c], 0)
    return a[j >= inb]


def check_completion(main, side, main_known, side_known, fmt: int, legal: np.ndarray, copy_limit: np.ndarray,
                     restricted: np.ndarray | None = None) -> dict[str, bool]:
    """Which rules a completed deck breaks: {"size", "range", "known", "copies", "legality"} -> True if broken."""
    main = np.asarray(main, dtype=np.int64).ravel()
    side = np.asarray(side, dtype=np.int64).ravel()
    V = legal.shape[1]
    broken = {"size": main.size != MAIN_SIZE or side.size != SIDE_SIZE, "range": False, "known": False,
              "copies": False, "legality": False}
    both = np.concatenate([main, side])
    if both.size and (both.min() < 0 or both.max() >= V):
        broken["range"] = True
        both = both[(both >= 0) & (both < V)]
        main = main[(main >= 0) & (main < V)]
        side = side[(side >= 0) & (side < V)]
    broken["known"] = (multiset_overlap(main, main_known) != len(main_known)
                       or multiset_overlap(side, side_known) != len(side_known))
    counts = np.bincount(both, minlength=V)
    limit = np.asarray(copy_limit, dtype=np.int64).copy()
    if restricted is not None:
        limit[np.asarray(restricted)[fmt]] = 1
    broken["copies"] = bool(np.any((limit > 0) & (counts > limit)))
    broken["legality"] = bool(not np.all(legal[fmt][both])) if both.size else False
    return broken


# ----------------------------------------------------------------------------------------- sampling

def sample_test_rows(n_test: int, n_decks: int, seed: int) -> np.ndarray:
    """Row indices of the evaluated test decks (seeded, without replacement, independent of K and method)."""
    n = min(int(n_decks), int(n_test))
    return np.random.default_rng([int(seed), 0x5EED]).choice(n_test, size=n, replace=False)


def known_mask(row, K: int, popularity, seed: int, deck: int, mask_fn: Callable | None = None) -> np.ndarray:
    """bool [60]: the main slots the user "knows" for test deck ``deck`` (same for every method)."""
    if mask_fn is None:
        mask_fn = known_from_count
    rng = np.random.default_rng([int(seed), int(K), int(deck)])
    mask = np.asarray(mask_fn(np.asarray(row), int(K), popularity, rng), dtype=bool)
    if mask.shape != (len(row),):
        raise ValueError(f"mask function returned shape {mask.shape}, expected ({len(row)},)")
    return mask


def _ci95(x: np.ndarray) -> list[float]:
    if x.size == 0:
        return [math.nan, math.nan]
    m = float(x.mean())
    if x.size < 2:
        return [m, m]
    h = 1.96 * float(x.std(ddof=1)) / math.sqrt(x.size)
    return [m - h, m + h]


def _summary(main_r: np.ndarray, side_r: np.ndarray, valid: np.ndarray) -> dict:
    mr = main_r[~np.isnan(main_r)]
    sr = side_r[~np.isnan(side_r)]
    return {
        "n": int(valid.size),
        "main_recall": float(mr.mean()) if mr.size else math.nan,
        "main_recall_ci95": _ci95(mr),
        "side_recall": float(sr.mean()) if sr.size else math.nan,
        "side_recall_ci95": _ci95(sr),
        "valid_share": float(valid.mean()) if valid.size else math.nan,
    }


# ----------------------------------------------------------------------------------------- evaluate

def evaluate(completer_fn: Callable, test, popularity: np.ndarray, K: int, n_decks: int, seed: int,
             legal: np.ndarray, copy_limit: np.ndarray, progress: Callable | None = None, *,
             restricted: np.ndarray | None = None, mask_fn: Callable | None = None,
             decks: np.ndarray | None = None) -> dict:
    """Score ``completer_fn`` on ``n_decks`` test decks with ``K`` known main cards.

    Returns {"K", "n", "main_recall", "main_recall_ci95" (normal approximation), "side_recall",
    "side_recall_ci95", "valid_share", "added_illegal" (outputs with a card the method added that is not legal
    in the format), "given_illegal" (decks whose given cards include one the legality table does not allow: kept
    as given, they make the output invalid for every method), "invalid" (count per broken rule), "errors", "first_error",
    "seconds" (inside the completer), "per_second", "per_format": {fmt_id: {"n", "main_recall", ...}}}.
    ``progress(done, total)`` is called after each deck. ``mask_fn`` replaces ``known_from_count`` (tests);
    ``decks`` fixes the evaluated test rows (default: ``sample_test_rows(len(test), n_decks, seed)``).
    """
    legal = np.asarray(legal, dtype=bool)
    mains, sides, fmts = np.asarray(test.main), np.asarray(test.side), np.asarray(test.fmt).astype(np.int64)
    rows = sample_test_rows(len(mains), n_decks, seed) if decks is None else np.asarray(decks, dtype=np.int64)
    n = rows.size
    main_r, side_r = np.full(n, np.nan), np.full(n, np.nan)
    valid = np.zeros(n, dtype=bool)
    invalid = {"size": 0, "range": 0, "known": 0, "copies": 0, "legality": 0}
    errors, first_error, seconds = 0, None, 0.0
    given_illegal, added_illegal = 0, 0
    no_side = np.zeros(0, dtype=np.int64)
    for i, d in enumerate(rows):
        d = int(d)
        row, true_side, fmt = mains[d].astype(np.int64), sides[d].astype(np.int64), int(fmts[d])
        row, true_side = row[row >= 0], true_side[true_side >= 0]
        mask = known_mask(row, K, popularity, seed, d, mask_fn)
        known, hidden = row[mask], row[~mask]
        t0 = time.perf_counter()
        try:
            out_main, out_side = completer_fn(known.copy(), no_side.copy(), fmt, int(seed) + d)
        except Exception as exc:  # noqa: BLE001 any method's failure (its own exceptions) scores 0 and is invalid
            seconds += time.perf_counter() - t0
            errors += 1
            first_error = first_error or f"{type(exc).__name__}: {exc}"
            main_r[i] = 0.0 if hidden.size else np.nan
            side_r[i] = 0.0 if true_side.size else np.nan
            invalid["size"] += 1
            if progress:
                progress(i + 1, n)
            continue
        seconds += time.perf_counter() - t0
        out_main = np.asarray(out_main, dtype=np.int64).ravel()
        out_side = np.asarray(out_side, dtype=np.int64).ravel()
        generated = multiset_difference(out_main, known)
        if hidden.size:
            main_r[i] = multiset_overlap(generated, hidden) / hidden.size
        if true_side.size:
            side_r[i] = multiset_overlap(out_side, true_side) / true_side.size
        broken = check_completion(out_main, out_side, known, no_side, fmt, legal, copy_limit, restricted)
        for k, v in broken.items():
            invalid[k] += int(v)
        # the legality rule split by whose card it is: a given card the format's table does not allow is kept
        # as given (every method alike); a card the method added must be legal
        given_illegal += int(known.size > 0 and not legal[fmt][known].all())
        added = np.concatenate([generated, out_side])
        added = added[(added >= 0) & (added < legal.shape[1])]
        added_illegal += int(added.size > 0 and not legal[fmt][added].all())
        valid[i] = not any(broken.values())
        if progress:
            progress(i + 1, n)

    result = {"K": int(K), **_summary(main_r, side_r, valid), "added_illegal": added_illegal,
              "given_illegal": given_illegal, "invalid": invalid, "errors": errors,
              "first_error": first_error, "seconds": seconds,
              "per_second": (n / seconds) if seconds > 0 else math.inf,
              "rows": rows.tolist(), "main_recall_per_deck": main_r.tolist(), "side_recall_per_deck": side_r.tolist()}
    fm = fmts[rows]
    result["per_format"] = {int(f): _summary(main_r[fm == f], side_r[fm == f], valid[fm == f])
                            for f in np.unique(fm)}
    return result


def paired(a, b, eps: float = 1e-12) -> dict:
    """Per-deck comparison of two methods' recalls on the same decks: wins/losses/ties of ``a`` and the sign test."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    ok = ~(np.isnan(a) | np.isnan(b))
    d = a[ok] - b[ok]
    wins, losses = int((d > eps).sum()), int((d < -eps).sum())
    return {"n": int(ok.sum()), "wins": wins, "losses": losses, "ties": int(ok.sum()) - wins - losses,
            "mean_difference": float(d.mean()) if d.size else math.nan, "sign_test_p": sign_test(wins, losses)}


def compare(methods: dict[str, Callable], test, popularity: np.ndarray, Ks: int | Iterable[int], n_decks: int,
            seed: int, legal: np.ndarray, copy_limit: np.ndarray, progress: Callable | None = None,
            **kwargs) -> dict[str, dict[int, dict]]:
    """``evaluate`` every method at every K on the same decks and masks: {method: {K: result}}.

    ``progress(done, total, label)`` counts decks over all methods and Ks; ``kwargs`` go to ``evaluate``.
    """
    Ks = [int(Ks)] if isinstance(Ks, (int, np.integer)) else [int(k) for k in Ks]
    per_run = min(int(n_decks), len(test.main))
    total = per_run * len(Ks) * len(methods)
    out: dict[str, dict[int, dict]] = {}
    done = 0
    for name, fn in methods.items():
        out[name] = {}
        for K in Ks:
            cb = None
            if progress:
                def cb(i, _n, base=done, name=name, K=K):
                    return progress(base + i, total, f"{name} K={K}")
            out[name][K] = evaluate(fn, test, popularity, K, n_decks, seed, legal, copy_limit, cb, **kwargs)
            done += per_run
    return out
