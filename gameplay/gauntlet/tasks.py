"""Celery tasks of the gauntlet: one task per game, so every worker plays games in parallel; and their
queueing (above ``gameplay.gauntlet.service``)."""
from __future__ import annotations

from celery import group, shared_task

from gameplay.gauntlet import service
from gameplay.gauntlet.models import GauntletRun
from plumbing.jobs import queue_on_commit
from plumbing.recovery import broker_came_back_empty, sweep_on_workers


@shared_task(name="gameplay.gauntlet_game", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def play_gauntlet_game(run_id: int, index: int) -> dict | None:
    """Play game ``index`` of gauntlet ``run_id`` and count it (idempotent: a retried game is counted once, and
    its message goes back to the queue when its worker dies).

    An engine panic or any other failure is recorded as the game's error; the task itself does not
    fail, so the worker and the rest of the run carry on.
    """
    return service.play_game_row(run_id, index)


@sweep_on_workers
@shared_task(name="gameplay.recover_gauntlet_games", ignore_result=True)
def recover_games() -> int:
    """Every worker's sweep (``plumbing.recovery``): the games a dead worker left running are queued again, or
    recorded as errors with the reason once they have had their runs; after Redis came back empty, the pending
    games' tasks are sent again. Returns how many were queued again."""
    again = service.recover_stale_games()
    if broker_came_back_empty("gameplay.gauntlet_games"):
        again = sorted(set(again) | set(service.pending_games()))
    if again:
        group(play_gauntlet_game.s(run_id, index) for run_id, index in again).apply_async()
    return len(again)


def enqueue_games(run: GauntletRun, *, unfinished_only: bool = False) -> None:
    """Queue one Celery task per game once the run is committed (at once outside a transaction; eager in
    the embedded stack). With the broker down the run is marked failed and says so, instead of a 500."""
    run_id = run.pk

    def send():
        indexes = service.game_indexes(run_id, unfinished_only=unfinished_only)
        group(play_gauntlet_game.s(run_id, i) for i in indexes).apply_async()

    queue_on_commit(send, GauntletRun.objects.filter(pk=run_id),
                    "The games could not be queued (task broker unavailable: {exc}).", stamp_finished=True)


def start_run(*args, **kwargs) -> GauntletRun:
    """``service.create_run`` + :func:`enqueue_games`: the admin page."""
    run = service.create_run(*args, **kwargs)
    enqueue_games(run)
    return run


def resume_run(run: GauntletRun) -> bool:
    """Queue again the games of a run that did not finish (a worker died); recorded games stay counted once.
    False when the run is over."""
    if not service.reopen_games(run):
        return False
    enqueue_games(run, unfinished_only=True)
    return True
