"""The deck-level slot ranker (decks.completion.models.deckrank): features, training on a planted signal, filling."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from decks.completion.models import deckrank as dr
from decks.completion.models.baselines import DeckBuilder, FittedCorpus, owned_array
from decks.completion.models.evaluate import check_completion

from . import make_corpus


@pytest.fixture(scope="module")
def setup():
    c = make_corpus(n=400, seed=5)
    train = c.arrays.subset(np.arange(340))
    fitted = FittedCorpus(train, c.V, c.legal, c.copy_limit)
    info = [(float(i % 7), "WUBRG"[i % 5] if i % 4 else "", "Land" if i < 3 else "Instant", "Basic" if i < 3 else "")
            for i in range(c.V)]
    cards = dr.card_feature_table(info)
    index = dr.SlotIndex(fitted, cards, dr.RankParams(neighbours=40, slots=32))
    return c, fitted, index


def _side_example(c, fitted, index, d):
    main, side, f = c.arrays.main[d].astype(np.int64), c.arrays.side[d].astype(np.int64), int(c.arrays.fmt[d])
    b = DeckBuilder(fitted, f, main, [])
    slots = dr.board_slots(index, f, 1, b.main_count, b.side_count, b.main_count, b.blocked(), b.limit)
    return slots, dr.slot_targets(slots, np.bincount(side, minlength=c.V))


def test_card_features_read_the_catalogue():
    t = dr.card_feature_table([(3.0, "WU", "Creature", ""), (0.0, "", "Land", "Basic"), None])
    col = {n: i for i, n in enumerate(dr.CARD_FEATURES)}
    assert t.shape == (3, len(dr.CARD_FEATURES))
    assert t[0, col["creature"]] == 1 and t[0, col["W"]] == 1 and t[0, col["U"]] == 1 and t[0, col["multicolour"]] == 1
    assert t[1, col["basic"]] == 1 and t[1, col["land"]] == 1 and t[1, col["colourless"]] == 1
    assert abs(t[0, col["mana_value"]] - 3 / 8) < 1e-6 and not t[2].any()


def test_slots_are_the_neighbours_open_legal_slots(setup):
    c, fitted, index = setup
    slots, y = _side_example(c, fitted, index, 350)
    assert slots.x.shape == (slots.card.size, dr.SLOT_FEATURES) and np.isfinite(slots.x).all()
    assert slots.ctx.shape == (dr.context_size(fitted.F),)
    assert slots.card.size <= 32 and (np.diff(slots.base) <= 1e-12).all()  # best base vote first
    f = int(c.arrays.fmt[350])
    assert fitted.legal[f][slots.card].all()
    held = fitted.side[slots.rows].toarray()
    for card, n in zip(slots.card, slots.copy):  # every slot is held (at that copy) by some neighbour
        assert (held[:, card] >= n).any()
    assert 0 < y.sum() <= 15


def test_ranker_learns_a_planted_signal(setup):
    """Targets that depend on a card feature the votes do not carry: the attention model finds them."""
    c, fitted, index = setup
    X, C, Y, M = [], [], [], []
    S = index.params.slots
    for d in range(300, 400):
        slots, _ = _side_example(c, fitted, index, d)
        y = (index.cards[slots.card, dr.CARD_FEATURES.index("W")] > 0).astype(np.float32)  # white cards are right
        x = np.zeros((S, dr.SLOT_FEATURES), np.float32)
        x[:slots.card.size] = slots.x
        yy = np.zeros(S, np.float32)
        yy[:slots.card.size] = y
        m = np.zeros(S, bool)
        m[:slots.card.size] = True
        X.append(x), C.append(slots.ctx), Y.append(yy), M.append(m)
    X, C, Y, M = map(np.stack, (X, C, Y, M))
    cfg = dr.RankerConfig(context=C.shape[1], width=32, layers=1, heads=2)
    model = dr.train_ranker(X[:80], C[:80], Y[:80], M[:80], cfg, epochs=30, batch=16, lr=3e-3)
    with torch.no_grad():
        logits = model(torch.from_numpy(X[80:]), torch.from_numpy(C[80:]), torch.from_numpy(M[80:])).numpy()
    m, y = M[80:], Y[80:]
    assert logits[m & (y > 0)].min() > logits[m & (y == 0)].max()
    blind = dr.train_ranker(X[:80], C[:80], Y[:80], M[:80], dr.RankerConfig(
        context=C.shape[1], width=32, layers=1, heads=2, card_features=False), epochs=30, batch=16, lr=3e-3)
    with torch.no_grad():  # without the card features the signal is not there to find
        blind_logits = blind(torch.from_numpy(X[80:]), torch.from_numpy(C[80:]), torch.from_numpy(M[80:])).numpy()
    assert not blind_logits[m & (y > 0)].min() > blind_logits[m & (y == 0)].max()


@pytest.mark.parametrize("layers", [0, 1])
def test_rank_fill_gives_a_legal_deck_keeping_the_given_cards(setup, layers):
    c, fitted, index = setup
    torch.manual_seed(0)
    model = dr.SlotRanker(dr.RankerConfig(context=dr.context_size(fitted.F), width=16, layers=layers, heads=2)).eval()
    for d in range(340, 360):
        main, f = c.arrays.main[d].astype(np.int64), int(c.arrays.fmt[d])
        known_side = c.arrays.side[d][:3].astype(np.int64)
        b = DeckBuilder(fitted, f, main, known_side)
        slots = dr.rank_fill(model, index, b, 1)
        out_main, out_side = b.finish()
        assert not any(check_completion(out_main, out_side, main, known_side, f, c.legal, c.copy_limit).values())
        assert slots.score is None or slots.score.size == slots.card.size
        again = DeckBuilder(fitted, f, main, known_side)
        dr.rank_fill(model, index, again, 1)
        assert np.array_equal(again.finish()[1], out_side)  # deterministic


def test_rank_fill_follows_the_scores_copy_by_copy(setup):
    """The best-scored slots are taken, copy n only after copy n - 1, within the collection."""
    c, fitted, index = setup
    d = 345
    main, f = c.arrays.main[d].astype(np.int64), int(c.arrays.fmt[d])
    b = DeckBuilder(fitted, f, main, [])
    slots = dr.rank_fill(None, index, b, 1)  # no model: the base vote
    side = np.bincount(np.array(b.side, dtype=np.int64), minlength=c.V)
    best = [(int(k), int(n)) for k, n in zip(slots.card, slots.copy)][:5]
    for card, n in best:
        assert side[card] >= n
    have = [(k, 1) for k in range(c.V)]  # one copy of everything (basics any number)
    owned = owned_array(c.V, have, c.basics)
    b2 = DeckBuilder(fitted, f, main, [], owned)
    dr.rank_fill(None, index, b2, 1)
    both = np.bincount(np.array(b2.main + b2.side, dtype=np.int64), minlength=c.V) - np.bincount(main, minlength=c.V)
    assert (both[np.setdiff1d(np.arange(c.V), c.basics)] <= 1).all()


def _two_archetypes(n_a=6, n_b=4, seed=0, best_a=True):
    """Card sets of neighbour decks from two clearly different archetypes (cards 0-29 / 30-59, a shared card 99),
    the best neighbour an A deck (``best_a``) or a B deck; A's decks hold the known cards (0-4)."""
    from scipy import sparse

    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_a + n_b):
        base = 0 if i < n_a else 30
        pick = base + np.concatenate([np.arange(5), rng.choice(np.arange(5, 30), size=15, replace=False)])
        r = np.zeros(100)
        r[pick], r[99] = 4, 4
        rows.append(r)
    first = 0 if best_a else n_a
    order = np.r_[first, rng.permutation(np.delete(np.arange(n_a + n_b), first))]  # the best first, the rest mixed
    return sparse.csr_matrix(np.stack(rows)[order]), order < n_a


@pytest.mark.parametrize("best_a", [True, False])
def test_archetype_groups_split_two_archetypes(best_a):
    sets, is_a = _two_archetypes(best_a=best_a)
    w = np.linspace(1.0, 0.5, is_a.size)
    g = dr.archetype_groups(sets, w, np.arange(5))
    assert np.array_equal(g.near, is_a)  # the group holding the known cards is A, and it is all of A
    weight_near, size_near, size_other, known_near, known_other, medoid_overlap = g.deck
    assert abs(weight_near - w[is_a].sum() / w.sum()) < 1e-9
    assert size_near == is_a.mean() and size_other == 1 - is_a.mean()
    assert known_near == 1.0 and known_other == 0.0 and medoid_overlap < 0.1
    # per slot: a card only A plays gets its vote inside the near group, none in the other
    holds = np.stack([is_a, ~is_a, np.ones_like(is_a)])
    f = dr.group_features(holds, g)
    assert f.shape == (3, len(dr.GROUP_FEATURES))
    assert np.allclose(f[:, :3], [[1, 0, 1], [0, 1, -1], [1, 1, 0]])
    # one archetype (every deck alike): one group, nothing in the other
    same = dr.archetype_groups(sets[np.flatnonzero(is_a)[:1].repeat(4)], np.ones(4), np.arange(5))
    assert same.near.all() and same.deck[2] == 0.0


def test_the_switch_zeroes_the_group_columns():
    torch.manual_seed(0)
    x = torch.rand(2, 5, dr.SLOT_FEATURES)
    ctx, mask = torch.rand(2, 7), torch.ones(2, 5, dtype=torch.bool)
    blind = dr.SlotRanker(dr.RankerConfig(context=7, width=8, layers=1, heads=2, archetype_groups=False)).eval()
    seeing = dr.SlotRanker(dr.RankerConfig(context=7, width=8, layers=1, heads=2)).eval()
    seeing.load_state_dict(blind.state_dict())
    moved = x.clone()
    moved[..., dr.GROUP_COLUMNS] = torch.rand(2, 5, len(dr.GROUP_FEATURES))
    with torch.no_grad():
        assert torch.equal(blind(x, ctx, mask), blind(moved, ctx, mask))      # the groups' columns are not read
        assert not torch.allclose(seeing(x, ctx, mask), seeing(moved, ctx, mask))
        # the other columns still are
        other = x.clone()
        other[..., 0] += 1.0
        assert not torch.allclose(blind(x, ctx, mask), blind(other, ctx, mask))
    # a version trained before the groups reads the first columns only (its layout is a prefix)
    legacy = dr.SlotRanker(dr.RankerConfig(slot_features=dr.LEGACY_SLOT_FEATURES, context=7, width=8, layers=1,
                                           heads=2)).eval()
    with torch.no_grad():
        assert torch.equal(legacy(x, ctx, mask), legacy(x[..., :dr.LEGACY_SLOT_FEATURES], ctx, mask))


@pytest.mark.parametrize("gap", [0, 1, 2])
def test_month_examples_leave_the_corpus_gap_months_older(monkeypatch, gap):
    """A month's examples retrieve only from decks first seen before the month ``gap`` months earlier (the
    validation of a corpus that has aged), and draw only decks of their own month."""
    c = make_corpus(n=600, seed=3)
    seen = {}

    class Recording(dr.TunedVoteBaseline):
        def fit(self, corpus, *args, **kw):
            seen["newest"] = int(corpus.day.max())
            return super().fit(corpus, *args, **kw)
    monkeypatch.setattr(dr, "TunedVoteBaseline", Recording)
    real_side_examples = dr.side_examples

    def recording_side_examples(vote, index, decks, rows, *args, **kw):
        seen["drawn"] = decks.day[rows]
        return real_side_examples(vote, index, decks, rows, *args, **kw)
    monkeypatch.setattr(dr, "side_examples", recording_side_examples)
    start = dr.month_start(19700, 0)
    end = dr.month_start(start + 40, 0)  # the first day of the next month
    info = [(1.0, "W", "Instant", "")] * c.V
    plan = dr.FitPlan(Ks=(10,))
    ex = dr.month_examples(c.arrays, c.V, c.legal, c.copy_limit, None, dr.card_feature_table(info),
                           np.ones(c.V), start, end, 8, np.random.default_rng(0), plan,
                           dr.RankParams(neighbours=40, slots=16), gap=gap)
    in_month = int(((c.arrays.day >= start) & (c.arrays.day < end)).sum())
    assert ex is not None and len(ex) == min(8, in_month)
    assert ((seen["drawn"] >= start) & (seen["drawn"] < end)).all()
    assert seen["newest"] < dr.month_start(start, gap)
    assert seen["newest"] >= dr.month_start(start, gap + 1)  # nothing older was left out
    assert dr.month_examples(c.arrays, c.V, c.legal, c.copy_limit, None, dr.card_feature_table(info), np.ones(c.V),
                             30000, 30031, 8, np.random.default_rng(0), plan, dr.RankParams()) is None


def test_query_mix_weighs_the_users_cards_against_the_generated_ones(setup):
    """The sideboard's retrieval with ``query_mix`` < 1: each deck's overlap is the mix of its overlap with the
    finished main deck and with the user's cards; 1 (and the main deck's retrieval, where the two are the same) is
    the finished deck's overlap alone, as before; board_slots retrieves that way."""
    c, fitted, _ = setup
    info = [(1.0, "W", "Instant", "")] * c.V
    cards = dr.card_feature_table(info)
    a = 10
    f = int(c.arrays.fmt[a])
    rows_f = fitted.rows[f]
    b = int(next(r for r in rows_f if r != a and not np.array_equal(c.arrays.main[r], c.arrays.main[a])))
    mine = c.arrays.main[a][c.arrays.main[a] >= 0][:24]
    known = np.bincount(mine, minlength=c.V)                        # 24 cards of deck a: the user's
    query = known + np.bincount(c.arrays.main[b][c.arrays.main[b] >= 0][:36], minlength=c.V)  # + 36 "generated"
    params = {mix: dr.SlotIndex(fitted, cards, dr.RankParams(neighbours=len(rows_f), slots=16, query_mix=mix))
              for mix in (1.0, 0.25, 0.0)}
    whole, users = params[1.0].overlap(query, f), params[1.0].overlap(known, f)
    same = params[1.0].neighbours(query, f)
    for got, want in zip(params[1.0].neighbours(query, f, known), same):
        assert np.array_equal(got, want)
    for got, want in zip(params[0.25].neighbours(known, f, known), params[1.0].neighbours(known, f)):
        assert np.array_equal(got, want)  # the main deck's retrieval: the query is the user's cards
    pos = {int(r): i for i, r in enumerate(rows_f)}
    rows, sim = params[0.25].neighbours(query, f, known)
    expect = 0.25 * whole + 0.75 * users
    assert np.allclose(sim, expect[[pos[int(r)] for r in rows]])
    assert np.allclose(np.sort(sim)[::-1], np.sort(expect)[::-1])  # the best decks by the mixed overlap, best first
    rows0, sim0 = params[0.0].neighbours(query, f, known)
    assert sim0[0] == pytest.approx(1.0) and a in rows0[np.isclose(sim0, 1.0)]  # deck a holds every user's card
    # board_slots retrieves with the user's cards given as ``known``
    bld = DeckBuilder(fitted, f, mine, [])
    slots = dr.board_slots(params[0.0], f, 1, query, bld.side_count, bld.main_count, bld.blocked(), bld.limit,
                           known=known)
    assert np.array_equal(slots.rows, rows0)


def test_rank_params_read_versions_made_before_the_query_mix():
    assert dr.RankParams.from_dict({"neighbours": "200", "slots": 64}) == dr.RankParams(200, 64, 1.0)
    p = dr.RankParams(150, 32, 0.25)
    assert dr.RankParams.from_dict(p.to_dict()) == p and dr.RankParams.from_dict(None) == dr.RankParams()
