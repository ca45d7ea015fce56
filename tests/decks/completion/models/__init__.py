"""Tests for decks.completion.models (baselines and evaluation), plus the synthetic archetype corpus they share."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from decks.completion.models.deck_arrays import DeckArrays


@dataclass
class Corpus:
    arrays: DeckArrays
    archetype: np.ndarray  # [N] archetype id of each deck
    V: int
    legal: np.ndarray  # bool [F, V]
    copy_limit: np.ndarray  # int [V], 0 = unlimited
    basics: np.ndarray  # card ids with no copy limit


def make_corpus(n: int = 300, seed: int = 0, n_arch: int = 3, pool: int = 15, n_shared: int = 6,
                n_basics: int = 3, arch_weights=None) -> Corpus:
    """Archetype decks in 2 formats.

    Cards: basics (unlimited), shared staples, one pool per archetype, 3 format-1-only cards played by
    archetype 1 decks there, and one card with a copy limit of 1. The last 3 cards of archetype 2's pool
    (and of every third archetype after it) are illegal in format 1. Archetype 0 is the most played.
    """
    rng = np.random.default_rng(seed)
    basics = np.arange(n_basics)
    shared = n_basics + np.arange(n_shared)
    pools = [n_basics + n_shared + a * pool + np.arange(pool) for a in range(n_arch)]
    extra0 = n_basics + n_shared + n_arch * pool
    fmt1_only = extra0 + np.arange(3)
    single = extra0 + 3
    V = single + 1
    F = 2
    legal = np.ones((F, V), dtype=bool)
    legal[0, fmt1_only] = False
    for a in range(2, n_arch, 3):
        legal[1, pools[a][-3:]] = False
    copy_limit = np.full(V, 4, dtype=np.int64)
    copy_limit[basics] = 0
    copy_limit[single] = 1
    if arch_weights is None:
        arch_weights = np.arange(n_arch, 0, -1, dtype=float) ** 1.5
    arch_p = np.asarray(arch_weights, dtype=float) / np.sum(arch_weights)

    mains, sides, fmts, days, weights, archs = [], [], [], [], [], []
    for _ in range(n):
        a = int(rng.choice(n_arch, p=arch_p))
        f = int(rng.integers(F))
        cards = [c for c in pools[a] if legal[f, c]]
        if f == 1 and a % 3 == 1:
            cards += list(fmt1_only)
        counts: dict[int, int] = {}
        for r, c in enumerate(cards):
            core = r < len(cards) // 2
            if rng.random() < (0.92 if core else 0.35):
                counts[int(c)] = 4 if core else int(rng.integers(1, 5))
        for c in rng.choice(shared, size=int(rng.integers(1, 3)), replace=False):
            counts[int(c)] = 4
        if f == 1 and a % 3 == 1 and rng.random() < 0.5:
            counts[int(single)] = 1
        spells = []
        for c in sorted(counts):
            spells += [c] * counts[c]
        spells = spells[:40]
        main = spells + [int(basics[a % n_basics])] * (60 - len(spells))
        used = np.bincount(main, minlength=V)
        side: list[int] = []
        options = [int(c) for c in list(pools[a]) + list(shared) if legal[f, c]]
        for c in rng.permutation(options):
            take = min(int(rng.integers(1, 5)), 4 - used[c], 15 - len(side))
            if take > 0:
                side += [int(c)] * take
                used[c] += take
            if len(side) == 15:
                break
        side += [int(basics[(a + 1) % n_basics])] * (15 - len(side))  # rare: not enough spare spells
        mains.append(main)
        sides.append(side)
        fmts.append(f)
        days.append(int(rng.integers(18000, 20000)))
        weights.append(float(rng.integers(1, 4)))
        archs.append(a)
    arrays = DeckArrays.from_decks(zip(mains, sides, fmts, days, weights))
    return Corpus(arrays, np.array(archs), int(V), legal, copy_limit, basics)


def random_mask(row, k, popularity, rng):
    """A stand-in for the training masking rule: k random slots known."""
    mask = np.zeros(len(row), dtype=bool)
    mask[rng.choice(len(row), size=int(k), replace=False)] = True
    return mask
