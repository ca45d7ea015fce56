"""Baseline bots for benchmarks: uniform random and rating-only (no colour discipline)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from drafts.bots.base import PickContext, Ranking, rank


class RandomBot:
    """Uniformly random picks from a seeded generator (the floor every bot must clear)."""

    name = "random"

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def pick(self, pack: Sequence[str], pool: Sequence[str], context: PickContext) -> Ranking:
        return rank(list(pack), self.rng.random(len(pack)).tolist())

    def score_logs(self, logs, set_list=None) -> np.ndarray:
        return self.rng.random(logs.pack.shape)


class RatingBot:
    """Takes the highest-rated card every time, ignoring its own colours."""

    name = "rating"

    def __init__(self, ratings: dict[str, float], default: float = 0.0):
        self.ratings = ratings
        self.default = default

    def pick(self, pack: Sequence[str], pool: Sequence[str], context: PickContext) -> Ranking:
        return rank(list(pack), [self.ratings.get(n, self.default) for n in pack])

    def score_logs(self, logs, set_list=None) -> np.ndarray:
        row = np.array([self.ratings.get(n, self.default) for n in logs.cards], dtype=np.float32)
        return np.broadcast_to(row, logs.pack.shape)
