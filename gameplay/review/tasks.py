"""Celery tasks of the game review, and their queueing (above ``gameplay.review.service``)."""
from __future__ import annotations

from celery import shared_task

from gameplay.review import service
from gameplay.review.models import GameReview
from plumbing.jobs import queue_on_commit
from plumbing.recovery import broker_came_back_empty, sweep_on_workers


@shared_task(name="gameplay.review_game", acks_late=True, reject_on_worker_lost=True, ignore_result=True,
             soft_time_limit=1800)
def review_game(review_id: int) -> dict | None:
    """Replay a finished game and weigh each of the player's decisions with the advisor (idempotent: a copy of
    the task finds the review taken or over; a review whose worker died is run again by the sweep)."""
    return service.run_review(review_id)


@sweep_on_workers
@shared_task(name="gameplay.recover_reviews", ignore_result=True)
def recover_reviews() -> int:
    """Every worker's sweep: the reviews a dead worker left running are queued again (or failed with the reason
    once they have had their runs); after Redis came back empty, the queued reviews' tasks are sent again."""
    again = service.recover_stale_reviews()
    if broker_came_back_empty("gameplay.reviews"):
        again = sorted(set(again) | set(service.queued_reviews()))
    for review_id in again:
        review_game.delay(review_id)
    return len(again)


def enqueue_review(review: GameReview) -> None:
    """Queue the review once it is committed (eager on the embedded stack); with the broker down it is marked
    failed and says so."""
    review_id = review.pk
    queue_on_commit(lambda: review_game.delay(review_id), GameReview.objects.filter(pk=review_id),
                    "The review could not be queued (task broker unavailable: {exc}).", stamp_finished=True)
