"""Retrieval of the nearest tournament decks and their card votes (pure numpy/scipy, no Django).

A query is the cards a user gave (main deck, with counts), a format and a date. The index scores every
training deck of that format by **IDF-weighted multiset overlap** with the query,

    s_d = sum_c idf_c * min(q_c, n_dc) / sum_c idf_c * q_c        (0..1; 1 = the deck holds every given copy)

computed from a sparse deck x card (CSC) matrix: only the columns of the given cards are read, so a query
costs the number of decks that play those cards, not the size of the corpus. Neighbours are weighted by a
sharp similarity kernel and by recency (tournament metagames drift),

    log w_d = beta * s_d - |t - day_d| / tau + lambda * log(occurrences_d)

and the top ``M`` by weight are kept. Their **votes** fill each (card, n-th copy) slot with the weighted share
of the neighbours that hold at least ``n`` copies: ``vote(c, n) = sum_d w_d [n_dc >= n] / sum_d w_d``. The
neighbour-vote baseline fills the deck by decreasing vote; the masked-diffusion model uses the same votes as
a prior on its logits (``decks.completion.models.masked.model``).

``exclude`` removes rows from the neighbours (during training: the deck itself, whose exact copies the
corpus index has already merged into one row with an ``occurrences`` weight).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from decks.completion.models.baselines import Baseline, count_matrix

__all__ = ["RetrievalParams", "DeckIndex", "Neighbours", "Votes", "NeighbourVoteBaseline", "MAX_COPIES", "narrow"]

MAX_COPIES = 60  # copy numbers are tallied up to this (basic lands)


@dataclass(frozen=True)
class RetrievalParams:
    """Retrieval and vote settings (tuned on a validation month before the training cut; docs/completion.md)."""

    neighbours: int = 50     # M: decks that vote
    beta: float = 40.0       # similarity kernel sharpness (weight ratio e^beta between s=1 and s=0)
    tau_days: float = 60.0   # recency scale
    occurrences: float = 0.5  # lambda: weight of log(occurrences) (MTGO leagues repost popular lists)

    def to_dict(self) -> dict:
        return {"neighbours": self.neighbours, "beta": self.beta, "tau_days": self.tau_days,
                "occurrences": self.occurrences}

    @classmethod
    def from_dict(cls, d: dict | None) -> "RetrievalParams":
        d = dict(d or {})
        return cls(**{k: type(getattr(cls, k))(v) for k, v in d.items() if k in cls.__dataclass_fields__})


@dataclass
class Neighbours:
    rows: np.ndarray     # int64 [m]: global row numbers in the index, best first
    sim: np.ndarray      # float64 [m]: s_d
    weight: np.ndarray   # float64 [m]: normalised w_d (sums to 1; empty when m = 0)


@dataclass
class Votes:
    """Slot votes of a neighbour set for one board: ``table[i, n]`` = vote for copy n of ``cards[i]`` (n>=1)."""

    cards: np.ndarray    # int64 [U], sorted
    table: np.ndarray    # float64 [U, MAX_COPIES + 1]; column 0 unused (= share holding >= 0 copies = 1)

    def of(self, card: int, n: int) -> float:
        i = np.searchsorted(self.cards, card)
        if i >= self.cards.size or self.cards[i] != card or n > MAX_COPIES:
            return 0.0
        return float(self.table[i, n])


def narrow(nb: Neighbours, m: int = 10) -> Neighbours:
    """The ``m`` best of a neighbour set, weights renormalised."""
    if nb.rows.size <= m:
        return nb
    w = nb.weight[:m]
    return Neighbours(nb.rows[:m], nb.sim[:m], w / w.sum())


class DeckIndex:
    """Per-format sparse index of training decks for neighbour retrieval and votes."""

    def __init__(self, main: np.ndarray, side: np.ndarray, fmt: np.ndarray, day: np.ndarray, weight: np.ndarray,
                 V: int, F: int | None = None):
        self.V = int(V)
        fmt = np.asarray(fmt, dtype=np.int64)
        self.F = int(F if F is not None else (fmt.max() + 1 if fmt.size else 1))
        # card indices [N, 60] / [N, 15], or deck x card count matrices already built (the fitted baseline's)
        self.main = main if sp.issparse(main) else count_matrix(main, V)
        self.side = side if sp.issparse(side) else count_matrix(side, V)
        self.day = np.asarray(day, dtype=np.float64)
        self.log_occ = np.log(np.maximum(np.asarray(weight, dtype=np.float64), 1.0))
        self.fmt = fmt
        self.rows = [np.flatnonzero(fmt == f) for f in range(self.F)]
        self.position = np.zeros(len(fmt), dtype=np.int64)
        self._csc = []
        self._idf = []
        for f, rows in enumerate(self.rows):
            self.position[rows] = np.arange(rows.size)
            sub = self.main[rows]
            csc = sub.tocsc()
            csc.sort_indices()
            self._csc.append(csc)
            df = np.diff(csc.indptr).astype(np.float64)
            self._idf.append(np.log((rows.size + 1.0) / (df + 1.0)) + 1e-3)

    @classmethod
    def from_arrays(cls, arrays, V: int, F: int | None = None) -> "DeckIndex":
        return cls(arrays.main, arrays.side, arrays.fmt, arrays.day, arrays.weight, V, F)

    def __len__(self) -> int:
        return self.main.shape[0]

    def similarity(self, cards: np.ndarray, counts: np.ndarray, fmt: int) -> np.ndarray:
        """s_d for every deck of format ``fmt`` (float64 [n_f], in the order of ``self.rows[fmt]``)."""
        csc, idf = self._csc[fmt], self._idf[fmt]
        n = csc.shape[0]
        if cards.size == 0 or n == 0:
            return np.zeros(n)
        lo, hi = csc.indptr[cards], csc.indptr[cards + 1]
        lens = hi - lo
        if lens.sum() == 0:
            return np.zeros(n)
        take = np.repeat(lo - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens) + np.arange(lens.sum())
        per_copy = np.repeat(idf[cards], lens)
        vals = np.minimum(csc.data[take], np.repeat(counts, lens)) * per_copy
        total = float((idf[cards] * counts).sum())
        return np.bincount(csc.indices[take], weights=vals, minlength=n) / max(total, 1e-12)

    def neighbours(self, cards, counts, fmt: int, day: float | None, params: RetrievalParams,
                   exclude=None) -> Neighbours:
        """The top ``params.neighbours`` decks of ``fmt`` for the given main cards (distinct) and counts."""
        return self.neighbour_sets(cards, counts, fmt, day, params, exclude, wide=False)[0]

    def neighbour_sets(self, cards, counts, fmt: int, day: float | None, params: RetrievalParams, exclude=None,
                       wide: bool = True, past_only: bool = False) -> tuple[Neighbours, Neighbours | None]:
        """(the neighbours, and a wider, softer set: 4M decks under a kernel 4x less sharp) from one scoring pass.

        The wide set gives the denoiser a second opinion (what the broader archetype plays) at no extra
        similarity cost; the neighbour vote itself uses only the first set. ``past_only``: only decks from
        before ``day`` (training examples see what a user at that date would have: no future metagame).
        """
        cards = np.asarray(cards, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.float64)
        empty = Neighbours(np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
        rows = self.rows[fmt] if 0 <= fmt < self.F else np.zeros(0, np.int64)
        if rows.size == 0:
            return empty, (empty if wide else None)
        s = self.similarity(cards, counts, fmt)
        rest = params.occurrences * self.log_occ[rows]
        if params.tau_days > 0 and len(self.day):
            t = float(self.day.max()) if day is None else float(day)  # no date: the query is "now"
            rest = rest - np.abs(t - self.day[rows]) / params.tau_days
        if exclude is not None:
            ex = np.asarray(exclude, dtype=np.int64).ravel()
            ex = ex[(ex >= 0) & (ex < len(self.fmt))]
            ex = ex[self.fmt[ex] == fmt]
            rest = rest.copy()
            rest[self.position[ex]] = -np.inf
        if past_only and day is not None:
            rest = np.where(self.day[rows] < float(day), rest, -np.inf)
        primary = self._top(rows, s, params.beta * s + rest, int(params.neighbours))
        if not wide:
            return primary, None
        return primary, self._top(rows, s, params.beta / 4.0 * s + rest, 4 * int(params.neighbours))

    @staticmethod
    def _top(rows: np.ndarray, s: np.ndarray, logw: np.ndarray, m: int) -> Neighbours:
        m = min(m, int(np.isfinite(logw).sum()))
        if m <= 0:
            return Neighbours(np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
        top = np.argpartition(-logw, m - 1)[:m] if m < logw.size else np.arange(logw.size)
        top = top[np.lexsort((top, -logw[top]))]  # best first, ties by row
        w = np.exp(logw[top] - logw[top[0]])
        return Neighbours(rows[top], s[top], w / w.sum())

    def votes(self, nb: Neighbours, board: str = "main") -> Votes:
        """Weighted share of the neighbours holding at least n copies of each card, per board."""
        mat = self.main if board == "main" else self.side
        if nb.rows.size == 0:
            return Votes(np.zeros(0, np.int64), np.zeros((0, MAX_COPIES + 1)))
        sub = mat[nb.rows]
        rw = np.repeat(nb.weight, np.diff(sub.indptr))
        cards, inv = np.unique(sub.indices, return_inverse=True)
        cnt = np.minimum(sub.data, MAX_COPIES).astype(np.int64)
        tally = np.zeros((cards.size, MAX_COPIES + 1))
        np.add.at(tally, (inv, cnt), rw)
        table = np.cumsum(tally[:, ::-1], axis=1)[:, ::-1]  # table[:, n] = sum of weights with count >= n
        return Votes(cards.astype(np.int64), table)


def fill_by_votes(votes: Votes, count: np.ndarray, room, add, left, blocked=None) -> None:
    """Add copies by decreasing vote: copy n of card c is taken when the deck already holds n-1 of it.

    ``count``: current copies per card (this board); ``room(c)``: copies c may still take (limits across
    boards); ``add(c, k)`` adds; ``left()``: slots left; ``blocked``: bool [V] of cards that may not be added.
    Ties: lower copy number, then lower card index. Cards the user gave keep their copies (their slots 1..k
    count as filled).
    """
    U = votes.cards.size
    if U == 0 or left() <= 0:
        return
    n = np.broadcast_to(np.arange(MAX_COPIES + 1), votes.table.shape)
    c = np.broadcast_to(votes.cards[:, None], votes.table.shape)
    v = votes.table
    mask = (n >= 1) & (v > 0)
    cs, ns, vs = c[mask], n[mask], v[mask]
    order = np.lexsort((cs, ns, -vs))
    for c_, n_ in zip(cs[order], ns[order]):
        if left() <= 0:
            return
        c_, n_ = int(c_), int(n_)
        if blocked is not None and blocked[c_]:
            continue
        if count[c_] == n_ - 1 and room(c_) > 0:
            add(c_, 1)


class NeighbourVoteBaseline(Baseline):
    """The strong simple baseline: fill each (card, n-th copy) slot by the neighbours' weighted vote.

    Neighbours come from ``DeckIndex.neighbours`` (IDF overlap with the given main cards, a sharp kernel,
    recency around the query ``day``). Main: the given cards, then copies by decreasing main vote; side: the
    given side cards, then by decreasing side vote of the neighbours of the completed main deck. Each added card is legal and within
    its limit across main + side; the popularity fallback of the other baselines fills what is left.
    """

    def __init__(self, params: RetrievalParams | None = None):
        self.params = params or RetrievalParams()

    def _fit_extra(self) -> None:
        f = self.fitted
        self.index = DeckIndex(f.main, f.side, self._train.fmt, self._train.day, self._train.weight, f.V, f.F)

    def fit(self, train, V, legal, copy_limit, restricted=None):
        self._train = train
        return super().fit(train, V, legal, copy_limit, restricted)

    def query(self, main_known, fmt: int, day=None, exclude=None) -> Neighbours:
        cards, counts = np.unique(np.asarray(main_known, dtype=np.int64), return_counts=True)
        return self.index.neighbours(cards, counts, int(fmt), day, self.params, exclude)

    def complete(self, main_known, side_known, fmt, seed=0, day=None, exclude=None, owned=None):
        b = self._builder(main_known, side_known, fmt, owned)
        nb = self.query(b.main, b.fmt, day, exclude)
        blocked = b.blocked()
        if b.main_left > 0:
            fill_by_votes(self.index.votes(nb, "main"), b.main_count, b.room, b.add_main, lambda: b.main_left,
                          blocked)
        if b.side_left > 0:  # the sideboard follows the whole main deck: retrieve again with it
            nb = self.query(b.main, b.fmt, day, exclude)
            fill_by_votes(self.index.votes(nb, "side"), b.side_count, b.room, b.add_side, lambda: b.side_left,
                          blocked)
        return b.finish()
