"""Baselines: full legal decks that keep the known cards, deterministic, and sensible on archetype data."""
from __future__ import annotations

import numpy as np
import pytest

from decks.completion.models.baselines import (
    CooccurrenceBaseline, NearestDeckBaseline, PopularityBaseline, TunedVoteBaseline, VoteParams, count_matrix, owned_array)
from decks.completion.models.evaluate import check_completion, evaluate
from decks.completion.models.deck_arrays import card_popularity

from . import make_corpus, random_mask

BASELINES = [PopularityBaseline, CooccurrenceBaseline, NearestDeckBaseline, TunedVoteBaseline]


@pytest.fixture(scope="module")
def corpus():
    c = make_corpus(n=360, seed=3)
    # a card played in training decks that is now banned in format 1: never to be added there
    c.banned = int(c.arrays.main[c.archetype == 0][0][-1 - 20])  # an archetype-0 spell
    assert c.copy_limit[c.banned] == 4
    c.legal_now = c.legal.copy()
    c.legal_now[1, c.banned] = False
    c.train = c.arrays.subset(np.arange(300))
    c.test = c.arrays.subset(np.arange(300, 360))
    return c


@pytest.fixture(scope="module")
def fitted(corpus):
    return {cls.__name__: cls().fit(corpus.train, corpus.V, corpus.legal_now, corpus.copy_limit)
            for cls in BASELINES}


def _known(corpus, row, k, fmt, rng):
    """k known main cards of a deck, keeping only cards legal now (the user's cards stay as given)."""
    row = row[corpus.legal_now[fmt][row]]
    return np.sort(row[rng.choice(len(row), size=min(k, len(row)), replace=False)])


def test_count_matrix_matches_bincount():
    rng = np.random.default_rng(0)
    mat = np.sort(rng.integers(0, 7, size=(20, 12)), axis=1)
    mat[3, :4] = -1  # padding
    m = count_matrix(mat, 9).toarray()
    for r in range(20):
        row = mat[r][mat[r] >= 0]
        assert (m[r] == np.bincount(row, minlength=9)).all()


@pytest.mark.parametrize("cls", BASELINES, ids=lambda c: c.__name__)
def test_full_legal_deck_keeping_known_cards(cls, corpus, fitted):
    b = fitted[cls.__name__]
    rng = np.random.default_rng(1)
    for i in range(12):
        d = corpus.test
        fmt = int(d.fmt[i])
        k = [0, 1, 7, 25, 45, 59][i % 6]
        main_known = _known(corpus, d.main[i], k, fmt, rng)
        side_known = _known(corpus, d.side[i], [0, 3][i % 2], fmt, rng)
        main, side = b.complete(main_known, side_known, fmt, seed=i)
        assert main.shape == (60,) and side.shape == (15,)
        broken = check_completion(main, side, main_known, side_known, fmt, corpus.legal_now, corpus.copy_limit)
        assert not any(broken.values()), (i, broken)


@pytest.mark.parametrize("cls", BASELINES, ids=lambda c: c.__name__)
def test_copy_limit_across_main_and_side_and_single_copy_cards(cls, corpus, fitted):
    b = fitted[cls.__name__]
    # format 1, archetype 1 uses the 1-copy card; give it in the sideboard: it must not appear in the main
    single = int(np.flatnonzero(corpus.copy_limit == 1)[0])
    rows = np.flatnonzero((corpus.train.fmt == 1) & np.any(corpus.train.main == single, axis=1))
    assert rows.size
    main_known = corpus.train.main[rows[0]][corpus.train.main[rows[0]] != single][:20]
    main, side = b.complete(main_known, [single], 1, seed=0)
    assert (main == single).sum() == 0 and (side == single).sum() == 1
    broken = check_completion(main, side, main_known, [single], 1, corpus.legal_now, corpus.copy_limit)
    assert not any(broken.values()), broken
    # 3 copies known in the side: at most 1 more anywhere
    spell = int(corpus.train.main[rows[0]][-21])
    main, side = b.complete([], [spell] * 3, 1, seed=0)
    assert (main == spell).sum() + (side == spell).sum() <= 4


@pytest.mark.parametrize("cls", BASELINES, ids=lambda c: c.__name__)
def test_never_adds_a_banned_card(cls, corpus, fitted):
    b = fitted[cls.__name__]
    rows = np.flatnonzero((corpus.train.fmt == 1) & np.any(corpus.train.main == corpus.banned, axis=1))
    assert rows.size  # the training data does play it
    for r in rows[:5]:
        row = corpus.train.main[r]
        main, side = b.complete(row[row != corpus.banned][:30], [], 1, seed=0)
        assert corpus.banned not in main and corpus.banned not in side
    # still playable in format 0
    row = corpus.train.main[np.flatnonzero((corpus.train.fmt == 0) & np.any(corpus.train.main == corpus.banned,
                                                                           axis=1))[0]]
    main, _ = b.complete(row[row != corpus.banned][:30], [], 0, seed=0)
    assert corpus.banned in main or cls is PopularityBaseline


@pytest.mark.parametrize("cls", BASELINES, ids=lambda c: c.__name__)
def test_deterministic(cls, corpus, fitted):
    b = fitted[cls.__name__]
    known = corpus.test.main[5][::6]
    fmt = int(corpus.test.fmt[5])
    a1 = b.complete(known, [], fmt, seed=7)
    a2 = b.complete(known, [], fmt, seed=7)
    again = cls().fit(corpus.train, corpus.V, corpus.legal_now, corpus.copy_limit).complete(known, [], fmt, seed=7)
    for x, y, z in zip(a1, a2, again):
        assert (x == y).all() and (x == z).all()


@pytest.mark.parametrize("cls", BASELINES, ids=lambda c: c.__name__)
def test_rejects_bad_input(cls, corpus, fitted):
    b = fitted[cls.__name__]
    with pytest.raises(ValueError):
        b.complete(np.zeros(61, dtype=int), [], 0, seed=0)
    with pytest.raises(ValueError):
        b.complete([corpus.V], [], 0, seed=0)
    with pytest.raises(ValueError):
        b.complete([], [], 5, seed=0)
    with pytest.raises(RuntimeError):
        cls().complete([], [], 0, seed=0)


def test_user_cards_kept_even_when_they_break_rules(corpus, fitted):
    banned = corpus.banned
    for b in fitted.values():
        main, side = b.complete([banned] * 5, [], 1, seed=0)  # illegal and over the limit: still kept
        assert (main == banned).sum() == 5 and banned not in side


def test_restricted_cards_get_one_copy(corpus):
    restricted = np.zeros_like(corpus.legal)
    spell = int(np.bincount(corpus.train.main[corpus.train.fmt == 0].ravel(), minlength=corpus.V)[
        corpus.copy_limit == 4].argmax())
    spell = int(np.flatnonzero(corpus.copy_limit == 4)[spell])
    restricted[0, spell] = True
    for cls in BASELINES:
        b = cls().fit(corpus.train, corpus.V, corpus.legal, corpus.copy_limit, restricted=restricted)
        rows = np.flatnonzero((corpus.train.fmt == 0) & np.any(corpus.train.main == spell, axis=1))
        row = corpus.train.main[rows[0]]
        main, side = b.complete(row[row != spell][:30], [], 0, seed=0)
        assert (main == spell).sum() + (side == spell).sum() <= 1, cls.__name__


def test_nearest_deck_recovers_a_repeated_training_deck(corpus, fitted):
    b = fitted["NearestDeckBaseline"]
    rng = np.random.default_rng(5)
    recalls = []
    for r in rng.choice(len(corpus.train), size=20, replace=False):
        row, fmt = corpus.train.main[r], int(corpus.train.fmt[r])
        if not corpus.legal_now[fmt][row].all():
            continue
        mask = random_mask(row, 40, None, rng)  # enough cards to single the deck out
        main, side = b.complete(row[mask], [], fmt, seed=0)
        hidden = np.bincount(row[~mask], minlength=corpus.V)
        generated = np.bincount(main, minlength=corpus.V) - np.bincount(row[mask], minlength=corpus.V)
        recalls.append(np.minimum(hidden, generated).sum() / hidden.sum())
    assert len(recalls) >= 10 and np.mean(recalls) >= 0.97


def test_nearest_deck_ranks_by_overlap_then_weight_then_recency():
    from decks.completion.models.deck_arrays import DeckArrays

    V = 10
    legal, limit = np.ones((1, V), dtype=bool), np.zeros(V, dtype=int)
    decks = [
        ([1] * 30 + [2] * 30, [3] * 15, 0, 100, 1.0),  # overlap 30 with the query
        ([1] * 20 + [4] * 40, [5] * 15, 0, 300, 9.0),  # overlap 20, heavy
        ([1] * 30 + [6] * 30, [7] * 15, 0, 200, 1.0),  # overlap 30, more recent than deck 0
        ([1] * 30 + [8] * 30, [9] * 15, 0, 50, 2.0),   # overlap 30, heavier than both
    ]
    b = NearestDeckBaseline(neighbours=4).fit(DeckArrays.from_decks(decks), V, legal, limit)
    top, overlap = b.nearest([1] * 35, 0)
    assert list(top) == [3, 2, 0, 1] and list(overlap) == [30, 30, 30, 20]
    main, side = b.complete([1] * 35, [], 0, seed=0)
    # 35 known + deck 3's 30 copies of card 8 trimmed to 25; side = deck 3's side
    assert (main == 1).sum() == 35 and (main == 8).sum() == 25 and (side == 9).all()


def test_cooccurrence_beats_popularity_on_archetype_data(corpus, fitted):
    pop = card_popularity(corpus.train, corpus.V)
    scores = {}
    for name in ("PopularityBaseline", "CooccurrenceBaseline"):
        scores[name] = evaluate(fitted[name].complete, corpus.test, pop, K=10, n_decks=40, seed=0,
                                legal=corpus.legal_now, copy_limit=corpus.copy_limit, mask_fn=random_mask)
    assert scores["CooccurrenceBaseline"]["main_recall"] > scores["PopularityBaseline"]["main_recall"] + 0.1
    assert scores["CooccurrenceBaseline"]["side_recall"] > scores["PopularityBaseline"]["side_recall"]


def test_popularity_baseline_is_the_format_staples(corpus, fitted):
    main, _ = fitted["PopularityBaseline"].complete([], [], 0, seed=0)
    t = corpus.train
    share = np.array([np.any(t.main[t.fmt == 0] == c, axis=1).mean() for c in range(corpus.V)])
    top = int(np.argmax(share * (np.bincount(corpus.basics, minlength=corpus.V) == 0)))
    assert top in main
    # no known cards and the same format: the answer does not depend on anything else
    assert (fitted["PopularityBaseline"].complete([], [], 0, seed=99)[0] == main).all()


def test_tuned_vote_scores_slots_by_the_weighted_share_of_the_nearest_decks():
    from decks.completion.models.deck_arrays import DeckArrays

    V = 10
    legal, limit = np.ones((1, V), dtype=bool), np.full(V, 4)
    limit[0] = 0
    decks = [  # (main, side, format, day, weight)
        ([1] * 4 + [2] * 4 + [0] * 52, [3] * 4 + [0] * 11, 0, 100, 1.0),  # holds both known cards
        ([1] * 4 + [2] * 2 + [4] * 4 + [0] * 50, [5] * 4 + [0] * 11, 0, 100, 1.0),  # 2 of card 2
        ([6] * 4 + [7] * 4 + [0] * 52, [8] * 4 + [0] * 11, 0, 100, 1.0),  # unrelated: not a neighbour
    ]
    vote = TunedVoteBaseline(VoteParams(neighbours=2, kernel=0.0, recency_days=0)).fit(
        DeckArrays.from_decks(decks), V, legal, limit)
    rows, w = vote.neighbours([1, 1], 0)
    assert set(rows) == {0, 1} and np.allclose(w, 0.5)
    main, side = vote.complete([1, 1], [], 0)
    counts = np.bincount(main, minlength=V)
    # both neighbours (vote 1): 2 more copies of 1, 2 copies of 2, 50 basics; then, at vote 0.5, lower copy
    # numbers first: copies 1-2 of card 4, copy 3 of cards 2 and 4 (ties: lower card)
    assert counts[1] == 4 and counts[0] == 50 and counts[2] == 3 and counts[4] == 3 and counts[6] == 0
    assert (side == 0).sum() == 11 and (side == 3).sum() == 2 and (side == 5).sum() == 2  # the same neighbours
    ev, _ = vote.slot_evidence([1, 1], [], 0)
    first = {(c, n): v for c, n, v in zip(ev.card.tolist(), ev.copy.tolist(), ev.vote.tolist())}
    assert first[(2, 1)] == 1.0 and first[(2, 3)] == 0.5 and (1, 1) not in first  # copies already there are left out
    assert ev.features().shape == (ev.card.size, len(ev.FEATURES)) and (np.diff(ev.vote) <= 0).all()


@pytest.mark.parametrize("cls", BASELINES)
def test_a_collection_is_a_hard_mask(cls, corpus, fitted):
    """Only owned cards within their counts are added (basic lands in any number); the given cards stay."""
    b = fitted[cls.__name__]
    row = corpus.test.main[0]
    fmt = int(corpus.test.fmt[0])
    known = row[:12]
    full, _ = b.complete(known, [], fmt)
    top = [c for c in np.unique(full) if c not in corpus.basics and c not in known][:3]  # the slots it wanted most
    have = [(c, 2) for c in range(corpus.V) if c not in top and c not in corpus.basics]
    owned = owned_array(corpus.V, have, corpus.basics)
    main, side = b.complete(known, [], fmt, owned=owned)
    added = np.bincount(np.concatenate([main, side]), minlength=corpus.V) - np.bincount(known, minlength=corpus.V)
    assert not set(top) & set(np.flatnonzero(added > 0).tolist())
    limited = owned >= 0
    total = np.bincount(np.concatenate([main, side]), minlength=corpus.V)
    assert (total[limited] <= np.maximum(owned[limited], np.bincount(known, minlength=corpus.V)[limited])).all()
    assert main.size == 60 and side.size == 15 and np.isin(known, main).all()
