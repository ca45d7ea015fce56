"""The deck-level slot ranker's features (pure numpy): card features from the catalogue, the retrieval index over
the corpus (``SlotIndex``), the archetype groups of the neighbours, and one board's candidate slots with their
evidence (``board_slots``). The network is ``rank_model``; ``deckrank`` says the whole and trains it."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from decks.completion.models.baselines import FittedCorpus

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
