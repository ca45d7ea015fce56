"""The main-deck ranker (decks.completion.models.mainrank): its slot evidence, and the main deck it assembles stays a
legal 60 with every given card."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from decks.completion.models import mainrank as mr
from decks.completion.models.baselines import DeckBuilder
from decks.completion.models.evaluate import check_completion
from decks.completion.models.masked.sampler import MaskedCompleter
from decks.completion.models.masked.train import prepare
from decks.completion.models.rank_features import SLOT_FEATURES, RankParams, SlotIndex, card_feature_table, context_size
from decks.completion.models.rank_model import RankerConfig, SlotRanker
from decks.completion.models.retrieval import RetrievalParams

from . import make_corpus

FORMATS = ["alpha", "beta"]


@pytest.fixture(scope="module")
def setup():
    c = make_corpus(n=300, seed=7)
    train = c.arrays.subset(np.arange(260))
    prep = prepare(train, c.V, c.legal, c.copy_limit, params=RetrievalParams(neighbours=12, beta=20.0, tau_days=200.0))
    completer = MaskedCompleter(None, prep.vote, prep.tables, [f"Card {i}" for i in range(c.V)], FORMATS, steps=1)
    info = [(float(i % 5), "WUBRG"[i % 5], "Land" if i < 3 else "Creature", "Basic" if i < 3 else "")
            for i in range(c.V)]
    index = SlotIndex(completer.vote.fitted, card_feature_table(info), RankParams(neighbours=60, slots=48))
    land = np.zeros(c.V, bool)
    land[:3] = True
    return c, completer, index, land


def _known(c, d, k, seed=0):
    row = c.arrays.main[d].astype(np.int64)
    return np.sort(np.random.default_rng([seed, d]).choice(row, size=k, replace=False))


def _evidence(completer, b, f):
    cards, counts = np.unique(np.asarray(b.main, np.int64), return_counts=True)
    nb, wide = completer.index.neighbour_sets(cards, counts, f, None, completer.params)
    return mr.masked_evidence(completer, b, f, nb, wide, len(b.main) / 60.0)


def test_evidence_leaves_the_builder_alone_and_holds_the_masked_deck(setup):
    c, completer, index, land = setup
    d = 270
    known, f = _known(c, d, 12), int(c.arrays.fmt[d])
    b = DeckBuilder(completer.vote.fitted, f, known, [])
    ev = _evidence(completer, b, f)
    assert len(b.main) == 12 and (b.main_count == np.bincount(known, minlength=c.V)).all()  # untouched
    masked_main = completer.complete_idx(known, [], f, generate_side=False)[0]
    assert (ev.counts == np.bincount(masked_main, minlength=c.V)).all()
    slots = mr.main_slots(index, b, ev, land)
    assert slots.x.shape == (slots.card.size, mr.MAIN_SLOT_FEATURES) and np.isfinite(slots.x).all()
    assert slots.card.size <= index.params.slots
    assert (slots.copy > b.main_count[slots.card]).all()   # only copies beyond the given ones are candidates
    in_deck = slots.x[:, SLOT_FEATURES + mr.MASKED_FEATURES.index("in_masked_deck")] > 0
    assert (in_deck == (ev.counts[slots.card] >= slots.copy)).all() and in_deck.sum() > 20
    logp = slots.x[:, SLOT_FEATURES]
    if (~in_deck).any():
        assert logp[in_deck].min() >= logp[~in_deck].max() - 1e-6   # the masked deck is its most probable slots


def test_masked_order_reproduces_todays_main_deck(setup):
    """With the masked model's own order as the scores the ranker's assembly gives the masked completer's deck."""
    c, completer, index, land = setup
    ranked = MaskedCompleter.__new__(MaskedCompleter)
    ranked.__dict__.update(completer.__dict__)
    ranked.main_ranker = mr.MainRanker(None, index, land)
    for d in range(260, 290):
        known, f = _known(c, d, [5, 20, 40][d % 3]), int(c.arrays.fmt[d])
        today = np.sort(completer.complete_idx(known, [], f)[0])
        assert np.sort(ranked.complete_idx(known, [], f)[0]).tolist() == today.tolist()


def test_any_ranker_keeps_every_given_card_and_a_legal_60(setup):
    """An untrained ranker (random scores) must still give 60 + 15, the given cards, copy limits and legality;
    with the copy limits lifted from the builder the check catches the fault."""
    c, completer, index, land = setup
    torch.manual_seed(3)
    model = SlotRanker(RankerConfig(slot_features=mr.MAIN_SLOT_FEATURES, context=context_size(2), width=16, layers=1,
                                    heads=2)).eval()
    ranked = MaskedCompleter.__new__(MaskedCompleter)
    ranked.__dict__.update(completer.__dict__)
    ranked.main_ranker = mr.MainRanker(model, index, land)
    for d in range(260, 300):
        k = [1, 10, 30, 59][d % 4]
        known, f = _known(c, d, k), int(c.arrays.fmt[d])
        side_known = c.arrays.side[d][:2].astype(np.int64)
        main, side = ranked.complete_idx(known, side_known, f)
        broken = check_completion(main, side, known, side_known, f, c.legal, c.copy_limit)
        assert not any(broken.values()), (d, broken)
        assert not Counter(known.tolist()) - Counter(main.tolist())


def test_examples_hold_the_hidden_cards_and_the_masked_order_finds_them(setup):
    c, completer, index, land = setup
    rows = np.arange(200, 260)
    fit = completer.vote.fitted
    ex = mr.main_examples(completer, index, land, c.arrays, rows, (10, 20), np.ones(c.V), seed=0)
    assert ex.X.shape == (60, index.params.slots, mr.MAIN_SLOT_FEATURES) and ex.C.shape[1] == context_size(fit.F)
    assert (ex.hidden == 60 - ex.K).all() and (ex.Y.sum(1) <= ex.hidden).all()
    proxy = mr.main_recall_proxy(mr.masked_order(ex.X), ex)
    shuffled = mr.main_recall_proxy(np.random.default_rng(0).random(ex.Y.shape), ex)
    assert proxy.mean() > shuffled.mean() + 0.05   # the masked order knows the deck


def test_an_untrained_residual_ranker_orders_slots_as_the_masked_model(setup):
    """The residual ranker starts from the masked model's slot logit: before training its order (and so its proxy
    recall) is the masked model's; a plain ranker's is not."""
    c, completer, index, land = setup
    ex = mr.main_examples(completer, index, land, c.arrays, np.arange(230, 260), (10, 30), np.ones(c.V), seed=1)
    cfg = RankerConfig(slot_features=mr.MAIN_SLOT_FEATURES, context=ex.C.shape[1], width=16, layers=1, heads=2)
    torch.manual_seed(0)
    residual = mr.ResidualRanker(cfg).eval()
    s = mr.model_scores(residual, ex)
    masked = mr.masked_order(ex.X)
    logp = ex.X[..., SLOT_FEATURES]
    for e in range(len(ex)):   # the same order as the masked log-probability on every example
        m = ex.M[e]
        order = np.argsort(-logp[e][m], kind="stable")
        assert (np.diff(s[e][m][order]) <= 1e-9).all()   # a more probable slot never scores lower
    assert np.allclose(mr.main_recall_proxy(s, ex), mr.main_recall_proxy(masked, ex))
    plain = SlotRanker(cfg).eval()
    assert not np.allclose(mr.model_scores(plain, ex), s)
