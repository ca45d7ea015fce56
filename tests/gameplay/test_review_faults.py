"""A game review whose Celery worker is killed with ``kill -9`` mid-review (services stack, a private Redis:
tests/faults.py): a fresh worker's sweep finds the review without a heartbeat and runs it again to the end."""
from __future__ import annotations

import time

import pytest

from gameplay.review import service
from gameplay.review.models import GameReview
from gameplay.review.tasks import enqueue_review
from tests.faults import kill_worker, record, wait_until, worker
from tests.gameplay.play_fixtures import game_env  # noqa: F401
from tests.gameplay.test_review import finished_game

pytestmark = [pytest.mark.faults, pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.timeout(400)]


def test_a_review_whose_worker_is_killed_is_run_again_to_the_end(game_env, private_services, served, settings,  # noqa: F811
                                                                  tmp_path):
    settings.GAME_REVIEW_MAX_DECISIONS, settings.GAME_REVIEW_SIMULATIONS, settings.GAME_REVIEW_SECONDS = 4, 1, 4
    w = worker(tmp_path)
    served(w)
    row, _ = finished_game()
    review, _ = service.start_review(row)
    enqueue_review(review)
    wait_until(lambda: GameReview.objects.filter(pk=review.pk, status="running", progress__gt=0).first(), 180,
               "the review running")
    assert GameReview.objects.get(pk=review.pk).status == "running", "the review ended before the kill"
    what, killed_at = kill_worker(w), time.monotonic()

    served(worker(tmp_path, "worker2"))
    done = wait_until(lambda: GameReview.objects.filter(pk=review.pk, status__in=("done", "failed")).first(), 300,
                      "the review finishing after the restart")
    record(f"game review: {what} killed mid-review", attempts=done.attempts, status=done.status,
           recovered_s=round(time.monotonic() - killed_at, 1))
    assert (done.status, done.attempts, done.progress) == ("done", 2, 1.0), done.error
    assert done.result["reviewed"] >= 1 and done.result["turns"]
