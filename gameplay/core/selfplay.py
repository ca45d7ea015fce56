"""Self-play: engine-vs-engine games recorded as training positions for the learned value.

``self_play_rows`` plays one game between two engine AIs and labels each recorded position, from
both seats, with the winner (``gameplay.core.value.features`` describe it). ``pool_init`` /
``pool_rows`` run such games in a process pool, one engine per worker process
(``manage.py train_game_value``). Pure: no Django; imports ``gameplay.core.engine`` and ``value`` only.
"""
from __future__ import annotations

from gameplay.core.engine import PhaseEngine
from gameplay.core.value import features

RECORD_PHASES = ("PreCombatMain", "PostCombatMain")


def self_play_rows(engine, deck_a: list[str], deck_b: list[str], *, seed: int, levels=("Medium", "Medium"),
                   max_decisions: int = 3000) -> list[dict]:
    """Play one game between the engine AIs ``levels`` and return a row per recorded position and
    seat: ``{"x": features, "won": 1/0, "turn", "seat", "phase"}`` (none when the game is drawn or
    cut). From turn 2 on, a position is recorded at the first priority of each turn (where a cut
    rollout is scored) and of each main phase."""
    game = engine.new_game(deck_a, deck_b, seed=seed)
    rows, seen = [], set()
    for _ in range(max_decisions):
        if game.is_over():
            break
        seat = game.seat_to_act()
        if seat is None:
            break
        if game.turn >= 2 and game.prompt().get("type") == "Priority":
            keys = [k for k in ((game.turn, "start"), (game.turn, game.phase))
                    if k not in seen and (k[1] == "start" or k[1] in RECORD_PHASES)]
            if keys:
                seen.update(keys)
                state = game.state()
                evals = {s: game.evaluate(s) for s in (0, 1)}
                for s in (0, 1):
                    rows.append({"x": features(state, s, evals[s]), "seat": s, "turn": game.turn, "phase": game.phase})
        action = game.ai_action(seat, levels[seat]) or game.legal_actions(seat)[0]
        game.apply(seat, action)
    winner = (game.result() or {}).get("winner") if game.is_over() else None
    if winner is None:
        return []
    for row in rows:
        row["won"] = int(row["seat"] == winner)
    return rows


# Process-pool helpers (``manage.py train_game_value --workers N``): one engine per worker process.
_pool_engine = None


def pool_init(card_data_path: str) -> None:
    global _pool_engine
    _pool_engine = PhaseEngine(card_data_path)


def pool_rows(job: dict) -> tuple[int, list[dict], str | None]:
    """One self-play game in a process pool whose initializer is ``pool_init`` (it builds the
    engine); ``job``: index, seed, names, levels, deck0, deck1. An engine failure costs this game only."""
    try:
        rows = self_play_rows(_pool_engine, job["deck0"], job["deck1"], seed=job["seed"],
                              levels=tuple(job["levels"]))
    except Exception as exc:  # noqa: BLE001
        return job["index"], [], f"{type(exc).__name__}: {str(exc)[:200]}"
    for row in rows:
        row.update(game=job["index"], seed=job["seed"], decks=job["names"], levels=job["levels"])
    return job["index"], rows, None
