"""Celery tasks of the gauntlet: one task per game, so every worker plays games in parallel."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="gameplay.gauntlet_game", acks_late=True, ignore_result=True)
def play_gauntlet_game(run_id: int, index: int) -> dict | None:
    """Play game ``index`` of gauntlet ``run_id`` and count it (idempotent: a retried game is counted once).

    An engine panic or any other failure is recorded as the game's error; the task itself does not
    fail, so the worker and the rest of the run carry on.
    """
    from gameplay.gauntlet import play_game_row

    return play_game_row(run_id, index)


__all__ = ["play_gauntlet_game"]
