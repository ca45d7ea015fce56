"""One completion per archetype (pure): the nearest decks split into their archetype groups, each voting alone."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from decks.completion.models.archetypes import group_neighbours, soft_weights, split_neighbours
from decks.completion.models.retrieval import Neighbours

SHARED = list(range(3))             # Wasteland, Brainstorm, Force of Will: every deck plays them


def decks(*archetypes, n=8, seed=0):
    """CSR [decks, 100]: per archetype ``n`` decks of the shared cards + 12 of its own 15 cards."""
    rng = np.random.default_rng(seed)
    rows = []
    for a in archetypes:
        own = np.arange(10 + 15 * a, 25 + 15 * a)
        for _ in range(n):
            rows.append(SHARED + sorted(rng.choice(own, 12, replace=False).tolist()))
    data = np.ones(sum(map(len, rows)))
    indptr = np.cumsum([0] + [len(r) for r in rows])
    return sp.csr_matrix((data, np.concatenate(rows), indptr), shape=(len(rows), 100))


def test_three_archetypes_are_three_groups_largest_share_first():
    sets = decks(0, 1, 2)
    weight = np.r_[np.full(8, 3.0), np.full(8, 2.0), np.full(8, 1.0)]
    groups = split_neighbours(sets, weight)
    assert len(groups) == 3
    assert [round(g.share, 3) for g in groups] == [0.5, 0.333, 0.167]
    for g, a in zip(groups, range(3)):
        assert g.members.tolist() == [k // 8 == a for k in range(24)]


def test_one_archetype_is_one_group():
    groups = split_neighbours(decks(0, n=20), np.ones(20))
    assert len(groups) == 1 and groups[0].members.all() and groups[0].share == 1.0


def test_a_small_second_archetype_is_not_split_off():
    weight = np.r_[np.full(16, 1.0), np.full(2, 0.2)]
    sets = sp.vstack([decks(0, n=16), decks(1, n=2, seed=1)])
    assert len(split_neighbours(sets, weight)) == 1  # 2.4% of the weight: noise, not an archetype


def test_group_neighbours_vote_alone_and_soft_weights_keep_the_second_group():
    nb = Neighbours(np.arange(10, 20), np.linspace(0.9, 0.5, 10), np.r_[0.9, np.full(9, 0.1 / 9)])
    members = np.arange(10) % 2 == 1
    g = group_neighbours(nb, members)
    assert g.rows.tolist() == [11, 13, 15, 17, 19] and abs(g.weight.sum() - 1) < 1e-12
    soft = soft_weights(nb, beta=40.0)
    assert abs(soft.sum() - 1) < 1e-12 and soft[1:].sum() > nb.weight[1:].sum()
