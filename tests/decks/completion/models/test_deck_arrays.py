import numpy as np
import pytest

from decks.completion.models.deck_arrays import DeckArrays, card_popularity, load_npz, save_npz, split_by_date

from .manamorphosis import V, make_corpus


def test_from_decks_sorts_and_types():
    a = DeckArrays.from_decks([([5] * 30 + [1] * 30, [9] * 15, 2, 100, 3)])
    assert a.main.dtype == np.int32 and a.side.dtype == np.int32 and a.fmt.dtype == np.int16
    assert a.day.dtype == np.int32 and a.weight.dtype == np.float32
    assert list(a.main[0][:2]) == [1, 1] and a.main[0][-1] == 5
    with pytest.raises(ValueError):
        DeckArrays.from_decks([([1] * 59, [2] * 15, 0, 0, 1)])


def test_split_save_load_popularity(tmp_path):
    a = make_corpus(30)
    tr, te = split_by_date(a, 19000 + 20)
    assert len(tr) == 20 and len(te) == 10 and te.day.min() >= 19020 > tr.day.max()
    path = tmp_path / "decks.npz"
    save_npz(path, a)
    b = load_npz(path)
    for f in ("main", "side", "fmt", "day", "weight"):
        assert np.array_equal(getattr(a, f), getattr(b, f)) and getattr(a, f).dtype == getattr(b, f).dtype
    pop = card_popularity(a, V)
    assert pop.shape == (V,)
    assert pop[0] == pytest.approx(10 / 30)  # basic 0 is played by every deck of archetype 0
    assert pop[39] == 0 and np.all(pop <= 1)


def test_ids_are_optional_and_carried(tmp_path):
    a = make_corpus(12)
    assert a.ids is None  # positional construction without ids still works
    b = DeckArrays(a.main, a.side, a.fmt, a.day, a.weight, np.arange(100, 112))
    sub = b.subset(np.array([3, 7]))
    assert sub.ids.dtype == np.int64 and list(sub.ids) == [103, 107]
    tr, te = split_by_date(b, 19000 + 6)
    assert sorted(tr.ids.tolist() + te.ids.tolist()) == list(range(100, 112))
    save_npz(tmp_path / "with.npz", b)
    assert list(load_npz(tmp_path / "with.npz").ids) == list(range(100, 112))
    save_npz(tmp_path / "without.npz", a)
    assert load_npz(tmp_path / "without.npz").ids is None and load_npz(tmp_path / "without.npz").subset([0]).ids is None
    with pytest.raises(ValueError, match="ids"):
        DeckArrays(a.main, a.side, a.fmt, a.day, a.weight, [1, 2])
    rows = [([5] * 60, [9] * 15, 2, 100, 3, 42), ([1] * 60, [9] * 15, 2, 100, 3, 43)]
    assert list(DeckArrays.from_decks(rows).ids) == [42, 43]
    assert DeckArrays.from_decks([r[:5] for r in rows]).ids is None
