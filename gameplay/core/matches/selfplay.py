"""Self-play: engine-vs-engine games recorded as training positions for the learned value.

``self_play_rows`` plays one game between two engine AIs and labels each recorded position, from
both seats, with the winner (``gameplay.core.learning.value.features`` describe it). ``pool_init`` /
``pool_rows`` run such games in a process pool, one engine per worker process
(``manage.py models train game_value``). ``decision_records`` plays one game the same way and keeps every real decision
(more than one distinct action) of the seats played by the imitated AI, for the policy/value network
(``gameplay.core.learning.network``), with the search's root visit counts where a search player (``search:<level>``) played
the seat; ``pool_decisions`` runs it in the same pool. It sits in ``matches`` beside the players it plays (a search
seat is a search player), above the models it trains. Pure: no Django; imports the engine, ``search.pruning``,
``learning.value``, ``learning.network`` and ``matches.players``. Every engine AI decides on an honest copy of
what its seat can see (``gameplay.core.engine.honest``), never on the real game.
"""
from __future__ import annotations

import random

from gameplay.core.engine.adapter import PhaseEngine
from gameplay.core.engine.honest import honest_ai_action
from gameplay.core.learning.network import slim_state
from gameplay.core.learning.value import features, swap_sides
from gameplay.core.matches.players import make_player
from gameplay.core.search.evaluation import SearchModels
from gameplay.core.search.pruning import ObjectLookup, prune_actions, signature

RECORD_PHASES = ("PreCombatMain", "PostCombatMain")


def _turns(game, max_decisions: int):
    """The seat to act at each decision of ``game`` until it ends, stalls or reaches ``max_decisions``."""
    for _ in range(max_decisions):
        seat = None if game.is_over() else game.seat_to_act()
        if seat is None:
            return
        yield seat


def self_play_rows(engine, deck_a: list[str], deck_b: list[str], *, seed: int, levels=("Medium", "Medium"),
                   max_decisions: int = 3000) -> list[dict]:
    """Play one game between the engine AIs ``levels`` and return a row per recorded position and
    seat: ``{"x": features, "won": 1/0, "turn", "seat", "phase"}`` (none when the game is drawn or
    cut). From turn 2 on, a position is recorded at the first priority of each turn (where a cut
    rollout is scored) and of each main phase."""
    game = engine.new_game(deck_a, deck_b, seed=seed)
    rng = random.Random(seed)  # the honest copies the engine's AIs decide on
    rows, seen = [], set()
    for seat in _turns(game, max_decisions):
        if game.turn >= 2 and game.prompt().get("type") == "Priority":
            keys = [k for k in ((game.turn, "start"), (game.turn, game.phase))
                    if k not in seen and (k[1] == "start" or k[1] in RECORD_PHASES)]
            if keys:
                seen.update(keys)
                state = game.state()
                evals = {s: game.evaluate(s) for s in (0, 1)}
                for s in (0, 1):
                    rows.append({"x": features(state, s, evals[s]), "seat": s, "turn": game.turn, "phase": game.phase})
        action = honest_ai_action(game, seat, levels[seat], rng) or game.legal_actions(seat)[0]
        game.apply(seat, action)
    winner = (game.result() or {}).get("winner") if game.is_over() else None
    if winner is None:
        return []
    for row in rows:
        row["won"] = int(row["seat"] == winner)
    return rows


# Process-pool helpers (``manage.py models train game_value``, parameter ``workers``): one engine per worker process.
_pool_engine = None


def pool_init(card_data_path: str) -> None:
    global _pool_engine
    _pool_engine = PhaseEngine(card_data_path)


def _pool_job(play, job: dict, **extra) -> tuple[int, list[dict], str | None]:
    try:
        rows = play(job.get("engine") or _pool_engine, job["deck0"], job["deck1"], seed=job["seed"],
                    levels=tuple(job["levels"]), **extra)
    except Exception as exc:  # noqa: BLE001
        return job["index"], [], f"{type(exc).__name__}: {str(exc)[:200]}"
    for row in rows:
        row.update(game=job["index"], seed=job["seed"], decks=job["names"], levels=job["levels"])
    return job["index"], rows, None


def pool_rows(job: dict) -> tuple[int, list[dict], str | None]:
    """One self-play game in a process pool whose initializer is ``pool_init`` (it builds the
    engine); ``job``: index, seed, names, levels, deck0, deck1. An engine failure costs this game only."""
    return _pool_job(self_play_rows, job)


def decision_records(engine, deck_a: list[str], deck_b: list[str], *, seed: int, levels=("VeryHard", "VeryHard"),
                     imitate: str | None = None, max_decisions: int = 3000,
                     models: SearchModels | None = None) -> list[dict]:
    """Play one game between ``levels`` (engine AIs, or a search player ``search:<level>``: AlphaZero-style
    self-play); return a record per real decision of a seat played by ``imitate`` (None: of both seats):
    ``{"state": slim_state, "seat", "actions": [offered, pruned, as dicts], "choice": index of the action played
    among them (None when the AI chose outside them: a four-creature attack), "visits": the search's root visits
    per offered action (only where a search player searched: the AlphaZero policy target), "value_x": [the 36
    features from the seat's side, from the other's], "turn", "won": 1/0}``. None when the game is drawn or cut.
    ``models``: the learned models the search players search with (None: the shipped ones)."""
    game = engine.new_game(deck_a, deck_b, seed=seed)
    searchers = {s: make_player(level, seed=seed * 2 + s, models=models) for s, level in enumerate(levels)
                 if level.startswith("search")}
    rng = random.Random(seed)  # the honest copies the engine's AIs decide on
    records = []
    for seat in _turns(game, max_decisions):
        legal = game.legal_actions(seat)
        offered = prune_actions(game, legal) if len(legal) > 1 else legal
        if len(offered) == 1 and legal:  # nothing to choose: the AI (a third of a second at VeryHard) is not asked
            game.apply(seat, legal[0])
            continue
        visits = None
        player = searchers.get(seat)
        if player is not None:
            before = player.last
            action = player.choose(game, seat)
            if player.last is not None and player.last is not before:  # this decision was searched
                counts = {a["key"]: a.get("visits") or 0 for a in player.last.alternatives}
                visits = [counts.get(a.key, 0) for a in offered]
                visits = visits if sum(visits) else None
        else:
            action = honest_ai_action(game, seat, levels[seat], rng)
        if imitate in (None, levels[seat]):
            lookup = ObjectLookup(game)
            keys = [signature(a, lookup) for a in offered]
            want = signature(action, lookup) if action is not None else None
            state = game.state()
            mine = features(state, seat, game.evaluate(seat))
            records.append({"state": slim_state(state), "seat": seat, "turn": game.turn,
                            "actions": [a.to_dict() for a in offered],
                            "choice": keys.index(want) if want in keys else None,
                            "value_x": [mine, swap_sides(mine, game.evaluate(1 - seat))],
                            **({"visits": visits} if visits else {})})
        game.apply(seat, action or legal[0])
    winner = (game.result() or {}).get("winner") if game.is_over() else None
    if winner is None:
        return []
    for record in records:
        record["won"] = int(record["seat"] == winner)
    return records


def pool_decisions(job: dict, models: SearchModels | None = None) -> tuple[int, list[dict], str | None]:
    """``decision_records`` of one game in the pool (``pool_init``), or on ``job["engine"]`` (a Celery worker's);
    ``models`` as there (a process of the pool plays with the shipped ones)."""
    return _pool_job(decision_records, job, models=models)
