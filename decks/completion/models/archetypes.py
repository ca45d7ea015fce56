"""One completion per archetype: split the nearest decks into archetype groups (up to 3).

When the given cards fit several archetypes (Legacy '4 Wasteland, 4 Brainstorm, 4 Force of Will' is played in
Delver, Lands, Death and Taxes, Doomsday ...), one vote over all the nearest decks averages them into a deck nobody
plays. :func:`split_neighbours` groups the neighbours by card-set overlap (k-medoids on the Jaccard similarity of
their card sets, k = 3, then 2: seeded with the best neighbour and the neighbours least like the medoids so far, as
``deckrank.archetype_groups`` does for two) and keeps a split only when every group holds at least ``min_share``
of the neighbours' weight under a softer kernel and the groups' medoids share less than ``max_overlap`` of their
cards. Each group's decks then vote alone (:func:`group_neighbours`), so each completion is drawn from its own
archetype. Pure numpy / scipy.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from decks.completion.models.retrieval import Neighbours

__all__ = ["ArchetypeGroup", "split_neighbours", "group_neighbours", "soft_weights", "MAX_GROUPS"]

MAX_GROUPS = 3
MIN_SHARE = 0.15     # a group holds at least 15% of the neighbours' (soft) weight
MAX_OVERLAP = 0.5    # the groups' medoid decks share less than half their cards (Jaccard of the card sets)
SOFTEN = 4.0         # the shares are weighed under a kernel this many times less sharp (the vote's beta / 4)


@dataclass
class ArchetypeGroup:
    """``members``: bool [m] over the neighbours (best first); ``share``: its share of their soft weight;
    ``medoid``: the neighbour most like the others of the group (an index into the neighbours)."""

    members: np.ndarray
    share: float
    medoid: int


def soft_weights(nb: Neighbours, beta: float, soften: float = SOFTEN) -> np.ndarray:
    """The neighbours' weights under a kernel ``soften`` times less sharp (log w - (1 - 1/soften) beta s),
    normalised: the second archetype keeps the weight that the sharp kernel gives the very best match alone."""
    if nb.rows.size == 0:
        return np.zeros(0)
    logw = np.log(np.maximum(nb.weight, 1e-300)) - (1.0 - 1.0 / soften) * beta * nb.sim
    w = np.exp(logw - logw.max())
    return w / w.sum()


def _jaccard(sets) -> np.ndarray:
    b = (sets > 0).astype(np.float64).tocsr()
    inter = (b @ b.T).toarray()
    size = np.diag(inter).copy()
    return inter / np.maximum(size[:, None] + size[None, :] - inter, 1.0)


def _kmedoids(jac: np.ndarray, k: int, iterations: int = 6) -> tuple[np.ndarray, list[int]]:
    """(label [m], medoids) of k-medoids on the similarity ``jac``, seeded with row 0 then farthest points."""
    medoids = [0]
    while len(medoids) < k:
        closest = jac[:, medoids].max(axis=1)
        closest[medoids] = np.inf
        medoids.append(int(np.argmin(closest)))
    label = np.argmax(jac[:, medoids], axis=1)
    for _ in range(iterations):
        new = []
        for g in range(k):
            idx = np.flatnonzero(label == g)
            new.append(int(idx[np.argmax(jac[np.ix_(idx, idx)].sum(1))]) if idx.size else medoids[g])
        nxt = np.argmax(jac[:, new], axis=1)
        nxt[new] = np.arange(k)
        if new == medoids and np.array_equal(nxt, label):
            break
        medoids, label = new, nxt
    return label, medoids


def split_neighbours(sets, weight: np.ndarray, max_groups: int = MAX_GROUPS, min_share: float = MIN_SHARE,
                     max_overlap: float = MAX_OVERLAP) -> list[ArchetypeGroup]:
    """The archetype groups of ``m`` neighbour decks (``sets``: CSR [m, V], a positive entry = the deck plays the
    card; ``weight`` [m]: their soft weights), largest share first: one group when they are one archetype."""
    m = sets.shape[0]
    w = np.asarray(weight, dtype=np.float64)[:m]
    one = [ArchetypeGroup(np.ones(m, bool), 1.0, 0)]
    if m < 2 * 2 or w.sum() <= 0:
        return one
    w = w / w.sum()
    jac = _jaccard(sets)
    for k in range(min(max_groups, m // 2), 1, -1):
        label, medoids = _kmedoids(jac, k)
        shares = np.array([w[label == g].sum() for g in range(k)])
        sizes = np.bincount(label, minlength=k)
        overlap = max(jac[a, b] for i, a in enumerate(medoids) for b in medoids[i + 1:])
        if shares.min() >= min_share and sizes.min() >= 2 and overlap < max_overlap:
            order = np.argsort(-shares, kind="stable")
            return [ArchetypeGroup(label == g, float(shares[g]), medoids[g]) for g in order]
    return one


def group_neighbours(nb: Neighbours, members: np.ndarray) -> Neighbours:
    """The neighbours of one group, their vote weights renormalised inside it (best first, as they were)."""
    m = members.size
    rows, sim, weight = nb.rows[:m][members], nb.sim[:m][members], nb.weight[:m][members]
    total = weight.sum()
    return Neighbours(rows, sim, weight / total if total > 0 else np.full(rows.size, 1.0 / max(rows.size, 1)))
