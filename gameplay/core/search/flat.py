"""Flat Monte Carlo over the current decision.

Every distinct legal action is tried in turn on the same determinizations (common random numbers:
the actions are compared on the same re-dealt hidden cards), each followed by a rollout; the most
visited, then the best mean, wins (unless the engine's choice keeps its place: ``Search._best_edge``).

Imports the search's base only.
"""
from __future__ import annotations

from gameplay.core.search.base import SIM_ERRORS, Search


class FlatSearch(Search):
    algorithm = "flat"

    def _run(self):
        n = len(self.edges)
        i = 0
        while not self.exhausted():
            k, j = divmod(i, n)
            i += 1
            edge = self.edges[j]
            k %= max(1, self.cfg.determinizations)
            try:
                game = self.load(k)
                self._apply_key(game, edge.action)
                v = self.rollout(game)
            except SIM_ERRORS as exc:
                self._drop(exc)
                self.simulations += 1
                continue
            edge.add(k, v)
            self.simulations += 1
            self._progress()
