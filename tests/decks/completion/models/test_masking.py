import numpy as np
import pytest

from decks.completion.models.masking import (MAIN_RANGES, batch_masks, known_cards, known_from_count,
                                             sample_main_known, sample_side_known)

ROW = np.repeat(np.arange(15), 4)  # 15 cards x 4 copies
POP = np.linspace(0.001, 1.0, 15)


def _hidden_groups(known, row=ROW):
    """(groups fully hidden, groups partly hidden) of one mask."""
    full = partial = 0
    for c in np.unique(row):
        h = (~known[row == c]).sum()
        n = (row == c).sum()
        full += h == n
        partial += 0 < h < n
    return full, partial


def test_known_cards_is_the_rankers_draw():
    """known_cards: the deck's K known main cards drawn as the rankers' examples always drew them (the generator
    seeded by seed, K and the row), and its format."""
    from types import SimpleNamespace

    rng = np.random.default_rng(3)
    decks = SimpleNamespace(main=[rng.permutation(ROW) for _ in range(3)], fmt=np.array([2, 0, 5]))
    for d, K in ((0, 10), (2, 40)):
        row, known, f = known_cards(decks, d, K, POP, seed=7)
        expected = decks.main[d][known_from_count(decks.main[d], K, POP, np.random.default_rng([7, K, d]))]
        assert np.array_equal(row, decks.main[d]) and np.array_equal(known, expected)
        assert known.size == K and f == int(decks.fmt[d]) and isinstance(f, int)


def test_exact_counts_fixed_k():
    rng = np.random.default_rng(0)
    for k in (0, 1, 7, 30, 59, 60):
        m = known_from_count(ROW, k, POP, rng)
        assert m.dtype == bool and m.shape == (60,) and m.sum() == k
    side = np.repeat(np.arange(5), 3)
    for k in range(16):
        assert known_from_count(side, k, POP, rng).sum() == k
    with pytest.raises(ValueError):
        known_from_count(ROW, 61, POP, rng)
    # batch with per-row k, unsorted rows
    rows = np.stack([rng.permutation(ROW) for _ in range(50)])
    ks = rng.integers(0, 61, size=50)
    assert np.array_equal(batch_masks(rows, POP, rng, k=ks).sum(1), ks)


def test_main_known_count_spread_over_ranges():
    rng = np.random.default_rng(1)
    ks = batch_masks(np.tile(ROW, (3000, 1)), POP, rng, "main").sum(1)
    assert ks.min() >= 1 and ks.max() <= 59
    share = [np.mean((ks >= lo) & (ks <= hi)) for lo, hi in MAIN_RANGES]
    assert all(abs(s - 1 / 6) < 0.04 for s in share), share
    one = sample_main_known(ROW, POP, rng)
    assert 1 <= one.sum() <= 59


def test_side_zero_known_about_half_the_time():
    rng = np.random.default_rng(2)
    side = np.repeat(np.arange(5), 3)
    ks = batch_masks(np.tile(side, (4000, 1)), POP, rng, "side").sum(1)
    assert 0.46 < np.mean(ks == 0) < 0.54
    assert ks.max() <= 14 and set(np.unique(ks[ks > 0])) == set(range(1, 15))
    assert 0 <= sample_side_known(side, POP, rng).sum() <= 14


def test_whole_groups_hidden_85_percent():
    rng = np.random.default_rng(3)
    masks = batch_masks(np.tile(ROW, (600, 1)), POP, rng, k=30)
    full = partial = 0
    for m in masks:
        f, p = _hidden_groups(m)
        full += f
        partial += p
    # 85% whole per visited group, plus at most one group per row cut short to hit the count exactly
    assert 0.70 < full / (full + partial) < 0.88
    always = batch_masks(np.tile(ROW, (200, 1)), POP, rng, k=30, p_whole=1.0)
    assert max(_hidden_groups(m)[1] for m in always) <= 1
    never = batch_masks(np.tile(ROW, (200, 1)), POP, rng, k=30, p_whole=0.0)
    assert np.mean([_hidden_groups(m)[1] for m in never]) > 5


def test_rarer_cards_hidden_more_often():
    rng = np.random.default_rng(4)
    masks = batch_masks(np.tile(ROW, (2000, 1)), POP, rng, k=40)
    hidden_rate = np.array([(~masks[:, ROW == c]).mean() for c in range(15)])
    assert hidden_rate[0] > 1.5 * hidden_rate[-1]
    rank = lambda v: np.argsort(np.argsort(v))  # noqa: E731
    assert np.corrcoef(rank(POP), rank(hidden_rate))[0, 1] < -0.9  # Spearman
