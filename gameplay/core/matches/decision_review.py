"""Game review: a finished game replayed, the player's decisions weighed by the advisor.

:func:`review_game` rebuilds a stored game from its deal and its moves (the engine is deterministic) and,
at each of the player's decisions worth a look, asks the advisor what it would have played: the win
estimate of the position (the learned value model on re-dealt copies), and the value of the move actually
played beside the value of the advisor's choice, both on the estimate's scale (``seatview.on_one_scale``).
A decision whose best value exceeds the played one by ``margin`` or more is a *mistake*
(:func:`mark_mistakes`), shown with the advisor's better line.

Hidden information: the search runs on copies whose hidden cards (the opponent's hand, both libraries) are
re-dealt from what the player could not see at that moment (``engine.determinize``), and every text naming a
card the player could not see is redacted (``seatview``), as the live advisor does. Nothing else of the
opponent's hand is read.

Pure: no Django; imports the engine, the advisor, the players' notion of a decision worth searching, the value
model (with the active one, ``learning.active``) and seatview.
"""
from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass
from typing import Callable, Iterator, Sequence

from gameplay.core.search.advisor import LEVELS, recommend
from gameplay.core.engine.adapter import Action, EngineError, Game, determinize
from gameplay.core.matches.players import worth_searching
from gameplay.core.search.pruning import prune_actions
from gameplay.core.search.base import Budget
from gameplay.core.engine.seatview import hidden_names, humanize, recommendation_dict, redact_names
from gameplay.core.learning import active
from gameplay.core.learning.value import position_estimate


@dataclass
class ReviewSettings:
    """How hard the review looks: the advisor's level (its search settings), the seconds of each search and its
    simulations per candidate move, how many decisions at most are searched, and the value gap that makes a
    mistake."""

    level: str = "flat"  # flat Monte Carlo: every candidate move, the one played included, on the same re-deals
    seconds: float = 6.0
    simulations: int = 2  # per candidate move
    max_decisions: int = 40
    margin: float = 0.1
    determinizations: int = 4  # copies the value model averages for the win estimate

    def to_dict(self) -> dict:
        return asdict(self)


def positions(engine, decks: Sequence[Sequence[str]], moves: Sequence[Sequence], *, seed: int, first_player: int,
              seat: int) -> Iterator[tuple[int, Game, str]]:
    """Replay the game move by move; before each move of ``seat``, yield (move index, the game, the move's
    key). The game is the live replay: read it before asking for the next position."""
    game = engine.new_game(list(decks[0]), list(decks[1]), seed=seed, first_player=first_player)
    for index, (who, key) in enumerate(moves):
        if who == seat:
            yield index, game, key
        offered = {a.key: a for a in game.legal_actions(who)}
        game.apply(who, offered[key] if key in offered else game.engine_action(who, _payload(key)))


def _payload(key: str) -> dict:
    return json.loads(key)


def worth_reviewing(game: Game, seat: int, legal: list[Action]) -> bool:
    """A real choice: more than one distinct action, and either something on the stack to answer or a
    decision the search players search (main-phase plays of the active player, attacks, blocks)."""
    if len(legal) < 2 or len(prune_actions(game, legal)) < 2:
        return False
    return game.stack_size() > 0 or worth_searching(game, seat)


def mark_mistakes(decisions: list[dict], margin: float) -> list[dict]:
    """Mark each decision whose advisor's choice is worth at least ``margin`` more than the move played
    (``loss`` = best value - played value); a decision where the player took the advisor's choice, or where
    either value is unknown, is never a mistake."""
    for d in decisions:
        best, played = d.get("best_value"), d.get("played_value")
        known = best is not None and played is not None
        d["loss"] = round(best - played, 4) if known else None
        d["mistake"] = bool(known and d.get("best_key") != d.get("played_key") and best - played >= margin)
    return decisions


def review_game(engine, decks: Sequence[Sequence[str]], moves: Sequence[Sequence], *, seed: int, first_player: int,
                seat: int, settings: ReviewSettings | None = None,
                on_progress: Callable[[int, int], None] | None = None) -> dict:
    """The review of a finished game for ``seat``: the win estimate at the start of each of its turns, each
    reviewed decision (played vs the advisor's choice, their values, the advisor's line) and the mistakes.

    ``decks``: seat 0's and seat 1's main decks, one name per copy; ``moves``: [seat, action key] in order, as
    the game recorded them. ``on_progress(done, total)`` is called as the decisions are searched. Raises
    EngineError when the game cannot be rebuilt."""
    settings = settings or ReviewSettings()
    level = LEVELS[settings.level]
    rng = random.Random(f"review:{seed}:{seat}")
    total = sum(1 for who, _ in moves if who == seat)
    turns: dict[int, float] = {}
    decisions: list[dict] = []
    skipped = 0
    for done, (index, game, key) in enumerate(positions(engine, decks, moves, seed=seed, first_player=first_player,
                                                        seat=seat), start=1):
        legal = game.legal_actions(seat)
        state = None
        if game.turn not in turns:
            state = game.state()
            estimate = position_estimate(engine, state, seat, rng, model=active.value_model, determinizations=settings.determinizations)
            if estimate is not None:
                turns[game.turn] = round(estimate, 4)
        if worth_reviewing(game, seat, legal):
            if len(decisions) >= settings.max_decisions:
                skipped += 1
            else:
                decision = _review_decision(engine, game, seat, key, legal, state or game.state(), level, settings, rng)
                if decision is not None:
                    decision["move"] = index
                    decisions.append(decision)
        if on_progress is not None:
            on_progress(done, total)
    mark_mistakes(decisions, settings.margin)
    return {"seat": seat, "turns": [{"turn": t, "estimate": e} for t, e in sorted(turns.items())],
            "decisions": decisions, "mistakes": sum(d["mistake"] for d in decisions), "reviewed": len(decisions),
            "not_reviewed": skipped, "settings": settings.to_dict()}


def _review_decision(engine, game: Game, seat: int, key: str, legal: list[Action], state: dict, level: dict,
                     settings: ReviewSettings, rng: random.Random) -> dict | None:
    """One decision: the advisor's search on a re-dealt copy, with the move played kept among its candidates and
    ``settings.simulations`` for each candidate."""
    played = next((a for a in legal if a.key == key), None)
    if played is None:
        return None
    candidates = len(prune_actions(game, legal))
    cap = level["config"].max_candidates
    budget = Budget(seconds=settings.seconds, simulations=settings.simulations * min(candidates, (cap or candidates) + 1))
    names = hidden_names(state, seat, game.observation(seat))
    try:
        copy = engine.load(determinize(state, seat, rng))
        rec = recommend(copy, seat, algorithm=level["algorithm"], budget=budget, seed=rng.randrange(2 ** 31),
                        config=level["config"], include=[played], **active.search_models())
    except EngineError:
        return None  # a position the engine cannot copy back (docs/game-advice.md): not reviewed
    estimate = position_estimate(engine, state, seat, rng, model=active.value_model, determinizations=settings.determinizations)
    shown = recommendation_dict(rec, {a.key for a in legal}, names, seat, estimate)
    values = {a["key"]: a["value"] for a in shown["alternatives"]}
    return {"turn": game.turn, "phase": game.phase, "estimate": shown["win_estimate"],
            "played": humanize(redact_names(played.label, names), seat), "played_key": key,
            "played_value": values.get(key), "best": shown["action"]["label"], "best_key": rec.action.key,
            "best_value": values.get(rec.action.key), "line": shown["line"],
            "alternatives": [{k: a[k] for k in ("label", "visits", "value")} for a in shown["alternatives"]],
            "forced": shown["forced"]}
