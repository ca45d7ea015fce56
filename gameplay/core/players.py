"""Players: anything that chooses an action for a seat. Used by play-vs-AI, the gauntlet and benches.

``make_player("engine:Medium")``, ``make_player("random")`` and ``make_player("search:default")``
(search levels are registered by ``gameplay.core.search``) build them from a short spec string.
"""
from __future__ import annotations

import random
from typing import Callable, Protocol

from gameplay.core.engine import DIFFICULTIES, Action, Game


class Player(Protocol):
    name: str

    def choose(self, game: Game, seat: int) -> Action: ...


class RandomPlayer:
    """Uniformly random legal actions (a floor every other player must beat)."""

    def __init__(self, seed: int = 0):
        self.name = "random"
        self.rng = random.Random(seed)

    def choose(self, game: Game, seat: int) -> Action:
        return self.rng.choice(game.legal_actions(seat))


class EnginePlayer:
    """The rules engine's built-in AI at one difficulty."""

    def __init__(self, difficulty: str = "Medium"):
        if difficulty not in DIFFICULTIES:
            raise ValueError(f"difficulty must be one of {', '.join(DIFFICULTIES)}")
        self.name = f"engine:{difficulty}"
        self.difficulty = difficulty

    def choose(self, game: Game, seat: int) -> Action:
        action = game.ai_action(seat, self.difficulty)
        if action is None:  # the AI gave up on a prompt: take the first legal action
            return game.legal_actions(seat)[0]
        return action


# Extra player kinds (e.g. "search") register a factory here: name -> factory(argument, seed).
FACTORIES: dict[str, Callable[[str, int], Player]] = {
    "random": lambda arg, seed: RandomPlayer(seed),
    "engine": lambda arg, seed: EnginePlayer(arg or "Medium"),
}


def make_player(spec: str, seed: int = 0) -> Player:
    """Build a player from ``kind[:argument]`` (``random``, ``engine:Hard``, ``search:default``)."""
    kind, _, arg = (spec or "").partition(":")
    if kind == "search":
        import gameplay.core.search  # noqa: F401,PLC0415 - registers the "search" factory
    factory = FACTORIES.get(kind)
    if factory is None:
        raise ValueError(f"unknown player {spec!r}; use one of: {', '.join(sorted(FACTORIES))}")
    return factory(arg, seed)


def play_game(game: Game, players: tuple[Player, Player], *, max_decisions: int = 5000,
              on_decision: Callable[[Game, int, Action], None] | None = None) -> dict:
    """Play ``game`` to the end. Returns ``{"winner", "turns", "decisions"}`` (winner None = draw/cut)."""
    decisions = 0
    while not game.is_over() and decisions < max_decisions:
        seat = game.seat_to_act()
        if seat is None:
            break
        action = players[seat].choose(game, seat)
        if on_decision:
            on_decision(game, seat, action)
        game.apply(seat, action)
        decisions += 1
    result = game.result() or {"winner": None}
    return {"winner": result.get("winner"), "turns": game.turn, "decisions": decisions}
