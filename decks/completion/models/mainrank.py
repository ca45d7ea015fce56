"""A deck-level main-deck ranker over the masked model's and the vote's slot evidence (issue 36, part 3; pure
numpy + torch). Measured on the validation month with ``bench.main_rank``: it does not beat the masked model's own main
deck there (docs/completion.md, "A main-deck ranker"), so it is not a registered kind and the site does not use it;
``MaskedCompleter.main_ranker`` takes one for the bench.

The masked completer fills the main deck in one round, most probable (card, n-th copy) slot first. This ranker
re-scores those slots together with the neighbours' other slots, the way ``deckrank`` scores the sideboard:

- **candidates**: the main-deck slots of the ``R`` decks with the highest IDF-weighted overlap with the user's cards
  (``rank_features.board_slots``, board 0) ranked by the base vote, and every slot of the masked model's own main
  deck among them first (``RANK_MAIN.slots`` in all): the union of the masked model's deck and the vote's best;
- **features**: the sideboard ranker's slot evidence (votes at several kernels, shares, card features, archetype
  groups, deck context) plus the masked model's (``MASKED_FEATURES``): the slot's log-probability under the
  network and under its neighbour vote (gate 1), whether the masked model's deck holds it, its rank in the masked
  model's order, the copies that deck holds and the deck's land count;
- **network** (``ResidualRanker``): the masked model's slot logit plus a ``rank_model.SlotRanker`` correction (set
  attention over the slots and a deck-context token; its last layer starts at zero, so the untrained ranker is the
  masked model's order); trained on decks of the months before the validation month, the hidden main cards as targets;
- **assembly** (``MainRanker.fill``): slots in score order into the ``DeckBuilder`` (copy n only after copy n - 1;
  legality, copy limits and the collection are its hard masks; the given cards are in the builder from the start
  and never removed), then the masked model's own round for any slot left, then the builder's fallbacks: always a
  legal 60 with every given card.
"""
from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from decks.completion.models.baselines import DeckBuilder
from decks.completion.models.example_arrays import FieldArrays
from decks.completion.models.masking import known_cards
from decks.completion.models.rank_features import (SLOT_FEATURES, BoardSlots, RankParams, SlotIndex, board_slots,
                                                   slot_targets)
from decks.completion.models.rank_model import RankerConfig, SlotRanker, fill_scored, score_slots, train_ranker

__all__ = ["MASKED_FEATURES", "MAIN_SLOT_FEATURES", "RANK_MAIN", "MainEvidence", "MainRanker", "masked_evidence",
           "ResidualRanker", "main_slots", "main_examples", "month_examples_before", "MainExamples", "main_recall_proxy", "masked_order", "fit_main_ranker", "main_ranker_from"]

MASKED_FEATURES = ("masked_logp", "prior_logp", "masked_missing", "in_masked_deck", "masked_rank", "masked_copies",
                   "masked_lands")
MAIN_SLOT_FEATURES = SLOT_FEATURES + len(MASKED_FEATURES)
RANK_MAIN = RankParams(neighbours=200, slots=112)   # candidates: the main deck's hidden cards are up to 50
_POOL = 4            # board_slots is asked for _POOL x slots, the masked model's deck is taken from them first
_FLOOR = -12.0       # log-probability of a slot the masked model did not score


@dataclass
class MainEvidence:
    """The masked model's view of one main deck: its one-round deck (``counts`` [V], the given cards included), and
    per candidate card its slot log-probabilities ``scores`` [C, MAX_ADD] (adding j more copies over ``visible``)
    under the network and under its neighbour vote (``prior``)."""

    counts: np.ndarray
    cards: np.ndarray
    scores: np.ndarray
    prior: np.ndarray
    visible: np.ndarray
    rounds: int
    confidence: dict


def masked_evidence(completer, b: DeckBuilder, f: int, nb, wide, given: float) -> MainEvidence:
    """Run the masked completer's main-deck round on a copy of ``b`` (``b`` is left as it is)."""
    trial = copy.copy(b)
    trial.main, trial.side = list(b.main), list(b.side)
    trial.main_count, trial.side_count = b.main_count.copy(), b.side_count.copy()
    record: dict = {}
    rounds, conf = completer._fill_board(trial, f, nb, 0, completer.steps, wide, given, record=record)
    if not record:
        empty = np.zeros((0, 1))
        return MainEvidence(trial.main_count, np.zeros(0, np.int64), empty, empty, b.main_count.copy(), rounds, conf)
    return MainEvidence(trial.main_count.copy(), np.asarray(record["cards"], np.int64),
                        np.asarray(record["scores"], np.float64), np.asarray(record["prior"], np.float64),
                        np.asarray(record["visible"], np.int64), rounds, conf)


def _slot_logp(ev: MainEvidence, table: np.ndarray, card: np.ndarray, copy_n: np.ndarray) -> tuple[np.ndarray, ...]:
    """(log-probability clipped to [_FLOOR, 0], whether it was scored) of each (card, copy) slot."""
    out = np.full(card.size, _FLOOR)
    seen = np.zeros(card.size, bool)
    if ev.cards.size == 0:
        return out, seen
    order = np.argsort(ev.cards)
    pos = np.searchsorted(ev.cards[order], card)
    posc = np.minimum(pos, ev.cards.size - 1)
    row = order[posc]
    j = copy_n - ev.visible[card] - 1
    ok = (ev.cards[row] == card) & (j >= 0) & (j < table.shape[1])
    vals = table[row[ok], j[ok]]
    out[ok] = np.clip(np.where(np.isfinite(vals), vals, _FLOOR), _FLOOR, 0.0)
    seen[ok] = np.isfinite(vals)
    return out, seen


def main_slots(index: SlotIndex, b: DeckBuilder, ev: MainEvidence, land: np.ndarray) -> BoardSlots:
    """The main deck's candidate slots of ``b`` (the user's cards: ``b.main_count``) with the slot evidence and the
    masked model's (``MASKED_FEATURES``): every masked-deck slot the neighbours hold, then the best by the base vote,
    ``index.params.slots`` in all, in base-vote order."""
    params = index.params
    wide = SlotIndex.__new__(SlotIndex)
    wide.__dict__.update(index.__dict__)
    wide.params = RankParams(params.neighbours, params.slots * _POOL, params.query_mix)
    known = np.asarray(b.main_count, dtype=np.int64)
    slots = board_slots(wide, b.fmt, 0, known, known, np.asarray(b.side_count, np.int64), b.blocked(), b.limit)
    n = slots.card.size
    if n == 0:
        slots.x = np.zeros((0, MAIN_SLOT_FEATURES), np.float32)
        return slots
    in_deck = ev.counts[slots.card] >= slots.copy
    logp, seen = _slot_logp(ev, ev.scores, slots.card, slots.copy)
    prior, _ = _slot_logp(ev, ev.prior, slots.card, slots.copy)
    order = np.lexsort((slots.card, slots.copy, -logp))
    rank = np.empty(n)
    rank[order] = np.arange(n)
    keep = np.sort(np.lexsort((np.arange(n), ~in_deck))[:params.slots])   # masked-deck slots first, then base order
    lands = float((ev.counts * land).sum()) / 60.0
    extra = np.stack([logp / -_FLOOR, prior / -_FLOOR, ~seen, in_deck, np.minimum(rank / 60.0, 2.0),
                      np.minimum(ev.counts[slots.card], 8) / 4.0, np.full(n, lands)], axis=1)
    x = np.concatenate([slots.x, extra], axis=1).astype(np.float32)[keep]
    return BoardSlots(slots.card[keep], slots.copy[keep], x, slots.ctx, slots.base[keep], slots.rows, slots.weight)


def masked_order(x: np.ndarray) -> np.ndarray:
    """Scores that order slots as the masked model's deck does (its deck first, then its log-probability): today's
    main deck, the reference a main-deck ranker must beat. ``x``: [..., MAIN_SLOT_FEATURES]."""
    return x[..., SLOT_FEATURES + 3] * 100.0 + x[..., SLOT_FEATURES]


class ResidualRanker(SlotRanker):
    """A ``SlotRanker`` whose score is the masked model's slot logit plus the network's correction (its last layer
    starts at zero, so an untrained ranker orders the slots as the masked model does: the network learns where the
    slot evidence says the masked model is wrong). Same tensors as ``SlotRanker``."""

    def __init__(self, config: RankerConfig):
        super().__init__(config)
        nn.init.zeros_(self.out[-1].weight)
        nn.init.zeros_(self.out[-1].bias)

    def forward(self, x: torch.Tensor, ctx: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logp = (x[..., SLOT_FEATURES] * -_FLOOR).clamp(max=-1e-4)
        prior = logp - torch.log(-torch.expm1(logp))          # log p / (1 - p)
        return prior + super().forward(x, ctx, mask)


class MainRanker:
    """The main-deck ranker of a completer: ``model`` over ``index`` (built on the completer's corpus)."""

    def __init__(self, model: SlotRanker | None, index: SlotIndex, land: np.ndarray):
        self.model, self.index, self.land = model, index, np.asarray(land, dtype=np.int64)

    def fill(self, completer, b: DeckBuilder, f: int, nb, wide, given: float) -> tuple[int, dict]:
        """Fill ``b``'s main deck (rounds run, confidence per added card)."""
        ev = masked_evidence(completer, b, f, nb, wide, given)
        slots = main_slots(self.index, b, ev, self.land)
        before = b.main_count.copy()
        conf: dict[int, float] = {}
        if slots.card.size:
            s = score_slots(self.model, slots) if self.model is not None else masked_order(slots.x).astype(float)
            fill_scored(b, 0, slots, s)
            for c, n, sc in zip(slots.card.tolist(), slots.copy.tolist(), slots.score.tolist()):
                if before[c] < n <= b.main_count[c]:
                    conf[c] = min(conf.get(c, 1.0), 1.0 / (1.0 + math.exp(-sc)))
        rounds = 1
        if b.main_left > 0:   # candidates exhausted: the masked model's own round fills the rest
            r, more = completer._fill_board(b, f, nb, 0, completer.steps, wide, given)
            rounds += r
            conf.update({c: p for c, p in more.items() if c not in conf})
        return rounds, conf


# ----------------------------------------------------------------------------------------- training

@dataclass
class MainExamples(FieldArrays):
    X: np.ndarray
    C: np.ndarray
    Y: np.ndarray
    M: np.ndarray
    K: np.ndarray
    hidden: np.ndarray

    FIELDS = ("X", "C", "Y", "M", "K", "hidden")


def main_examples(completer, index: SlotIndex, land: np.ndarray, decks, rows, Ks, popularity: np.ndarray, seed: int,
                  progress=None) -> MainExamples:
    """Main-deck examples of ``decks`` rows ``rows`` (not in the completer's corpus): K known main cards by the
    evaluation's masking rule (K cycles through ``Ks``), the masked completer's evidence, the hidden main cards as
    targets."""
    S = index.params.slots
    E = len(rows)
    ctx_n = None
    X = np.zeros((E, S, MAIN_SLOT_FEATURES), np.float32)
    Y = np.zeros((E, S), np.float32)
    M = np.zeros((E, S), bool)
    Kout = np.zeros(E, np.int64)
    hidden = np.zeros(E)
    C = None
    fit = completer.vote.fitted
    for i, d in enumerate(rows):
        K = int(Ks[i % len(Ks)])
        row, known, f = known_cards(decks, d, K, popularity, seed)
        b = DeckBuilder(fit, f, known, [])
        cards, counts = np.unique(np.asarray(b.main, np.int64), return_counts=True)
        nb, wide = completer.index.neighbour_sets(cards, counts, f, None, completer.params)
        ev = masked_evidence(completer, b, f, nb, wide, min(1.0, len(b.main) / 60.0))
        slots = main_slots(index, b, ev, land)
        if C is None:
            ctx_n = slots.ctx.size
            C = np.zeros((E, ctx_n), np.float32)
        n = slots.card.size
        truth = np.bincount(row, minlength=fit.V)
        X[i, :n], C[i], M[i, :n] = slots.x, slots.ctx, True
        Y[i, :n] = slot_targets(slots, truth)
        Kout[i], hidden[i] = K, row.size - known.size
        if progress:
            progress(i + 1, E)
    return MainExamples(X, C if C is not None else np.zeros((E, 0), np.float32), Y, M, Kout, hidden)


def month_examples_before(train, split: int, months: int, per_month: int, val: int, Ks, completer_before, land,
                          popularity: np.ndarray, seed: int = 0, log=None) -> tuple[MainExamples, MainExamples]:
    """(training, validation) examples: ``per_month`` decks of each of the ``months`` months before the validation
    month (the month before ``split``) and ``val`` decks of the validation month, each completed by
    ``completer_before(first day of its month) -> (masked completer, SlotIndex)`` (a corpus of the decks before it)."""
    from decks.completion.models.deckrank import month_start  # noqa: PLC0415 one face for the month arithmetic

    log = log or (lambda message: None)
    rng = np.random.default_rng(seed)
    val_start = month_start(split - 1, 0)
    parts, val_ex = [], None
    for back in range(months, -1, -1):   # the oldest month first, the validation month last
        start = month_start(val_start, back)
        end = month_start(val_start, back - 1) if back > 0 else split
        rows = np.flatnonzero((train.day >= start) & (train.day < end))
        if rows.size == 0:
            log(f"month starting day {start}: no decks, skipped")
            continue
        pick = np.sort(rng.choice(rows, size=min(val if back == 0 else per_month, rows.size), replace=False))
        completer, index = completer_before(start)
        ex = main_examples(completer, index, land, train, pick, Ks, popularity, seed=seed + back,
                           progress=lambda i, e: (i % 250 == 0) and log(f"  {i}/{e} decks"))
        log(f"{'validation' if back == 0 else 'training'} month starting day {start}: {len(ex)} examples, the "
            f"candidates hold {float((ex.Y.sum(1) / np.maximum(ex.hidden, 1)).mean()):.3f} of the hidden cards")
        if back == 0:
            val_ex = ex
        else:
            parts.append(ex)
    if not parts or val_ex is None:
        raise ValueError("no decks in the months before the split date")
    return MainExamples.stack(parts), val_ex


def main_recall_proxy(scores: np.ndarray, ex: MainExamples) -> np.ndarray:
    """Per example: the share of the hidden main cards among the ``hidden`` best-scored slots (copy order and the
    builder's limits left to the fill)."""
    E, S = ex.M.shape
    s = np.where(ex.M, scores, -np.inf)
    order = np.argsort(-s, axis=1, kind="stable")
    taken = np.arange(S)[None, :] < ex.hidden[:, None]
    return (np.take_along_axis(ex.Y, order, axis=1) * taken).sum(1) / np.maximum(ex.hidden, 1)


def model_scores(model: SlotRanker, ex: MainExamples) -> np.ndarray:
    with torch.no_grad():
        return np.concatenate([model(torch.from_numpy(ex.X[i:i + 256]), torch.from_numpy(ex.C[i:i + 256]),
                                     torch.from_numpy(ex.M[i:i + 256])).double().numpy()
                               for i in range(0, len(ex), 256)])


def fit_main_ranker(tr: MainExamples, val: MainExamples | None, config: RankerConfig, epochs: int = 4,
                    batch: int = 64, lr: float = 3e-4, seed: int = 0, listwise: float = 0.0, residual: bool = True,
                    log=None) -> tuple[SlotRanker, dict]:
    """Train the main-deck ranker on ``tr``, the epoch picked by the proxy recall on ``val``; (model, metrics with
    the validation proxy for the model and for the masked model's order, per K). ``residual`` False: a plain
    ``SlotRanker`` that learns the order from the features alone."""
    started = time.perf_counter()
    valid = (lambda m: float(main_recall_proxy(model_scores(m, val), val).mean())) if val is not None else None
    model = train_ranker(tr.X, tr.C, tr.Y, tr.M, config, epochs=epochs, batch=batch, lr=lr, seed=seed, log=log,
                         valid=valid, model_class=ResidualRanker if residual else SlotRanker,
                         listwise=listwise)
    metrics = {"train_examples": len(tr), "seconds": round(time.perf_counter() - started, 1),
               "parameters": int(sum(p.numel() for p in model.parameters()))}
    if val is not None:
        mine = main_recall_proxy(model_scores(model, val), val)
        base = main_recall_proxy(masked_order(val.X), val)
        metrics["val_recall"] = round(float(mine.mean()), 4)
        metrics["validation"] = {
            "examples": len(val), "main_proxy_model": round(float(mine.mean()), 4),
            "main_proxy_masked": round(float(base.mean()), 4),
            **{f"K={K}": [round(float(mine[val.K == K].mean()), 4), round(float(base[val.K == K].mean()), 4)]
               for K in sorted(set(val.K.tolist()))}}
    return model, metrics


def main_ranker_from(config: dict, tensors: dict) -> SlotRanker:
    """The ranker saved by ``bench.main_rank --save`` (its JSON config and tensors; ValueError when it does not fit
    this code's features)."""
    if int(config.get("slot_features", MAIN_SLOT_FEATURES)) != MAIN_SLOT_FEATURES:
        raise ValueError(f"its slots have {config.get('slot_features')} features, this code makes {MAIN_SLOT_FEATURES}")
    cls = ResidualRanker if config.get("residual", True) else SlotRanker
    model = cls(RankerConfig.from_dict({**(config.get("model") or {}), "slot_features": MAIN_SLOT_FEATURES}))
    try:
        model.load_state_dict({k: v.float() for k, v in tensors.items()})
    except RuntimeError as exc:
        raise ValueError(str(exc).splitlines()[0]) from None
    return model.eval()
