"""Which slots of a training deck are given ("known") and which the model must fill — the Manamorphosis rule.

Main deck: the known count k is spread over 1..59 by choosing one of the ranges ``MAIN_RANGES`` uniformly,
then k uniformly inside it. Sideboard: half the time nothing is known, else k is uniform in 1..14.

The ``S - k`` hidden slots are chosen by whole card groups (all copies of a card): distinct cards are visited
in a random order that favours rarer cards (weighted sampling without replacement, weight
``1 / (popularity + eps) ** alpha``); a visited card has ALL its copies hidden with probability ``p_whole``
(0.85), else a random number 1..n-1 of its n copies. The visit stops at exactly ``S - k`` hidden slots (the
last group is cut short); if the walk runs out, the copies left behind are hidden in the same card order.

All functions return a ``known`` boolean array (True = the slot is given). Rows need not be sorted. The batch
helper is vectorised (one ``lexsort`` per batch); the per-row functions call it with a batch of one, so the
rule is the same everywhere.
"""
from __future__ import annotations

import numpy as np

__all__ = ["MAIN_RANGES", "sample_main_known", "sample_side_known", "known_from_count", "known_cards", "batch_masks",
           "sample_main_mask", "sample_side_mask"]

MAIN_RANGES = ((1, 10), (11, 20), (21, 30), (31, 40), (41, 50), (51, 59))
P_WHOLE = 0.85
ALPHA = 0.5
EPS = 1e-3
SIDE_ZERO_P = 0.5


def _hide_weights(rows: np.ndarray, popularity: np.ndarray, alpha: float, eps: float) -> np.ndarray:
    pop = np.asarray(popularity, dtype=np.float64)[rows]
    return 1.0 / np.power(np.maximum(pop, 0.0) + eps, alpha)


def batch_masks(rows: np.ndarray, popularity: np.ndarray, rng: np.random.Generator, kind: str = "main",
                k=None, p_whole: float = P_WHOLE, alpha: float = ALPHA, eps: float = EPS) -> np.ndarray:
    """Known masks for a batch ``rows`` [B,S] of card indices -> bool [B,S].

    ``k`` (int or int array [B]) fixes the known count; otherwise it is drawn by the rule of ``kind``
    ("main": partitioned ranges over 1..S-1; "side": 0 with probability 1/2, else uniform 1..S-1).
    """
    rows = np.asarray(rows)
    if rows.ndim != 2:
        raise ValueError("rows must be [B, S]")
    B, S = rows.shape
    if k is None:
        if kind == "main":
            ranges = np.array([r for r in MAIN_RANGES if r[0] <= S - 1], dtype=np.int64)
            ranges[:, 1] = np.minimum(ranges[:, 1], S - 1)
            pick = ranges[rng.integers(0, len(ranges), size=B)]
            k = pick[:, 0] + np.floor(rng.random(B) * (pick[:, 1] - pick[:, 0] + 1)).astype(np.int64)
        elif kind == "side":
            zero = rng.random(B) < SIDE_ZERO_P
            k = np.where(zero, 0, rng.integers(1, S, size=B))
        else:
            raise ValueError(f"unknown kind {kind!r}")
    k = np.broadcast_to(np.asarray(k, dtype=np.int64), (B,))
    if np.any(k < 0) or np.any(k > S):
        raise ValueError(f"known count must be in 0..{S}")
    hide = S - k

    order = np.argsort(rows, axis=1, kind="stable")
    srt = np.take_along_axis(rows, order, axis=1)
    ar = np.broadcast_to(np.arange(S), (B, S))
    starts = np.ones((B, S), dtype=bool)
    starts[:, 1:] = srt[:, 1:] != srt[:, :-1]
    ends = np.ones((B, S), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, ar, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, ar, S - 1)[:, ::-1], axis=1)[:, ::-1]
    n = last - first + 1  # copies of this slot's card
    c = ar - first  # copy number within the group

    # one draw per slot; a group's values are read at its first slot
    u_order, u_whole, u_take = rng.random((B, S)), rng.random((B, S)), rng.random((B, S))
    w = _hide_weights(srt, popularity, alpha, eps)
    gkey = np.take_along_axis(-np.log1p(-u_order) / w, first, axis=1)  # Exp(w): smaller = visited earlier
    whole = np.take_along_axis(u_whole, first, axis=1) < p_whole
    partial = 1 + np.floor(np.take_along_axis(u_take, first, axis=1) * (n - 1)).astype(np.int64)
    take = np.where(whole | (n == 1), n, partial)
    second_pass = (c >= take).astype(np.int64)

    slot_order = np.lexsort((c, gkey, second_pass), axis=-1)
    rank = np.empty((B, S), dtype=np.int64)
    np.put_along_axis(rank, slot_order, ar, axis=1)
    hidden_sorted = rank < hide[:, None]
    known = np.empty((B, S), dtype=bool)
    np.put_along_axis(known, order, ~hidden_sorted, axis=1)
    return known


def known_from_count(row: np.ndarray, k: int, popularity: np.ndarray, rng: np.random.Generator, **kw) -> np.ndarray:
    """Known mask for one deck part with exactly ``k`` known slots (evaluation at a fixed K)."""
    return batch_masks(np.asarray(row)[None], popularity, rng, k=k, **kw)[0]


def known_cards(decks, d: int, K: int, popularity: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(deck row ``d``'s main cards, the K of them known, its format): the evaluation's masking rule with the deck's
    own generator (seeded by ``seed``, K and the row), as the rankers' training examples draw them."""
    row = np.asarray(decks.main[d], dtype=np.int64)
    return row, row[known_from_count(row, K, popularity, np.random.default_rng([seed, K, int(d)]))], int(decks.fmt[d])


def sample_main_known(main_row: np.ndarray, popularity: np.ndarray, rng: np.random.Generator, **kw) -> np.ndarray:
    return batch_masks(np.asarray(main_row)[None], popularity, rng, kind="main", **kw)[0]


def sample_side_known(side_row: np.ndarray, popularity: np.ndarray, rng: np.random.Generator, **kw) -> np.ndarray:
    return batch_masks(np.asarray(side_row)[None], popularity, rng, kind="side", **kw)[0]


# names used in docs/completion-design.md
sample_main_mask = sample_main_known
sample_side_mask = sample_side_known
