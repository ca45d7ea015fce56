"""Honest AI: the engine's own AI deciding on what one seat can see, never on the real game.

phase-python 0.103's AI (``Game.choose_action`` at a difficulty) is a beam / alpha-beta search with rollouts that
reads every zone of the state it is given, the other player's hand and both libraries included, and picks by a
softmax at temperature 0.3 drawn from a generator seeded with the state's ``rng_seed``. Asked on the real game it
peeks. ``honest_ai_action`` asks it on ``honest_copy``: the seat's view with everything else re-dealt
(``determinize``: the other hand and both libraries' order, the seat's own library shuffled) and a fresh engine
seed, then maps the chosen action back to the real game. Its choice is then a function of what the seat sees and
the caller's ``rng`` only.

Where the engine cannot load the copy (it refuses some states it wrote itself, e.g. "copiable trigger origins do
not align"), or the copy's choice names a card the seat cannot see, the decision is taken by one call on the real
game: a fallback that is counted (``HonestStats``, per caller, and ``TOTALS`` for the process), never silent.

Pure: no Django; imports the adapter only.
"""
from __future__ import annotations

import json
import logging
import random
from collections import Counter
from dataclasses import dataclass, field

from gameplay.core.engine.adapter import ENGINE_LEVELS, Action, EngineError, Game, determinize, revealed_ids

log = logging.getLogger(__name__)

# keys of an action's data whose integers are not object ids (a seat, an index, an amount)
_NOT_IDS = frozenset({"player", "Player", "ability_index", "index", "amount", "count", "choice", "mode", "modes",
                      "x", "x_value", "number"})


@dataclass
class HonestStats:
    """How one caller's AI decisions were taken: on an honest copy, or by the counted fallback on the real game
    (``reasons``: each fallback's cause, the engine's error, in at most 80 characters)."""

    copies: int = 0
    fallbacks: int = 0
    reasons: Counter = field(default_factory=Counter)

    def to_dict(self) -> dict:
        return {"honest": self.copies, "fallbacks": self.fallbacks, "reasons": dict(self.reasons)}


TOTALS = HonestStats()  # every honest decision of this process (what a bench or the site reports)


def honest_copy(game_or_state: Game | dict | str, seat: int, rng: random.Random) -> dict:
    """What ``seat`` can see of the game (a ``Game``, its ``state()`` or that state's JSON text), with everything
    else re-dealt from ``rng``: the other hand and both libraries' order, and a fresh engine seed (``rng_seed``
    from ``rng``, ``rng_word_pos`` 0). A new state dict; the game is not changed."""
    state = game_or_state.state() if isinstance(game_or_state, Game) else game_or_state
    return determinize(state, seat, rng)


def hidden_ids(state: dict, seat: int) -> set[int]:
    """The object ids ``seat`` cannot see in ``state`` (``Game.state()``): both libraries and the other hand's
    cards that were not revealed."""
    st = state["state"]
    revealed = revealed_ids(st)
    out = set()
    for p in st["players"]:
        out.update(p.get("library") or [])
        if p["id"] != seat:
            out.update(o for o in p.get("hand") or [] if o not in revealed)
    return out


def named_ids(data) -> set[int]:
    """The object ids an action's ``data`` names (every integer, except under keys that hold seats or counts)."""
    out: set[int] = set()
    if isinstance(data, bool):
        return out
    if isinstance(data, int):
        out.add(data)
    elif isinstance(data, list):
        for item in data:
            out |= named_ids(item)
    elif isinstance(data, dict):
        if data.get("type") == "Player":
            return out  # {"type": "Player", "data": 1}: an attack's or a target's player (a seat), not an object
        for key, value in data.items():
            if key not in _NOT_IDS:
                out |= named_ids(value)
    return out


def to_real_action(game: Game, seat: int, chosen: Action | None, legal: list[Action],
                   hidden: set[int]) -> tuple[Action | None, str]:
    """A copy's choice (``chosen``, an action of the copy) as ``game``'s action, with ``legal`` the real game's
    offered actions and ``hidden`` the ids ``seat`` cannot see: the offered action with the same key, else (the AI
    chooses among more than the listed actions: a four-creature attack) the same action read by the real game
    (``Game.engine_action``). Returns ``(action, "")``, ``(None, "")`` when there is no choice (the AI gave up), or
    ``(None, why)`` when the choice cannot be played on the real game: it names a card the seat cannot see, or the
    real game will not read it. The one mapping the honest AI and the ensemble share."""
    if chosen is None:
        return None, ""
    offered = next((a for a in legal if a.key == chosen.key), None)
    if offered is not None:
        return offered, ""
    if named_ids(chosen.data) & hidden:
        return None, "the copy's choice names a hidden card"
    try:
        return game.engine_action(seat, json.loads(chosen.key)), ""
    except (EngineError, ValueError) as exc:
        return None, str(exc) or type(exc).__name__


def _fallback(game: Game, seat: int, difficulty: str, reason: str, stats: HonestStats | None) -> Action | None:
    for counter in (TOTALS, stats):
        if counter is not None:
            counter.fallbacks += 1
            counter.reasons[reason.removeprefix("the engine cannot load this state: ")[:80]] += 1
    log.warning("honest AI: no honest copy for seat %s (%s); one call on the real game", seat, reason[:200])
    return game.ai_action(seat, difficulty)


def honest_ai_action(game: Game, seat: int, difficulty: str, rng: random.Random,
                     stats: HonestStats | None = None) -> Action | None:
    """The engine's AI choice for ``seat`` at ``difficulty``, taken on ``honest_copy(game, seat, rng)`` and mapped
    back to ``game`` (``to_real_action``). None when the AI gives up. A copy that cannot be loaded or searched, or
    a choice naming a card the seat cannot see or the real game will not read, falls back to one call on the real
    game, counted in ``stats`` and ``TOTALS``."""
    if difficulty not in ENGINE_LEVELS:
        raise ValueError(f"difficulty must be one of {', '.join(ENGINE_LEVELS)}")
    legal = game.legal_actions(seat)
    if len(legal) == 1 and legal[0].kind == "PassPriority":
        return legal[0]  # priority with nothing to do but pass: no choice, no copy (most decisions of a game)
    state = game.state()
    copy_state = honest_copy(state, seat, rng)
    try:
        chosen = game.engine.load(copy_state).ai_action(seat, difficulty)
    except EngineError as exc:
        return _fallback(game, seat, difficulty, str(exc), stats)
    action, why = to_real_action(game, seat, chosen, legal, hidden_ids(copy_state, seat))
    if why:
        return _fallback(game, seat, difficulty, why, stats)
    for counter in (TOTALS, stats):
        if counter is not None:
            counter.copies += 1
    return action
