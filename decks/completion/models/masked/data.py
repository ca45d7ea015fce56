"""Training examples for the masked deck denoiser (pure numpy; retrieval through ``decks.completion.models.retrieval``).

For a training deck an example is built the way the sampler will meet it:

1. the **user's cards**: K main cards kept by the evaluation's masking rule (``known_from_count``: whole card
   groups, rarer cards hidden first), K biased toward what users send (1..40 most of the time);
2. the **neighbours**: the top-M decks for those cards among the decks played *before* it (as a user at that
   date would get; the deck itself excluded), fixed for the whole run;
3. the **sampler's progress**: some of the hidden groups are revealed too (as if generated in earlier steps),
   so the network learns to use the cards already placed while the neighbours stay those of the user's cards.

Hidden groups are the targets (their hidden copy counts). The sideboard example sees the whole main deck and
the neighbours retrieved with it, and predicts the hidden sideboard tokens.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from decks.completion.models.retrieval import DeckIndex, Neighbours, RetrievalParams, narrow
from decks.completion.models.masked.model import MAX_COUNT_IN, Example, candidate_features
from decks.completion.models.masking import batch_masks

__all__ = ["Tables", "Plan", "plan_examples", "board_example", "user_k", "visible_batch"]


@dataclass
class Tables:
    """Per-format facts the features and the legality masks need (catalogue card space, [F, V])."""

    legal: np.ndarray        # bool [F, V]
    limit: np.ndarray        # int [F, V]: copies allowed across main + side (0 = any number)
    popularity: np.ndarray   # float32 [F, V]: share of the format's decks playing the card
    token: np.ndarray        # int64 [V]: model token of each catalogue card (0 = unknown)

    def blocked(self, fmt: int, main_count: np.ndarray, side_count: np.ndarray) -> np.ndarray:
        lim = self.limit[fmt]
        return ~self.legal[fmt] | ((lim > 0) & (main_count + side_count >= lim))


@dataclass
class Plan:
    """Where an example comes from: deck row, which board, the user's cards, the revealed cards, neighbours."""

    row: int
    board: int
    user: np.ndarray         # bool [60] (main) or [15] (side: the given side slots)
    shown: np.ndarray        # bool [same]: the user's slots
    nb_rows: np.ndarray      # int64 [m]
    nb_weight: np.ndarray    # float64 [m]
    wide_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # the wider, softer set
    wide_weight: np.ndarray = field(default_factory=lambda: np.zeros(0))
    extra_cards: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))   # placed by the vote fill
    extra_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # sideboard examples: the main deck the sideboard sees (None = the true one) and the share the user gave
    main_cards: np.ndarray | None = None
    main_counts: np.ndarray | None = None
    main_given: float = 1.0


def user_k(rng: np.random.Generator, n: int) -> np.ndarray:
    """Known main counts biased toward what users send: 85% in 1..40, else 41..59."""
    low = rng.integers(1, 41, size=n)
    high = rng.integers(41, 60, size=n)
    return np.where(rng.random(n) < 0.85, low, high)


def progress_fill(votes, start: dict[int, int], n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` copies the vote order adds to a board holding ``start`` {card: copies}: (cards, counts)."""
    if n <= 0 or votes.cards.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    table = votes.table
    U, W = table.shape
    have = np.array([start.get(int(c), 0) for c in votes.cards], dtype=np.int64)
    nn = np.broadcast_to(np.arange(W), (U, W))
    ok = (nn > have[:, None]) & (table > 0) & (nn <= have[:, None] + 4)
    ui, ni = np.nonzero(ok)
    order = np.lexsort((votes.cards[ui], ni, -table[ui, ni]))[:n]
    # the vote falls with n, so the first n slots of a card are its next copies in order
    cards, counts = np.unique(votes.cards[ui[order]], return_counts=True)
    return cards.astype(np.int64), counts.astype(np.int64)


def plan_examples(index: DeckIndex, main: np.ndarray, side: np.ndarray, fmt: np.ndarray, day: np.ndarray,
                  rows: np.ndarray, popularity_all: np.ndarray, params: RetrievalParams, seed: int,
                  side_share: float = 0.5, progress=None, generated_main: float = 0.7) -> list[Plan]:
    """Plans for decks ``rows`` of the index (main example each; a side example for ``side_share`` of them).

    A sideboard example sees, ``generated_main`` of the time, the main deck as the sampler would have made it
    from the main example's user cards (those cards, then the vote's fill: right or wrong, as at inference),
    else the true main deck (a user who gives the whole main deck). The expensive part (retrieval over the
    corpus) happens here, once; the features are computed per batch.
    """
    rng = np.random.default_rng([int(seed), 0xD1FF])
    plans: list[Plan] = []
    rows = np.asarray(rows, dtype=np.int64)
    ks = user_k(rng, rows.size)
    for i, r in enumerate(rows):
        r = int(r)
        m = main[r]
        user = batch_masks(m[None, :], popularity_all, rng, kind="main", k=int(ks[i]))[0]
        cards, counts = np.unique(m[user], return_counts=True)
        f = int(fmt[r])
        nb, wide = index.neighbour_sets(cards, counts, f, float(day[r]), params, exclude=[r], past_only=True)
        left = 60 - int(user.sum())
        frac = rng.random() * 0.9 if rng.random() < 0.6 else 0.0
        ec, en = progress_fill(index.votes(nb, "main"), dict(zip(cards.tolist(), counts.tolist())),
                               int(round(frac * left)))
        plans.append(Plan(r, 0, user, user, nb.rows, nb.weight, wide.rows.astype(np.int32), wide.weight.astype(np.float32),
                          ec, en))
        if rng.random() < side_share:
            s = side[r]
            k = 0 if rng.random() < 0.6 else int(rng.integers(1, 15))
            sk = batch_masks(s[None, :], popularity_all, rng, kind="side", k=k)[0]
            main_cards = main_counts = None
            given = 1.0
            if rng.random() < generated_main and left > 0:
                fc, fn = progress_fill(index.votes(nb, "main"), dict(zip(cards.tolist(), counts.tolist())), left)
                merged = np.bincount(np.concatenate([np.repeat(cards, counts), np.repeat(fc, fn)]))
                main_cards = np.flatnonzero(merged).astype(np.int64)
                main_counts = merged[main_cards].astype(np.int64)
                given = float(user.sum()) / 60.0
                cards, counts = main_cards, main_counts
            else:
                cards, counts = np.unique(m, return_counts=True)
            nb, wide = index.neighbour_sets(cards, counts, f, float(day[r]), params, exclude=[r], past_only=True)
            scards, scounts = np.unique(s[sk], return_counts=True)
            frac = rng.random() * 0.9 if rng.random() < 0.6 else 0.0
            ec, en = progress_fill(index.votes(nb, "side"), dict(zip(scards.tolist(), scounts.tolist())),
                                   int(round(frac * (15 - k))))
            plans.append(Plan(r, 1, sk, sk, nb.rows, nb.weight, wide.rows.astype(np.int32),
                              wide.weight.astype(np.float32), ec, en, main_cards, main_counts, given))
        if progress and (i + 1) % 500 == 0:
            progress(i + 1, rows.size)
    return plans


def board_example(index: DeckIndex, tables: Tables, fmt: int, main_vis: np.ndarray, side_vis: np.ndarray,
                  nb: Neighbours, board: int, candidates: int, target_counts: np.ndarray | None = None,
                  votes=None, wide: Neighbours | None = None, extra_votes=None, main_given: float = 1.0) -> Example:
    """The denoiser input for one board.

    ``main_vis`` / ``side_vis``: visible copies per card [V]; ``nb``: the neighbours; ``board``: 0 main, 1 side;
    ``target_counts``: the true copies of the predicted board per card [V] (training), else None;
    ``votes``: the neighbours' (main, side) ``Votes`` when already computed (the sampler reuses them);
    ``wide``: the wider neighbour set (second-opinion features); ``extra_votes``: its and the 10 nearest
    decks' (wide, narrow) votes of the predicted board when already computed; ``main_given``: the share of the
    main deck the user gave (the rest was generated).
    """
    votes_main, votes_side = votes if votes is not None else (index.votes(nb, "main"), index.votes(nb, "side"))
    part = "main" if board == 0 else "side"
    if extra_votes is None:
        extra_votes = (index.votes(wide, part) if wide is not None and wide.rows.size else None,
                       index.votes(narrow(nb), part))
    this, other = (votes_main, votes_side) if board == 0 else (votes_side, votes_main)
    vis_b, vis_o = (main_vis, side_vis) if board == 0 else (side_vis, main_vis)
    blocked = tables.blocked(fmt, main_vis, side_vis)
    slots = 60 if board == 0 else 15
    cards, feats, prior_tok, prior_cnt = candidate_features(this, other, vis_b, vis_o, tables.popularity[fmt],
                                                            blocked, candidates, extra_votes[0], extra_votes[1],
                                                            max(0, slots - int(vis_b.sum())))
    mc, sc = np.flatnonzero(main_vis), np.flatnonzero(side_vis)
    vis_cards = np.concatenate([mc, sc])
    vis_tok = tables.token[vis_cards]
    vis_cnt = np.concatenate([main_vis[mc], side_vis[sc]]).astype(np.int64)
    vis_seg = np.concatenate([np.zeros(mc.size, np.int64), np.ones(sc.size, np.int64)])
    known = int(vis_b.sum())
    target = None
    if target_counts is not None:
        target = np.maximum(target_counts[cards] - vis_b[cards], 0).astype(np.int64)
    return Example(vis_tok, vis_cnt, vis_seg, cards, tables.token[cards], feats, prior_tok, prior_cnt, board, fmt,
                   min(1.0, known / slots), target, float(main_given))


def plan_to_example(index: DeckIndex, tables: Tables, plan: Plan, main: np.ndarray, side: np.ndarray,
                    fmt: np.ndarray, candidates: int) -> Example:
    V = tables.token.size
    r = plan.row
    f = int(fmt[r])
    nb = Neighbours(plan.nb_rows, np.zeros(plan.nb_rows.size), plan.nb_weight)
    wide = Neighbours(plan.wide_rows.astype(np.int64), np.zeros(plan.wide_rows.size), plan.wide_weight.astype(np.float64))
    given = plan.main_given
    if plan.board == 0:
        main_vis = np.bincount(main[r][plan.shown], minlength=V)
        main_vis[plan.extra_cards] += plan.extra_counts
        side_vis = np.zeros(V, np.int64)
        truth = np.bincount(main[r], minlength=V)
        given = float(plan.user.sum()) / 60.0
    else:
        if plan.main_cards is None:
            main_vis = np.bincount(main[r], minlength=V)
        else:
            main_vis = np.zeros(V, np.int64)
            main_vis[plan.main_cards] = plan.main_counts
        side_vis = np.bincount(side[r][plan.shown], minlength=V)
        side_vis[plan.extra_cards] += plan.extra_counts
        truth = np.bincount(side[r], minlength=V)
    return board_example(index, tables, f, main_vis, side_vis, nb, plan.board, candidates, truth, wide=wide,
                         main_given=given)


def visible_batch(tables: Tables, items) -> dict[str, torch.Tensor]:
    """Batch tensors for ``items`` = [(fmt, board, main_vis [V], side_vis [V])] (copies per catalogue card),
    with ``allowed`` [B, vocab]: tokens the board may take another copy of (legal, within the copy limit)."""
    B = len(items)
    vocab = int(tables.token.max()) + 1
    per = []
    for f, board, mv, sv in items:
        mc, sc = np.flatnonzero(mv), np.flatnonzero(sv)
        per.append((np.concatenate([tables.token[mc], tables.token[sc]]),
                    np.concatenate([mv[mc], sv[sc]]).astype(np.int64),
                    np.concatenate([np.zeros(mc.size, np.int64), np.ones(sc.size, np.int64)])))
    L = max(1, max(p[0].size for p in per))
    vis_tok, vis_cnt, vis_seg = (np.zeros((B, L), np.int64) for _ in range(3))
    vis_pad = np.ones((B, L), bool)
    allowed = np.zeros((B, vocab), bool)
    known = np.zeros(B, np.float32)
    for i, ((f, board, mv, sv), (tok, cnt, seg)) in enumerate(zip(items, per)):
        n = tok.size
        vis_tok[i, :n], vis_cnt[i, :n], vis_seg[i, :n], vis_pad[i, :n] = tok, cnt, seg, False
        ok = ~tables.blocked(f, mv, sv) & (tables.token > 0)
        allowed[i, tables.token[ok]] = True
        known[i] = min(1.0, float((mv if board == 0 else sv).sum()) / (60 if board == 0 else 15))
    t = torch.from_numpy
    return {"vis_tok": t(vis_tok), "vis_cnt": t(np.minimum(vis_cnt, MAX_COUNT_IN)), "vis_seg": t(vis_seg),
            "vis_pad": t(vis_pad), "allowed": t(allowed), "known_frac": t(known),
            "board": torch.tensor([it[1] for it in items]), "fmt": torch.tensor([int(it[0]) for it in items])}
