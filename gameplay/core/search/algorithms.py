"""The search algorithms by name: ``ALGORITHMS`` (name -> ``Search`` subclass) and ``make_search``.

Imports engine, the search's base and its three algorithms only.
"""
from __future__ import annotations

from gameplay.core.engine.adapter import Game
from gameplay.core.search.base import Search
from gameplay.core.search.flat import FlatSearch
from gameplay.core.search.mcts import MCTSSearch
from gameplay.core.search.minimax import MinimaxSearch

ALGORITHMS: dict[str, type[Search]] = {"flat": FlatSearch, "mcts": MCTSSearch, "minimax": MinimaxSearch}


def make_search(game: Game, seat: int, *, algorithm: str = "mcts", **kwargs) -> Search:
    """One decision's search by ``algorithm`` (``Search``'s keyword arguments: budget, seed, config, ...)."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}")
    return ALGORITHMS[algorithm](game, seat, **kwargs)
