"""A deck completion whose Celery worker is killed with ``kill -9`` mid-batch (services stack, a private Redis:
tests/faults.py): a fresh worker's sweep finds the job without a heartbeat, queues it again, and it finishes,
once; with no runs left it fails with the reason. Never left "running". And a job waiting in the queue when Redis
comes back empty is queued again."""
from __future__ import annotations

import time

import pytest
import redis
from django.conf import settings

from decks.completion.service import CompletionRequest, create_job
from decks.models import CompletionJob, Deck
from decks.tasks import enqueue_completion
from tests.faults import kill_worker, record, wait_until, worker

pytestmark = [pytest.mark.faults, pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]


@pytest.fixture
def model_env(tiny_models, monkeypatch, settings):
    """The worker reads the models and arrays this test trained."""
    monkeypatch.setenv("MTG_MODEL_DIR", str(settings.MTG_MODEL_DIR))
    monkeypatch.setenv("MTG_DATASET_DIR", str(settings.MTG_DATASET_DIR))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    return tiny_models


def slow_job(seed: int) -> CompletionJob:
    """Manamorphosis with the full 1000-step sampler: seconds of work, long enough to be killed in the middle."""
    job = create_job(CompletionRequest("modern", [("Lightning Bolt", 4), ("Goblin Guide", 4)], [], True, "full", seed,
                                       "manamorphosis"))
    enqueue_completion(job)
    return job


def sampling(job: CompletionJob) -> bool:
    """True once the worker is sampling ``job``; a job that ended before anyone could kill it fails the test at once,
    with its row (a job that never starts says so after the wait's timeout)."""
    row = CompletionJob.objects.get(pk=job.pk)
    if row.status in ("done", "failed"):
        raise AssertionError(f"the job ended before it could be killed: status {row.status}, attempts {row.attempts}, "
                             f"worker {row.worker!r}, error {row.error!r}")
    return row.status == "running" and row.progress > 0


def test_a_completion_survives_its_worker_killed_mid_batch(model_env, private_services, served, tmp_path):
    w = worker(tmp_path)
    served(w)
    job = slow_job(seed=5)
    wait_until(lambda: sampling(job), 120, "the job sampling")
    what, killed_at = kill_worker(w), time.monotonic()
    assert CompletionJob.objects.get(pk=job.pk).status == "running"  # what the dead worker left

    served(worker(tmp_path, "worker2"))
    row = wait_until(lambda: CompletionJob.objects.filter(pk=job.pk, status__in=("done", "failed")).first(), 120,
                     "the job finishing after the restart")
    record(f"completion: {what} killed mid-batch", queued=1, succeeded_after_retry=int(row.status == "done"),
           failed_with_reason=int(row.status == "failed" and bool(row.error)),
           stuck=CompletionJob.objects.filter(status="running").count(), attempts=row.attempts,
           decks_saved=Deck.objects.filter(source="completion").count(),
           recovered_s=round(time.monotonic() - killed_at, 1))
    assert row.status == "done", row.error
    assert row.attempts == 2 and row.progress == 1.0 and sum(c for _, c in row.result["main"]) == 60
    assert Deck.objects.filter(source="completion").count() == 1 and row.deck.main_count == 60  # saved once
    assert not CompletionJob.objects.filter(status="running").exists()


def test_a_completion_out_of_runs_fails_with_the_reason(model_env, private_services, served, tmp_path):
    """Killed on its last run: the sweep fails it and says why, instead of leaving it running."""
    w = worker(tmp_path)
    served(w)
    job = slow_job(seed=6)
    CompletionJob.objects.filter(pk=job.pk).update(attempts=settings.MTG_JOB_MAX_ATTEMPTS - 1)
    wait_until(lambda: sampling(job), 120, "the job sampling")
    what, killed_at = kill_worker(w), time.monotonic()
    served(worker(tmp_path, "worker2"))
    row = wait_until(lambda: CompletionJob.objects.filter(pk=job.pk, status__in=("done", "failed")).first(), 60,
                     "the job failing after the restart")
    record(f"completion: {what} killed on the last run", queued=1, succeeded_after_retry=int(row.status == "done"),
           failed_with_reason=int(row.status == "failed" and "worker" in row.error),
           stuck=CompletionJob.objects.filter(status="running").count(), attempts=row.attempts,
           recovered_s=round(time.monotonic() - killed_at, 1))
    assert row.status == "failed" and row.finished is not None
    assert "worker running this job stopped" in row.error and f"tried {settings.MTG_JOB_MAX_ATTEMPTS} times" in row.error
    assert row.deck is None and not Deck.objects.filter(source="completion").exists()


def test_a_waiting_completion_whose_message_redis_lost_is_queued_again(model_env, private_services, served, tmp_path):
    """Redis restarts empty (no persistence, as in the Docker set-up) while a job waits in the queue: its message
    is gone; a worker's sweep finds the broker's marker gone too and sends the waiting jobs' tasks again."""
    broker = redis.Redis.from_url(f"{private_services.url}/0")
    first = served(worker(tmp_path))
    wait_until(lambda: broker.keys("mtg:sweep-marker:*"), 30, "the first sweep's marker")
    first.stop()
    job = slow_job(seed=7)
    assert broker.llen(settings.CELERY_INFERENCE_QUEUE) == 1  # its message, waiting
    private_services.restart()
    assert not broker.keys("*")  # gone with everything else
    served(worker(tmp_path, "worker2"))
    row = wait_until(lambda: CompletionJob.objects.filter(pk=job.pk, status__in=("done", "failed")).first(), 120,
                     "the job after Redis came back empty")
    record("completion: Redis restarted empty while the job waited", queued=1,
           succeeded_after_retry=int(row.status == "done"), failed_with_reason=0,
           stuck=CompletionJob.objects.filter(status__in=("queued", "running")).count())
    assert row.status == "done" and row.attempts == 1, row.error

