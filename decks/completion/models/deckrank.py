"""A deck-level slot ranker: the candidates of one board scored together, knowing the deck (pure numpy + torch).

The tuned vote (``baselines.TunedVoteBaseline``) scores each (card, n-th copy) slot by one weighted share of the
nearest tournament decks. This module keeps the nearest decks as the candidate generator (the top 200 decks'
cards hold nearly every card that is missing) and learns the ranking (issue 27, item 3):

- **retrieval**: the ``R`` decks of the format with the highest IDF-weighted overlap with the query (for the
  sideboard: ``RankParams.query_mix`` x the overlap with the *finished* main deck, all 60 cards, + the rest x the
  overlap with the user's cards alone, which are certain where the generated cards are guesses; for the main
  deck: the user's cards);
- **slot evidence**: for every slot the neighbours hold, the vote at several kernels, neighbour counts and recency
  scales (one matrix product), the unweighted shares of the 10 / 50 / 200 nearest, the rank of the nearest holder,
  the share holding the card on the *other* board (a sideboard card the neighbours play main is a different
  signal), the format's overall and recent share, the copy number, the copies already in the deck and the room
  left under the copy limit;
- **card features** from the catalogue (``card_feature_table``: mana value, types, basic, colours) and how the
  card's colours fit the deck's;
- **deck context**: format, the query deck's colours, curve and land count, how close the nearest decks are;
- **archetype groups**: the top 50 neighbours split in two by card-set overlap (``archetype_groups``: 2-medoids
  on Jaccard similarity, seeded with the best neighbour and the one least like it); per slot the weighted vote
  inside the group closer to the known cards and inside the other one, and the groups' weights, sizes, overlap
  with the known cards and with each other (a vote over two archetypes mixes them; the model can pick one);
- **set attention**: the top ``S`` candidate slots attend to each other (a small transformer encoder over the
  slot tokens plus a deck-context token), so a slot's score can depend on what else is likely (two answers to the
  same threat, a colour the deck does not play);
- trained on decks of the months before the validation month with the board's true slots as targets
  (binary cross-entropy plus a listwise softmax term), the main deck the sideboard sees being the one the vote
  completes from the user's cards, as at inference.

``RankedBoard.fill`` adds slots in score order (copy n only after copy n - 1; legality, copy limits across main +
side and the collection are the ``DeckBuilder``'s hard masks), then the builder's fallbacks. Deterministic.
"""
from __future__ import annotations

import datetime as dt
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from decks.completion.models.baselines import DeckBuilder, FittedCorpus, TunedVoteBaseline, VoteParams
from decks.completion.models.deck_arrays import split_by_date
from decks.completion.models.masking import known_from_count

__all__ = ["CARD_FEATURES", "card_feature_table", "RankParams", "SlotIndex", "BoardSlots", "SlotRanker",
           "RankerConfig", "train_ranker", "archetype_groups", "group_features", "Groups", "rank_fill",
           "slot_targets", "ranker_from", "fit_side_ranker", "FitPlan", "month_start", "month_examples",
           "Examples", "side_examples", "board_examples", "topk_recall", "example_scores", "recall_of", "context_size",
           "SLOT_FEATURES"]

CARD_FEATURES = ("mana_value", "creature", "instant", "sorcery", "artifact", "enchantment", "planeswalker", "land",
                 "battle", "basic", "W", "U", "B", "R", "G", "colourless", "multicolour")
_TYPES = ("creature", "instant", "sorcery", "artifact", "enchantment", "planeswalker", "land", "battle")
_COLOURS = "WUBRG"
# vote variants: (kernel beta on the normalised overlap, neighbours, recency days; 0 = none)
_VOTES = ((0.0, 10, 60.0), (0.0, 50, 60.0), (0.0, 200, 0.0), (10.0, 50, 60.0), (10.0, 200, 60.0),
          (40.0, 50, 60.0), (40.0, 200, 60.0), (40.0, 200, 20.0), (40.0, 200, 0.0), (100.0, 200, 60.0),
          (10.0, 200, 20.0), (150.0, 200, 60.0))
_BASE_VOTE = 5  # index of the variant that orders the candidates (beta 40, 50 decks, 60 days)
_MAX_COPY = 30


def card_feature_table(info: list[tuple[float, str, str, str] | None]) -> np.ndarray:
    """float32 [V, len(CARD_FEATURES)] from (mana value, colours "WUBRG" letters, types, supertypes) per card
    (None: nothing known, all zero)."""
    out = np.zeros((len(info), len(CARD_FEATURES)), dtype=np.float32)
    for i, row in enumerate(info):
        if row is None:
            continue
        mv, colours, types, supertypes = row
        types, colours = (types or "").lower(), (colours or "").upper()
        out[i, 0] = min(float(mv or 0.0), 10.0) / 8.0
        for j, t in enumerate(_TYPES):
            out[i, 1 + j] = t in types
        out[i, 9] = "basic" in (supertypes or "").lower()
        n = 0
        for j, c in enumerate(_COLOURS):
            out[i, 10 + j] = c in colours
            n += c in colours
        out[i, 15] = n == 0
        out[i, 16] = n > 1
    return out


@dataclass(frozen=True)
class RankParams:
    """Candidate generation: ``neighbours`` decks retrieved, the ``slots`` best by the base vote are ranked.

    ``query_mix``: how far the sideboard's retrieval trusts the finished main deck. A deck's overlap is
    ``query_mix`` x its overlap with the finished main deck + (1 - ``query_mix``) x its overlap with the user's
    cards alone (1: the finished deck only, as versions before it; the generated cards are guesses, the user's are
    not). The main deck's retrieval is the user's cards either way."""

    neighbours: int = 200
    slots: int = 64
    query_mix: float = 1.0

    def to_dict(self) -> dict:
        return {"neighbours": self.neighbours, "slots": self.slots, "query_mix": self.query_mix}

    @classmethod
    def from_dict(cls, d: dict | None) -> "RankParams":
        kinds = {"neighbours": int, "slots": int, "query_mix": float}
        return cls(**{k: kinds[k](v) for k, v in (d or {}).items() if k in kinds})


class SlotIndex:
    """Per-format IDF-weighted overlap retrieval over a ``FittedCorpus`` (the baselines' count matrices), plus the
    format statistics the slot features use."""

    def __init__(self, fitted: FittedCorpus, cards: np.ndarray, params: RankParams | None = None):
        self.fit = fitted
        self.params = params or RankParams()
        self.cards = np.asarray(cards, dtype=np.float32)  # [V, len(CARD_FEATURES)]
        if self.cards.shape != (fitted.V, len(CARD_FEATURES)):
            raise ValueError(f"card features must be [{fitted.V}, {len(CARD_FEATURES)}], got {self.cards.shape}")
        newest = float(fitted.day.max()) if fitted.day.size else 0.0
        self.age = newest - fitted.day.astype(np.float64)
        self._csc, self._idf = [], []
        self.recent_side = np.zeros((fitted.F, fitted.V))
        self.recent_main = np.zeros((fitted.F, fitted.V))
        for f, rows in enumerate(fitted.rows):
            csc = fitted.main[rows].tocsc()
            csc.sort_indices()
            self._csc.append(csc)
            self._idf.append(np.log((rows.size + 1.0) / (np.diff(csc.indptr) + 1.0)))
            recent = rows[self.age[rows] <= 30]
            if recent.size:
                for mat, out in ((fitted.side, self.recent_side), (fitted.main, self.recent_main)):
                    sub = mat[recent]
                    out[f] = np.bincount(sub.indices, minlength=fitted.V) / recent.size

    def overlap(self, query_counts: np.ndarray, fmt: int) -> np.ndarray:
        """float64 [decks of the format]: each deck's IDF-weighted multiset overlap with ``query_counts`` (int [V]),
        over the query's own weight (0..1), in the order of ``fit.rows[fmt]``."""
        csc, idf = self._csc[fmt], self._idf[fmt]
        cards = np.flatnonzero(query_counts)
        n = self.fit.rows[fmt].size
        counts = query_counts[cards]
        lo, hi = csc.indptr[cards], csc.indptr[cards + 1]
        lens = hi - lo
        take = np.repeat(lo - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens) + np.arange(lens.sum())
        vals = np.minimum(csc.data[take], np.repeat(counts, lens)) * np.repeat(idf[cards], lens)
        return np.bincount(csc.indices[take], weights=vals, minlength=n) / max(float((idf[cards] * counts).sum()), 1e-9)

    def neighbours(self, query_counts: np.ndarray, fmt: int,
                   known: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(global rows, normalised overlap 0..1) of the ``neighbours`` decks with the highest IDF-weighted
        multiset overlap with ``query_counts`` (int [V]), best first (ties: the newer deck, then the row). With
        ``known`` (int [V], the user's cards within the query) the overlap is ``params.query_mix`` x the query's
        + the rest x the known cards'."""
        rows = self.fit.rows[fmt]
        n = rows.size
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        o = self.overlap(query_counts, fmt)
        mix = self.params.query_mix
        if known is not None and mix < 1.0 and not np.array_equal(known, query_counts):
            o = mix * o + (1.0 - mix) * self.overlap(np.asarray(known, dtype=np.int64), fmt)
        m = min(self.params.neighbours, n)
        age = self.age[rows]
        top = np.argpartition(-o, m - 1)[:m] if m < n else np.arange(n)
        top = top[np.lexsort((top, age[top], -o[top]))]
        return rows[top], o[top]


def _held(sub, cards: np.ndarray) -> np.ndarray:
    """int16 [len(cards), R]: copies of each (sorted) card each row of the CSR ``sub`` holds."""
    R = sub.shape[0]
    out = np.zeros((cards.size, R), dtype=np.int16)
    if cards.size == 0 or sub.nnz == 0:
        return out
    pos = np.searchsorted(cards, sub.indices)
    pos_c = np.minimum(pos, cards.size - 1)
    ok = cards[pos_c] == sub.indices
    rowid = np.repeat(np.arange(R), np.diff(sub.indptr))
    out[pos_c[ok], rowid[ok]] = np.minimum(sub.data[ok], np.iinfo(np.int16).max)
    return out


def _deck_context(index: SlotIndex, fmt: int, query: np.ndarray, sim: np.ndarray, board: int) -> np.ndarray:
    """float32 [CTX]: format one-hot, board, the query deck's colours / curve / lands / size, neighbour closeness."""
    F = index.fit.F
    feats = index.cards
    cards = np.flatnonzero(query)
    n = query[cards].astype(np.float64)
    total = max(n.sum(), 1.0)
    cf = feats[cards]
    land = cf[:, 7] > 0
    spells = n * ~land
    ns = max(spells.sum(), 1.0)
    colours = (cf[:, 10:15] * spells[:, None]).sum(0) / ns
    mv = np.clip(np.rint(cf[:, 0] * 8.0), 0, 6).astype(np.int64)
    curve = np.bincount(mv, weights=spells, minlength=7)[:7] / ns
    top = sim[:10]
    return np.concatenate([np.eye(F)[fmt], [board, (n * land).sum() / 60.0, total / 60.0,
                                            top[0] if top.size else 0.0, top.mean() if top.size else 0.0,
                                            sim.mean() if sim.size else 0.0], colours, curve]).astype(np.float32)


def context_size(F: int) -> int:
    return F + 6 + 5 + 7


# the slot features before the archetype groups (a version trained on them reads the first columns: the groups'
# columns come last, so its layout is a prefix of the current one)
LEGACY_SLOT_FEATURES = len(_VOTES) + 3 + 3 + 5 + 5 + 6 + 4 + 2 + 3 + len(CARD_FEATURES) + 2 + 3
GROUP_FEATURES = ("share_near", "share_other", "share_gap", "weight_near", "size_near", "size_other",
                  "known_near", "known_other", "medoid_overlap")
SLOT_FEATURES = LEGACY_SLOT_FEATURES + len(GROUP_FEATURES)
GROUP_COLUMNS = slice(LEGACY_SLOT_FEATURES, SLOT_FEATURES)
_GROUP_TOP = 50      # the neighbours grouped: those the base vote weighs (its 50 decks)
_GROUP_VOTE = 3      # the vote variant weighing them inside the groups (beta 10, 50 decks, 60 days: soft enough
                     # that the second group keeps weight)


@dataclass
class Groups:
    """Two archetype groups among the top neighbours: ``near`` bool [m] (the group whose decks hold more of the
    known cards, by vote weight), ``weight`` [m] the vote weights, and the deck-level figures ``GROUP_FEATURES[3:]``
    (float64 [6]). ``far`` is empty when the neighbours are one archetype."""

    near: np.ndarray
    weight: np.ndarray
    deck: np.ndarray
    medoids: tuple[int, int]


def archetype_groups(sets, weight: np.ndarray, known: np.ndarray, iterations: int = 4) -> Groups:
    """Split ``m`` neighbour decks into two archetypes by card-set overlap (2-medoids on the Jaccard similarity of
    their card sets, seeded with the best neighbour, row 0, and the neighbour least like it).

    ``sets``: scipy CSR [m, V] (any positive entry = the deck plays the card); ``weight`` float [m] the vote
    weights; ``known`` int array of the known cards (distinct ids). A few sparse / dense products over m x m."""
    m = sets.shape[0]
    w = np.asarray(weight, dtype=np.float64)[:m]
    if m == 0:
        return Groups(np.zeros(0, bool), w, np.zeros(6), (0, 0))
    b = (sets > 0).astype(np.float64).tocsr()
    inter = (b @ b.T).toarray()
    size = np.diag(inter).copy()
    jac = inter / np.maximum(size[:, None] + size[None, :] - inter, 1.0)
    a_med = 0
    b_med = int(np.argmin(jac[0]))
    if m < 2 or jac[0, b_med] >= 0.999:   # one archetype: every neighbour alike
        in_b = np.zeros(m, bool)
    else:
        in_b = jac[:, b_med] > jac[:, a_med]
        for _ in range(iterations):
            new = []
            for members in (~in_b, in_b):
                idx = np.flatnonzero(members)
                new.append(int(idx[np.argmax(jac[np.ix_(idx, idx)].sum(1))]))
            a_med, b_med = new
            nxt = jac[:, b_med] > jac[:, a_med]
            nxt[a_med], nxt[b_med] = False, True
            if np.array_equal(nxt, in_b):
                break
            in_b = nxt
    known = np.asarray(known, dtype=np.int64)
    hold = np.asarray(b[:, known].sum(axis=1)).ravel() / max(known.size, 1) if known.size else np.zeros(m)

    def closeness(members: np.ndarray) -> float:
        ww = w[members]
        return float((hold[members] * ww).sum() / ww.sum()) if members.any() and ww.sum() > 0 else 0.0
    near = in_b if (in_b.any() and closeness(in_b) > closeness(~in_b)) else ~in_b
    far = ~near
    total = max(float(w.sum()), 1e-12)
    deck = np.array([w[near].sum() / total, near.sum() / m, far.sum() / m, closeness(near), closeness(far),
                     jac[a_med, b_med] if in_b.any() else 1.0])
    return Groups(near, w, deck, (a_med, b_med))


def group_features(holds: np.ndarray, groups: Groups) -> np.ndarray:
    """float64 [S, len(GROUP_FEATURES)]: per slot the weighted vote share inside the near group and inside the
    other group (holds: bool [S, >= m], the neighbours holding the slot, best first), their difference, then the
    groups' figures (the same on every slot of the board)."""
    m = groups.near.size
    S = holds.shape[0]
    out = np.zeros((S, len(GROUP_FEATURES)))
    if m == 0 or S == 0:
        return out
    h = holds[:, :m].astype(np.float64)
    for j, members in enumerate((groups.near, ~groups.near)):
        ww = np.where(members, groups.weight, 0.0)
        if ww.sum() > 0:
            out[:, j] = h @ (ww / ww.sum())
    out[:, 2] = out[:, 0] - out[:, 1]
    out[:, 3:] = groups.deck[None, :]
    return out


@dataclass
class BoardSlots:
    """The top ``S`` candidate slots of one board with their features, best base vote first."""

    card: np.ndarray       # int64 [S]
    copy: np.ndarray       # int64 [S]: n (1-based)
    x: np.ndarray          # float32 [S, SLOT_FEATURES]
    ctx: np.ndarray        # float32 [CTX]
    base: np.ndarray       # float64 [S]: the base vote (the order without a model)
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))   # the neighbours (global rows)
    weight: np.ndarray = field(default_factory=lambda: np.zeros(0))           # their base-vote weights
    score: np.ndarray | None = None  # float64 [S]: the scores the board was filled by (``rank_fill``)


def board_slots(index: SlotIndex, fmt: int, board: int, query: np.ndarray, board_count: np.ndarray,
                other_count: np.ndarray, blocked: np.ndarray, limit: np.ndarray,
                known: np.ndarray | None = None) -> BoardSlots:
    """Candidate slots of ``board`` (0 main, 1 side) for a deck whose retrieval query is ``query`` (int [V]: the
    user's main cards, or the finished main deck for the sideboard); ``board_count`` / ``other_count``: copies
    already on this / the other board; ``blocked``: bool [V] cards that can not be added; ``limit``: int [V].
    ``known`` (int [V], the user's main cards; default ``query``): a second retrieval with them alone gives each
    slot its votes among the user's cards' neighbours too (the finished main deck's generated cards can mislead)."""
    fit = index.fit
    rows, sim = index.neighbours(query, fmt, known)
    ctx = _deck_context(index, fmt, query, sim, board)
    empty = BoardSlots(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, SLOT_FEATURES), np.float32),
                       ctx, np.zeros(0), rows, np.zeros(rows.size))
    R = rows.size
    if R == 0:
        return empty
    mat, other = (fit.main, fit.side) if board == 0 else (fit.side, fit.main)
    sub = mat[rows]
    cards = np.unique(sub.indices).astype(np.int64)
    cards = cards[~blocked[cards]]
    if cards.size == 0:
        return empty
    held = _held(sub, cards)                           # [U, R]
    held_other = _held(other[rows], cards) > 0         # [U, R]
    top = np.minimum(held.max(axis=1), _MAX_COPY).astype(np.int64)
    start = board_count[cards].astype(np.int64) + 1
    nslots = np.maximum(top - start + 1, 0)
    ui = np.repeat(np.arange(cards.size), nslots)
    if ui.size == 0:
        return empty
    copy = np.repeat(start, nslots) + (np.arange(ui.size) - np.repeat(np.cumsum(nslots) - nslots, nslots))
    holds = held[ui] >= copy[:, None]                  # [S0, R]
    # vote weights for each variant: [R, len(_VOTES)]
    age = index.age[rows]
    W = np.zeros((R, len(_VOTES)))
    for j, (beta, n, days) in enumerate(_VOTES):
        m = min(n, R)
        logw = beta * (sim[:m] - sim[0])
        if days > 0:
            logw = logw - age[:m] / days
        w = np.exp(logw - logw.max())
        W[:m, j] = w / w.sum()
    hf = holds.astype(np.float64)
    votes = hf @ W                                      # [S0, V]
    base = votes[:, _BASE_VOTE]
    card = cards[ui]
    order = np.lexsort((card, copy, -base))[:index.params.slots]
    ui, card, copy, holds, votes, base = ui[order], card[order], copy[order], holds[order], votes[order], base[order]
    S = card.size
    n10, n50 = min(10, R), min(50, R)
    shares = np.stack([holds[:, :n10].mean(1), holds[:, :n50].mean(1), holds.mean(1)], axis=1)
    first = np.where(holds.any(1), holds.argmax(1), R) / max(R, 1)
    anyh = held[ui] > 0
    w40 = W[:, 6]
    other_share = held_other[ui] @ w40
    any_share = anyh @ w40
    sim_hold = (holds * sim[None, :]).sum(1) / np.maximum(holds.sum(1), 1)
    recent_hold = (holds * (age[None, :] <= 30)).sum(1) / max(float((age <= 30).sum()), 1.0)
    share_f = (fit.side_share if board == 1 else fit.main_share)[fmt][card]
    other_f = (fit.main_share if board == 1 else fit.side_share)[fmt][card]
    recent_f = (index.recent_side if board == 1 else index.recent_main)[fmt][card]
    c1 = np.minimum(copy, 5)
    copy_oh = np.eye(5)[c1 - 1]
    oc = np.minimum(other_count[card], 4)
    other_oh = np.eye(5)[oc]
    lim = limit[card]
    room = np.where(lim > 0, lim - other_count[card] - copy + 1, 8)
    limit_f = np.stack([lim == 1, lim == 4, lim <= 0, np.clip(room, 0, 8) / 8.0], axis=1)
    mode_f = np.stack([copy <= (fit.side_mode if board == 1 else fit.main_mode)[fmt][card], copy / 8.0], axis=1)
    cf = index.cards[card]
    colours = ctx[-12:-7]
    cc = cf[:, 10:15] > 0
    fit_min = np.where(cc.any(1), np.where(cc, colours[None, :], 1.0).min(1), 1.0)
    fit_max = np.where(cc.any(1), np.where(cc, colours[None, :], 0.0).max(1), 1.0)
    rank = np.arange(S) / max(S, 1)
    logit = np.log(np.clip(base, 1e-4, 1.0))
    if known is None or np.array_equal(known, query):
        krows, ksim = rows, sim
    else:
        krows, ksim = index.neighbours(np.asarray(known, dtype=np.int64), fmt)
    kvotes = np.zeros((S, 3))
    if krows.size:
        kheld = _held(mat[krows], cards)[ui] >= copy[:, None]        # [S, R2]
        kage = index.age[krows]
        for j, (beta, n) in enumerate(((10.0, 100), (40.0, 50))):
            m = min(n, krows.size)
            logw = beta * (ksim[:m] - ksim[0]) - kage[:m] / 60.0
            w = np.exp(logw - logw.max())
            kvotes[:, j] = kheld[:, :m] @ (w / w.sum())
        kvotes[:, 2] = kheld[:, :min(50, krows.size)].mean(1)
    m = min(_GROUP_TOP, R)
    kc = np.flatnonzero(np.asarray(query if known is None else known))
    groups = archetype_groups(fit.main[rows[:m]], W[:m, _GROUP_VOTE], kc)
    x = np.concatenate([
        votes, shares, np.stack([first, other_share, any_share], 1), copy_oh, other_oh,
        np.stack([sim_hold, recent_hold, share_f, other_f, recent_f, rank], 1), limit_f, mode_f,
        np.stack([logit / 5.0, np.log1p(holds.sum(1)) / 5.0, np.log(np.clip(share_f, 1e-5, 1)) / 10.0], 1),
        cf, np.stack([fit_min, fit_max], 1), kvotes, group_features(holds, groups)], axis=1).astype(np.float32)
    return BoardSlots(card.astype(np.int64), copy.astype(np.int64), x, ctx, base, rows, W[:, _BASE_VOTE])


CARD_COLUMNS = slice(LEGACY_SLOT_FEATURES - len(CARD_FEATURES) - 5, LEGACY_SLOT_FEATURES - 3)


def slot_targets(slots: BoardSlots, true_counts: np.ndarray) -> np.ndarray:
    """float32 [S]: 1 where the true board holds at least the slot's copy number of its card."""
    return (true_counts[slots.card] >= slots.copy).astype(np.float32)


# ----------------------------------------------------------------------------------------- the network

@dataclass(frozen=True)
class RankerConfig:
    slot_features: int = SLOT_FEATURES
    context: int = 25
    width: int = 96
    layers: int = 2           # set-attention layers (0: each slot scored on its own, the ablation)
    heads: int = 4
    card_features: bool = True
    archetype_groups: bool = True  # False: the archetype groups' columns zeroed (the ablation)

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict) -> "RankerConfig":
        return cls(**{k: type(getattr(cls, k))(v) for k, v in d.items() if k in cls.__dataclass_fields__})


class SlotRanker(nn.Module):
    """Slot tokens (evidence + card features + deck context) -> one score per slot, the slots attending to each
    other and to a deck-context token."""

    def __init__(self, config: RankerConfig):
        super().__init__()
        self.config = config
        d = config.width
        self.slot_in = nn.Sequential(nn.Linear(config.slot_features + config.context, d), nn.GELU(), nn.Linear(d, d))
        self.ctx_in = nn.Sequential(nn.Linear(config.context, d), nn.GELU(), nn.Linear(d, d))
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d, config.heads, 2 * d, dropout=0.0, batch_first=True, norm_first=True)
            for _ in range(config.layers)])
        self.out = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d), nn.GELU(), nn.Linear(d, 1))

    def forward(self, x: torch.Tensor, ctx: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x [B, S, D], ctx [B, C], mask bool [B, S] (True = a real slot) -> logits [B, S]."""
        if x.shape[-1] > self.config.slot_features:  # a version trained before the groups: their columns last
            x = x[..., :self.config.slot_features]
        if not self.config.card_features or not self.config.archetype_groups:
            x = x.clone()
            if not self.config.card_features:
                x[..., CARD_COLUMNS] = 0.0
            if not self.config.archetype_groups:
                x[..., GROUP_COLUMNS] = 0.0
        S = x.shape[1]
        h = self.slot_in(torch.cat([x, ctx[:, None, :].expand(-1, S, -1)], dim=-1))
        if self.layers:
            c = self.ctx_in(ctx)[:, None, :]
            h = torch.cat([c, h], dim=1)
            pad = torch.cat([torch.zeros_like(mask[:, :1]), ~mask], dim=1)
            for layer in self.layers:
                h = layer(h, src_key_padding_mask=pad)
            h = h[:, 1:]
        return self.out(h).squeeze(-1)


def train_ranker(X: np.ndarray, C: np.ndarray, Y: np.ndarray, M: np.ndarray, config: RankerConfig, *,
                 epochs: int = 6, batch: int = 64, lr: float = 2e-3, seed: int = 0, listwise: float = 1.0,
                 log=None, valid=None) -> SlotRanker:
    """Fit a ``SlotRanker`` on padded examples: X float32 [E, S, D], C [E, CTX], Y float32 [E, S] (targets), M bool
    [E, S]. Loss: mean binary cross-entropy over real slots + ``listwise`` x the softmax cross-entropy of the
    targets spread evenly over the true slots (ListNet). ``valid(model) -> float`` is called after each epoch
    (higher is better) and the best epoch's weights are kept."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = SlotRanker(config)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    E = X.shape[0]
    steps = epochs * math.ceil(E / batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    Xt, Ct, Yt, Mt = (torch.from_numpy(np.ascontiguousarray(a)) for a in (X, C, Y, M))
    best, best_state = -math.inf, None
    for epoch in range(epochs):
        model.train()
        perm = rng.permutation(E)
        total = 0.0
        for i in range(0, E, batch):
            idx = torch.from_numpy(perm[i:i + batch])
            x, c, y, m = Xt[idx], Ct[idx], Yt[idx], Mt[idx]
            logits = model(x, c, m)
            mf = m.float()
            bce = (nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="none") * mf).sum() / mf.sum()
            loss = bce
            if listwise:
                logp = torch.log_softmax(logits.masked_fill(~m, -1e9), dim=-1)
                tgt = y * mf / (y * mf).sum(-1, keepdim=True).clamp_min(1.0)
                loss = loss + listwise * -(tgt * logp).sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * idx.numel()
        model.eval()
        score = valid(model) if valid is not None else -total
        if log:
            log(f"epoch {epoch + 1}/{epochs}: loss {total / E:.4f}, validation {score:.4f}")
        if score > best:
            best, best_state = score, {k: v.clone() for k, v in model.state_dict().items()}
    if best_state is not None:
        model.load_state_dict(best_state)
    return model.eval()


def score_slots(model: SlotRanker | None, slots: BoardSlots) -> np.ndarray:
    """float64 [S]: the model's logits for one board's slots (no model: the base vote)."""
    if model is None or slots.card.size == 0:
        return slots.base.astype(np.float64)
    with torch.no_grad():
        x = torch.from_numpy(slots.x)[None]
        c = torch.from_numpy(slots.ctx)[None]
        m = torch.ones(1, slots.card.size, dtype=torch.bool)
        return model(x, c, m)[0].double().numpy()


def rank_fill(model: SlotRanker | None, index: SlotIndex, b: DeckBuilder, board: int,
              query: np.ndarray | None = None) -> BoardSlots:
    """Fill one board of the builder ``b`` by the ranker's scores (copy n only after copy n - 1; a copy's score is
    at most its previous copy's), the builder's limits as hard masks. ``query``: the retrieval query (default:
    the main deck as it stands). Returns the slots (for the confidence and the sources)."""
    main_count = np.asarray(b.main_count, dtype=np.int64)
    side_count = np.asarray(b.side_count, dtype=np.int64)
    q = main_count if query is None else np.asarray(query, dtype=np.int64)
    count, other = (main_count, side_count) if board == 0 else (side_count, main_count)
    slots = board_slots(index, b.fmt, board, q, count, other, b.blocked(), b.limit,
                        known=np.asarray(b.main_known_count, dtype=np.int64))
    if slots.card.size == 0:
        return slots
    s = score_slots(model, slots)
    # a copy may not outrank the copy before it: cumulative minimum over each card's copies in copy order
    order = np.lexsort((slots.copy, slots.card))
    cards_sorted = slots.card[order]
    s_sorted = s[order].copy()
    for i in range(1, s_sorted.size):
        if cards_sorted[i] == cards_sorted[i - 1]:
            s_sorted[i] = min(s_sorted[i], s_sorted[i - 1])
    s[order] = s_sorted
    add, left = (b.add_main, lambda: b.main_left) if board == 0 else (b.add_side, lambda: b.side_left)
    cnt = b.main_count if board == 0 else b.side_count
    pending = list(np.lexsort((slots.card, slots.copy, -s)))
    progress = True
    while pending and left() > 0 and progress:  # a slot whose previous copy comes later waits for it
        progress, rest = False, []
        for k in pending:
            if left() <= 0:
                break
            c, j = int(slots.card[k]), int(slots.copy[k])
            if cnt[c] >= j:
                progress = True
                continue
            if cnt[c] == j - 1:
                if add(c, 1):
                    progress = True
                continue
            rest.append(k)
        pending = rest
    slots.score = s
    return slots


# ----------------------------------------------------------------------------------------- training examples

@dataclass
class Examples:
    """Padded training / validation examples of one board: X [E, S, D], C [E, CTX], Y [E, S], M [E, S] (real
    slots), and per example the true board's copies found among the candidates (``covered``) and K."""

    X: np.ndarray
    C: np.ndarray
    Y: np.ndarray
    M: np.ndarray
    covered: np.ndarray
    K: np.ndarray

    FIELDS = ("X", "C", "Y", "M", "covered", "K")

    def __len__(self) -> int:
        return self.X.shape[0]

    @classmethod
    def stack(cls, parts: list["Examples"]) -> "Examples":
        return cls(*(np.concatenate([getattr(p, k) for p in parts]) for k in cls.FIELDS))

    def subset(self, idx) -> "Examples":
        return Examples(*(getattr(self, k)[idx] for k in self.FIELDS))

    def arrays(self, prefix: str = "") -> dict:
        """The arrays by name (``prefix`` + field), for ``np.savez``."""
        return {f"{prefix}{k}": getattr(self, k) for k in self.FIELDS}

    @classmethod
    def from_arrays(cls, z, prefix: str = "") -> "Examples":
        """The examples ``arrays(prefix)`` wrote (``z``: an opened ``np.load`` file or a dict)."""
        return cls(*(z[f"{prefix}{k}"] for k in cls.FIELDS))


def board_examples(vote, index: SlotIndex, decks, rows, Ks, popularity: np.ndarray, seed: int, board: int = 1,
                   progress=None) -> Examples:
    """Examples of one board for ``decks`` rows ``rows`` (decks not in the corpus of ``vote`` / ``index``, which share
    one ``FittedCorpus``): K known main cards by the evaluation's masking rule (K cycles through ``Ks``). Main
    (``board`` 0): the slots the neighbours of the known cards offer, the hidden main cards as targets. Sideboard
    (1): the main deck the tuned vote completes from the known cards (what the sideboard stage sees at inference),
    then that deck's sideboard slots with the true sideboard as targets."""
    S = index.params.slots
    fit = vote.fitted
    E = len(rows)
    X = np.zeros((E, S, SLOT_FEATURES), np.float32)
    C = np.zeros((E, context_size(fit.F)), np.float32)
    Y = np.zeros((E, S), np.float32)
    M = np.zeros((E, S), bool)
    covered = np.zeros(E)
    Kout = np.zeros(E, np.int64)
    for i, d in enumerate(rows):
        K = int(Ks[i % len(Ks)])
        row = np.asarray(decks.main[d], dtype=np.int64)
        f = int(decks.fmt[d])
        known = row[known_from_count(row, K, popularity, np.random.default_rng([seed, K, int(d)]))]
        b = DeckBuilder(fit, f, known, [])
        if board == 1:
            nrows, w = vote.neighbours(b.main, f)
            if nrows.size:
                vote._fill(nrows, w, b, 0)
            slots = board_slots(index, f, 1, b.main_count, b.side_count, b.main_count, b.blocked(), b.limit,
                                known=b.main_known_count)
            truth = np.asarray(decks.side[d], dtype=np.int64)
        else:
            slots = board_slots(index, f, 0, b.main_count, b.main_count, b.side_count, b.blocked(), b.limit)
            truth = row
        y = slot_targets(slots, np.bincount(truth, minlength=fit.V))
        n = slots.card.size
        X[i, :n], C[i], Y[i, :n], M[i, :n] = slots.x, slots.ctx, y, True
        covered[i], Kout[i] = y.sum(), K
        if progress:
            progress(i + 1, E)
    return Examples(X, C, Y, M, covered, Kout)


def side_examples(vote, index: SlotIndex, decks, rows, Ks, popularity: np.ndarray, seed: int,
                  progress=None) -> Examples:
    """``board_examples`` of the sideboard."""
    return board_examples(vote, index, decks, rows, Ks, popularity, seed, 1, progress)


def topk_recall(model: SlotRanker | None, ex: Examples, k=15, board_size=15) -> np.ndarray:
    """Per example: the share of the true board among the ``k`` best-scored candidates (no model: the base vote,
    the candidates' order); ``k`` and ``board_size`` may be arrays (per example: the main deck's hidden cards). A
    fast proxy of the board's recall for choosing settings (copy order, limits and the fallback fill are left to
    ``rank_fill``)."""
    return recall_of(example_scores(model, ex), ex, k, board_size)


def example_scores(model: SlotRanker | None, ex: Examples) -> np.ndarray:
    """float64 [E, S]: the model's logits of every example's slots (no model: the candidates' order), -inf on
    padding; averaging several models' scores gives their ensemble."""
    E, S = ex.M.shape
    if model is None:
        return np.where(ex.M, -np.arange(S)[None, :], -np.inf).astype(np.float64)
    with torch.no_grad():
        s = np.concatenate([model(torch.from_numpy(ex.X[i:i + 256]), torch.from_numpy(ex.C[i:i + 256]),
                                  torch.from_numpy(ex.M[i:i + 256])).double().numpy()
                            for i in range(0, E, 256)])
    return np.where(ex.M, s, -np.inf)


def recall_of(s: np.ndarray, ex: Examples, k=15, board_size=15) -> np.ndarray:
    """``topk_recall`` of given scores ``s`` [E, S] (``example_scores``)."""
    E, S = ex.M.shape
    order = np.argsort(-s, axis=1, kind="stable")
    taken = np.arange(S)[None, :] < np.broadcast_to(np.asarray(k), (E,))[:, None]
    return (np.take_along_axis(ex.Y, order, axis=1) * taken).sum(1) / np.broadcast_to(np.asarray(board_size), (E,))


# ----------------------------------------------------------------------------------------- the whole fit

def month_start(day: int, back: int) -> int:
    """The day number of the first day of the month ``back`` months before the month of ``day``."""
    d = dt.date(1970, 1, 1) + dt.timedelta(days=int(day))
    y, m = d.year, d.month - back
    while m < 1:
        y, m = y - 1, m + 12
    return (dt.date(y, m, 1) - dt.date(1970, 1, 1)).days


@dataclass(frozen=True)
class FitPlan:
    """What ``fit_side_ranker`` trains on: the ``months`` months before the validation month (the month before the
    split), ``per_month`` decks each, their retrieval corpus the decks before their own month; ``val`` decks of the
    validation month pick the epoch. The vote that completes the examples' main decks uses ``vote``."""

    months: int = 2
    per_month: int = 6000
    val: int = 900
    Ks: tuple = (10, 20, 40)
    epochs: int = 8
    batch: int = 64
    lr: float = 2e-3
    seed: int = 0
    vote: tuple = (100, 10.0, 60.0)   # TunedVoteBaseline's VoteParams (neighbours, kernel, recency days)

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def month_examples(train, V: int, legal: np.ndarray, copy_limit: np.ndarray, restricted: np.ndarray | None,
                   cards: np.ndarray, popularity: np.ndarray, start: int, end: int, n: int, rng, plan: FitPlan,
                   params: RankParams, gap: int = 0, seed: int = 0, progress=None) -> Examples | None:
    """Sideboard examples of up to ``n`` decks of ``train`` first seen on days [``start``, ``end``) (``start``: the
    first day of a month), drawn with ``rng``. Their retrieval corpus is every deck first seen before the month
    ``gap`` months before ``start`` (0: before the month itself; 1 or 2 leave the corpus a month or two older
    than the decks, as a site's corpus ages before the next import). None when there are no such decks."""
    corpus, rest = split_by_date(train, month_start(start, gap))
    rows = np.flatnonzero((rest.day >= start) & (rest.day < end))
    if rows.size == 0 or len(corpus) == 0:
        return None
    pick = rng.choice(rows, size=min(n, rows.size), replace=False)
    vote_params = VoteParams(int(plan.vote[0]), float(plan.vote[1]), float(plan.vote[2]))
    vote = TunedVoteBaseline(vote_params).fit(corpus, V, legal, copy_limit, restricted=restricted)
    index = SlotIndex(vote.fitted, cards, params)
    return side_examples(vote, index, rest, pick, plan.Ks, popularity, seed, progress)


def fit_side_ranker(train, V: int, legal: np.ndarray, copy_limit: np.ndarray, restricted: np.ndarray | None,
                    cards: np.ndarray, popularity: np.ndarray, split: int, config: RankerConfig,
                    params: RankParams | None = None, plan: FitPlan | None = None, log=None,
                    progress=None, cache=None) -> tuple[SlotRanker, dict]:
    """Train the sideboard ranker on ``train`` (decks before the split day ``split``): returns (model, metrics with the
    validation month's top-15 proxy recall for the model and for the base vote, per K). ``cache``: a path where the
    examples are stored and read back (they depend on the data, ``params`` and ``plan``, not on the network)."""
    plan = plan or FitPlan()
    if cache is not None and Path(cache).exists():
        with np.load(cache) as z:
            tr = Examples.from_arrays(z, "tr_")
            val = Examples.from_arrays(z, "val_") if "val_X" in z else None
        (log or (lambda message: None))(f"examples read back from {cache}: {len(tr)} training")
        return _fit_on(tr, val, config, plan, log, time.perf_counter())
    started = time.perf_counter()
    params = params or RankParams()
    log = log or (lambda message: None)
    rng = np.random.default_rng(plan.seed)
    val_start = month_start(split - 1, 0)
    parts, val = [], None
    total = plan.months * plan.per_month + plan.val
    done = 0
    for back in range(plan.months, -1, -1):  # the oldest training month first, the validation month last
        start = month_start(val_start, back)
        end = month_start(val_start, back - 1) if back > 0 else split
        n = plan.val if back == 0 else plan.per_month

        def step(i, _n, base=done):
            if progress:
                progress(base + i, total)
        ex = month_examples(train, V, legal, copy_limit, restricted, cards, popularity, start, end, n, rng, plan,
                            params, seed=plan.seed + back, progress=step)
        if ex is None:
            log(f"month starting day {start}: no decks, skipped")
            continue
        done += n
        log(f"{'validation' if back == 0 else 'training'} month starting day {start}: {len(ex)} examples, "
            f"candidates cover {ex.covered.mean() / 15:.3f} of the sideboard")
        if back == 0:
            val = ex
        else:
            parts.append(ex)
    if not parts:
        raise ValueError("no training decks in the months before the validation month")
    tr = Examples.stack(parts)
    if cache is not None:
        Path(cache).parent.mkdir(parents=True, exist_ok=True)
        arrays = tr.arrays("tr_")
        if val is not None:
            arrays.update(val.arrays("val_"))
        with open(cache, "wb") as fh:
            np.savez(fh, **arrays)
    return _fit_on(tr, val, config, plan, log, started)


def _fit_on(tr: Examples, val: Examples | None, config: RankerConfig, plan: FitPlan, log, started: float):
    log = log or (lambda message: None)
    valid = (lambda m: float(topk_recall(m, val).mean())) if val is not None else None
    model = train_ranker(tr.X, tr.C, tr.Y, tr.M, config, epochs=plan.epochs, batch=plan.batch, lr=plan.lr,
                         seed=plan.seed, log=log, valid=valid)
    metrics = {"train_examples": len(tr), "seconds": round(time.perf_counter() - started, 1),
               "parameters": int(sum(p.numel() for p in model.parameters()))}
    if val is not None:
        mine, base = topk_recall(model, val), topk_recall(None, val)
        metrics["val_recall"] = round(float(mine.mean()), 4)  # the registry's headline figure of the version
        metrics["validation"] = {
            "examples": len(val), "coverage": round(float(val.covered.mean() / 15), 4),
            "side_top15_model": round(float(mine.mean()), 4), "side_top15_base_vote": round(float(base.mean()), 4),
            **{f"K={K}": [round(float(mine[val.K == K].mean()), 4), round(float(base[val.K == K].mean()), 4)]
               for K in plan.Ks}}
    return model, metrics


def ranker_from(config: dict, tensors: dict) -> SlotRanker:
    """The ``SlotRanker`` of a ``deck_rank`` version's config and tensors (ValueError when they do not fit)."""
    features = int(config.get("slot_features", SLOT_FEATURES))
    if features not in (SLOT_FEATURES, LEGACY_SLOT_FEATURES):
        raise ValueError(f"its slots have {config.get('slot_features')} features, this code makes {SLOT_FEATURES}")
    model = SlotRanker(RankerConfig.from_dict({**(config.get("model") or {}), "slot_features": features}))
    try:
        model.load_state_dict({k: v.float() for k, v in tensors.items()})
    except RuntimeError as exc:
        raise ValueError(str(exc).splitlines()[0]) from None
    return model.eval()
