"""The advisor: the person's decision advised on honest copies, streamed as it deepens, that cannot leak hidden cards.

:func:`run_advice` (the ``gameplay.advise`` task, queued by ``gameplay.tasks.enqueue_advice``) advises a stored
game at a level (``advice_settings``; the default is ``vote``, the engine's VeryHard search asked on honest copies
of what the person can see, the action most chose, ``gameplay.core.search.advisor``), or searches a
*determinized* copy of it (a ``search:`` level: the hidden cards re-dealt at random), and filters its texts by
``hidden_names``; :func:`advise_state` is the API's synchronous advice over a posted engine state. A
newer request, or the person's next action, stops a running search (``session.advice_wanted``). Spreading
a long search over Celery workers is the caller's to offer (``spread_for``: ``gameplay.tasks.advice_spread``).
The learned models in use (``gameplay.models_in_use.search_models``) are built once per request and passed down.
"""
from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from typing import Any, Callable

from django.conf import settings
from django.db import DatabaseError

from gameplay.core.search import advisor
from gameplay.core.learning.value import ValueModelError, position_detail, spread
from gameplay.core.engine.adapter import BadState, EngineError, EnginePanic, determinize
from gameplay.core.search.algorithms import ALGORITHMS
from gameplay.core.search.base import Budget
from gameplay.core.engine.seatview import hidden_names, recommendation_dict
from gameplay.models import PlayedGame
from gameplay.models_in_use import search_models
from gameplay.play import PROTOCOL_VERSION, PlayError
from gameplay.play.session import advice_wanted, get_engine, load_game, send_to_game
from plumbing import live

log = logging.getLogger(__name__)
SpreadFor = Callable[[Any], tuple[int, Any]]  # a search budget -> (workers, spread) for advisor.recommend


class AdviceCancelled(Exception):
    """Raised from the search's progress callback when the advice is no longer wanted."""


@dataclass(frozen=True)
class AdviceSettings:
    """What one piece of advice runs: ``kind`` "vote" (an ensemble level, ``advisor.VOTE_LEVELS``; ``algorithm``,
    ``budget`` and ``config`` are its search's, used only where the vote splits and the level searches) or
    "search" (one ``advisor.recommend``); ``level`` the name the answer carries."""

    kind: str
    level: str
    algorithm: str
    budget: Budget
    config: Any


def advice_settings(level=None, algorithm=None, seconds=None, simulations=None, *,
                    cap: float | None = None) -> AdviceSettings:
    """The settings of one piece of advice.

    ``level`` is one of ``advisor.advice_levels()``: ``vote`` (the default), ``vote+search``, ``search:<name>``
    (the bare names, ``fast``, ``default``..., still work). Without a level, explicit ``seconds`` /
    ``simulations`` or an ``algorithm`` ask for one search at the ``default`` search level's settings (what
    such a request always meant); nothing at all is the default level. Explicit ``seconds`` / ``simulations``
    replace a search's budget, ``algorithm`` its algorithm (a vote level's search, where it runs). Seconds are
    capped at ``cap`` (settings.GAME_ADVICE_MAX_SECONDS by default), also when only simulations are given."""
    cap = float(cap if cap is not None else settings.GAME_ADVICE_MAX_SECONDS)
    for name, value in (("seconds", seconds), ("simulations", simulations)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise PlayError(f"budget {name} must be a positive number")
    explicit = seconds is not None or simulations is not None
    if level is None and (explicit or algorithm is not None):
        kind, search_name, name = "search", "default", "custom" if explicit else "default"
    else:
        try:
            kind, name = advisor.resolve_level(level)
        except ValueError as exc:
            raise PlayError(str(exc)) from None
        search_name = name if kind == "search" else advisor.VOTE_LEVELS[name].search or "default"
        name = level if level is not None else name  # the name as asked (bare search names stay bare)
    spec = advisor.LEVELS[search_name]
    if explicit:
        budget = Budget(seconds=float(seconds) if seconds is not None else None,
                        simulations=int(simulations) if simulations is not None else None)
    else:
        budget = spec.get("budget") or Budget(seconds=1.0)
    algorithm = check_algorithm(algorithm or spec.get("algorithm") or "mcts")
    seconds_ = budget.seconds if budget.seconds is not None else cap
    budget = Budget(seconds=min(float(seconds_), cap), simulations=budget.simulations)
    return AdviceSettings(kind, name, algorithm, budget, spec.get("config"))


def check_algorithm(algorithm) -> str:
    if algorithm not in ALGORITHMS:
        raise PlayError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    return algorithm


def run_advice(game_id, revision: int, *, level: str | None = None, algorithm: str | None = None,
               seconds: float | None = None, simulations: int | None = None, ticket: str | None = None,
               send: Callable[[dict], None] | None = None, min_interval: float = 0.3,
               spread_for: SpreadFor | None = None) -> dict | None:
    """Advise the person's decision at ``revision`` and stream the recommendation as it deepens.

    Every message goes to ``send`` (default: the game's websocket group). A vote level (the default,
    ``advice_settings``) asks the engine's AI on honest copies of what the person can see, streaming the vote
    after each batch of copies; where no copy loads the real game decides, and the answer says so
    (``recommendation.vote.fallback``). A search level searches a determinized copy of the game (hidden cards
    re-dealt). Texts naming a card the person cannot see are redacted. ``spread_for(budget)`` -> (workers,
    spread) may spread a search level over Celery workers (it runs here alone without it). Returns the final
    message (None when the advice was cancelled or is stale)."""
    send = send or (lambda message: send_to_game(game_id, message))
    head = {"v": PROTOCOL_VERSION, "type": "advice", "game": str(game_id), "revision": revision}

    def fail(text, code=409):
        message = {"v": PROTOCOL_VERSION, "type": "error", "context": "advice", "game": str(game_id),
                   "revision": revision, "message": text, "code": code}
        send(message)
        return message

    try:
        chosen = advice_settings(level, algorithm, seconds, simulations)
    except PlayError as exc:
        return fail(str(exc), exc.code)
    budget = chosen.budget
    row = PlayedGame.objects.filter(pk=game_id).first()
    if row is None:
        return fail("no such game", 404)
    if row.revision != revision:  # the game moved on; the page asks again for the new position
        return fail(f"the game has moved on (revision {row.revision})")
    if row.status != "playing":
        return fail("the game is over")
    try:
        engine = get_engine()
        game = load_game(row)
        seat = row.human_seat
        legal = game.legal_actions(seat)
        if not legal:
            return fail("it is not your decision now")
        state = game.state()
        names = hidden_names(state, seat, game.observation(seat))
        rng = random.Random(f"{row.seed}:{revision}")
        try:  # a vote deals its own copies from the real game (and counts the ones the engine cannot load)
            search_game = game if chosen.kind == "vote" else engine.load(determinize(state, seat, rng))
        except BadState:  # the search plays on copies of the state, which phase.rs cannot always read back
            return fail("the advisor cannot search this position: the rules engine cannot copy it (this happens "
                        "for a few turns after some token copies). Your game is not affected; advice comes back "
                        "when the engine can copy the position again.", 503)
    except (EngineError, PlayError) as exc:
        return fail(f"the position cannot be searched: {exc}", 500)
    keys = {a.key for a in legal}
    models = search_models()  # the learned models in use, once for this request
    head.update(level=chosen.level, algorithm=_algorithm_name(chosen),
                budget={"seconds": budget.seconds, "simulations": budget.simulations},
                position_source=_estimate_label(models),
                **(_spread_fields(None) | {"position_estimate": None} if chosen.kind == "vote" else  # on its copies
                   _position_estimate(engine, state, seat, random.Random(f"{row.seed}:{revision}:value"), models)))
    last = [0.0]

    def on_progress(rec):
        if not advice_wanted(game_id, ticket):
            raise AdviceCancelled()
        now = time.monotonic()
        if now - last[0] < min_interval:
            return
        last[0] = now
        shown = _rec_dict(rec, head, keys, names, seat)  # first: it may set the head's estimate
        send({**head, "done": False, "recommendation": shown})

    if not advice_wanted(game_id, ticket):  # a newer request (or an action) came while this one waited
        return None
    send({**head, "done": False, "recommendation": None})
    try:
        rec = _advise(search_game, seat, chosen, rng.randrange(2 ** 31), spread_for, models, on_progress)
    except AdviceCancelled:
        return None
    except EnginePanic as exc:
        return fail(f"the rules engine crashed while searching ({exc}); try again or play on", 500)
    except (EngineError, ValueError) as exc:
        return fail(f"the search failed: {exc}", 500)
    shown = _rec_dict(rec, head, keys, names, seat)
    message = {**head, "done": True, "recommendation": shown}
    send(message)
    try:  # kept for a reload of the page, only while the game is still at this revision
        with live.row_lock(PlayedGame, game_id):
            PlayedGame.objects.filter(pk=game_id, revision=revision).update(advice=message)
    except DatabaseError:
        log.warning("could not store the advice of game %s", game_id, exc_info=True)
    return message


def _algorithm_name(chosen: AdviceSettings) -> str:
    """What the answer's header calls the method: the search's algorithm, ``vote``, or ``vote+<algorithm>``."""
    if chosen.kind == "search":
        return chosen.algorithm
    return f"vote+{chosen.algorithm}" if advisor.VOTE_LEVELS[advisor.resolve_level(chosen.level)[1]].search else "vote"


def _advise(game, seat, chosen: AdviceSettings, seed: int, spread_for: SpreadFor | None, models, on_progress=None):
    """One piece of advice with the learned ``models`` (``SearchModels``): the level's vote (and its search where it
    splits), or the search spread by ``spread_for`` (a search level)."""
    if chosen.kind == "vote":
        return advisor.advise(game, seat, advisor.resolve_level(chosen.level)[1], seed=seed, on_progress=on_progress,
                              algorithm=chosen.algorithm, budget=chosen.budget, config=chosen.config, models=models,
                              position_model=_position_model(models))
    workers, spread = spread_for(chosen.budget) if spread_for is not None else (1, None)
    return advisor.recommend(game, seat, algorithm=chosen.algorithm, budget=chosen.budget, seed=seed,
                             workers=workers, spread=spread, on_progress=on_progress, config=chosen.config,
                             models=models)


def _rec_dict(rec, head: dict, keys, names=None, seat=None) -> dict:
    """The recommendation as the person sees it; a vote's value-model estimate, made on its copies, becomes the
    head's ``position_estimate`` (the other levels' is computed before the search)."""
    vote = (rec.stats or {}).get("vote") or {}
    if vote.get("position_by") == "value model":
        low, high = vote.get("position_low"), vote.get("position_high")
        found = spread([float(low), float(high)]) if low is not None and high is not None else None
        head.update(position_estimate=round(float(vote["position"]), 4),
                    **_spread_fields(found, vote.get("position_copies")))
    return recommendation_dict(rec, keys, names, seat, head.get("position_estimate"))


def _position_model(models):
    """The value model's P(win) of a copy as a person is shown it (calibrated), for a vote to estimate the position
    on its own copies (None: no model)."""
    try:
        model = models.leaf_model()
    except ValueModelError:
        return None
    return model.shown_probability


def _estimate_label(models) -> str | None:
    """What the shown estimate is made of ("engine evaluation, calibrated"; ``ValueModel.shown_label``), None
    without a model: the page names it beside the number."""
    try:
        return models.leaf_model().shown_label
    except ValueModelError:
        return None


def _spread_fields(found: dict | None, copies=None) -> dict:
    """The head's fields beside ``position_estimate``: the copies' lowest and highest estimates, how many, and
    ``position_uncertain`` when they disagree (``value.UNCERTAIN_SPREAD``): the page then says "uncertain"."""
    if not found:
        return {"position_low": None, "position_high": None, "position_copies": None, "position_uncertain": False}
    return {"position_low": round(found["low"], 4), "position_high": round(found["high"], 4),
            "position_copies": copies if copies is not None else found["copies"],
            "position_uncertain": bool(found["uncertain"])}


def _position_estimate(engine, state, seat, rng, models) -> dict:
    """The calibrated value model's P(win) of the position for ``seat`` on re-dealt copies (never the real hidden
    cards), with its spread over the copies: the head's ``position_*`` fields (estimate None without a model)."""
    found = position_detail(engine, state, seat, rng, model=models.leaf_model)
    return {"position_estimate": None if found is None else round(found["estimate"], 4), **_spread_fields(found)}


def advise_state(state, seat, *, level=None, algorithm=None, seconds=None, simulations=None, seed: int = 0,
                 cap: float | None = None, spread_for: SpreadFor | None = None) -> dict:
    """The API's synchronous advice over a posted engine state (the caller has the whole state);
    ``spread_for`` as in :func:`run_advice`."""
    if isinstance(seat, bool) or seat not in (0, 1):
        raise PlayError("seat must be 0 or 1")
    chosen = advice_settings(
        level, algorithm, seconds, simulations,
        cap=cap if cap is not None else float(settings.GAME_API_ADVICE_MAX_SECONDS))
    budget = chosen.budget
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise PlayError("seed must be an integer")
    engine = get_engine()
    try:
        game = engine.load(state)
        legal = game.legal_actions(seat)
    except BadState as exc:
        raise PlayError(str(exc), 400) from None
    except EnginePanic as exc:
        raise PlayError(f"the rules engine crashed on this state: {exc}", 400) from None
    if game.is_over():
        raise PlayError("the game in this state is over", 400)
    if not legal:
        raise PlayError(f"seat {seat} has no decision in this state (seats to act: {game.seats_to_act()})", 400)
    models = search_models()  # the learned models in use, once for this request
    try:
        rec = _advise(game, seat, chosen, seed, spread_for, models)
    except EnginePanic as exc:
        raise PlayError(f"the rules engine crashed while searching: {exc}", 500) from None
    except (EngineError, ValueError) as exc:
        raise PlayError(f"the search failed: {exc}", 500) from None
    head = (_spread_fields(None) | {"position_estimate": None} if chosen.kind == "vote" else
            _position_estimate(engine, game.state(), seat, random.Random(seed), models))
    head["position_source"] = _estimate_label(models)
    out = _rec_dict(rec, head, {a.key for a in legal})
    out.update(**{k: v for k, v in head.items() if k.startswith("position_")}, seat=seat,
               level=chosen.level, budget={"seconds": budget.seconds, "simulations": budget.simulations}, turn=game.turn,
               legal_actions=[{k: v for k, v in a.to_dict().items() if k != "seat"} for a in legal])
    return out
