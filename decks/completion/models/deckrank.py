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

Three modules: ``rank_features`` (the card features, the retrieval index, the archetype groups, a board's slots),
``rank_model`` (the network, its training on examples, the fill) and this one, which builds the examples from the
corpus, fits the ranker over the months and is the face the rest of the site imports (every name above).
"""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from decks.completion.models.baselines import DeckBuilder, TunedVoteBaseline, VoteParams
from decks.completion.models.deck_arrays import split_by_date
from decks.completion.models.masking import known_cards
from decks.completion.models.example_arrays import FieldArrays
from decks.completion.models.rank_features import (CARD_FEATURES, GROUP_COLUMNS, GROUP_FEATURES,
                                                   LEGACY_SLOT_FEATURES, SLOT_FEATURES, BoardSlots, Groups, RankParams,
                                                   SlotIndex, archetype_groups, board_slots, card_feature_table,
                                                   context_size, group_features, slot_targets)
from decks.completion.models.rank_model import RankerConfig, SlotRanker, rank_fill, train_ranker

__all__ = ["CARD_FEATURES", "card_feature_table", "RankParams", "SlotIndex", "BoardSlots", "SlotRanker",
           "RankerConfig", "train_ranker", "archetype_groups", "group_features", "Groups", "rank_fill",
           "slot_targets", "ranker_from", "fit_side_ranker", "FitPlan", "month_start", "month_examples",
           "Examples", "side_examples", "board_examples", "topk_recall", "example_scores", "recall_of", "context_size",
           "SLOT_FEATURES", "GROUP_FEATURES", "GROUP_COLUMNS"]

# ----------------------------------------------------------------------------------------- training examples

@dataclass
class Examples(FieldArrays):
    """Padded training / validation examples of one board: X [E, S, D], C [E, CTX], Y [E, S], M [E, S] (real
    slots), and per example the true board's copies found among the candidates (``covered``) and K."""

    X: np.ndarray
    C: np.ndarray
    Y: np.ndarray
    M: np.ndarray
    covered: np.ndarray
    K: np.ndarray

    FIELDS = ("X", "C", "Y", "M", "covered", "K")


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
        row, known, f = known_cards(decks, d, K, popularity, seed)
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
