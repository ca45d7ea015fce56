"""A training run whose Celery worker is killed with ``kill -9`` mid-run (services stack, a private Redis:
tests/faults.py): a fresh worker's sweep fails it with the reason, instead of leaving it "running" forever
(a run is not started again by itself), and the fresh worker trains the next run."""
from __future__ import annotations

import time

import pytest

from ml.models import ModelVersion, TrainingRun
from ml.tasks import enqueue_training
from tests.faults import kill_worker, record, wait_until, worker

pytestmark = [pytest.mark.faults, pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]
SCOPE = "archetype:TST"


@pytest.fixture
def training_env(drafted_set, model_dir, monkeypatch):
    monkeypatch.setenv("MTG_MODEL_DIR", str(model_dir))  # the worker writes where the test reads
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MTG_TRAINING_REPORT_SECONDS", "0.05")
    return drafted_set


def test_a_training_run_whose_worker_is_killed_fails_with_the_reason(training_env, private_services, served,
                                                                     tmp_path):
    w = worker(tmp_path)
    served(w)
    run = enqueue_training("draft_bot", SCOPE, {"epochs": 100_000}, user="test")  # minutes: killed long before
    wait_until(lambda: TrainingRun.objects.filter(pk=run.pk, status="running", progress__gt=1).exists(), 120,
               "the run training")
    what, killed_at = kill_worker(w), time.monotonic()
    assert TrainingRun.objects.get(pk=run.pk).status == "running"  # what the dead worker left

    served(worker(tmp_path, "worker2"))
    row = wait_until(lambda: TrainingRun.objects.filter(pk=run.pk, status__in=("succeeded", "failed")).first(), 60,
                     "the run failing after the restart")
    record(f"training run: {what} killed mid-run", queued=1, succeeded_after_retry=0,
           failed_with_reason=int(row.status == "failed" and "worker running this run stopped" in row.error),
           stuck=TrainingRun.objects.filter(status="running").count(), recovered_s=round(time.monotonic() - killed_at, 1))
    assert row.status == "failed" and row.finished is not None and row.message == "Failed"
    assert "worker running this run stopped" in row.error and "start it again" in row.error.lower()
    assert row.result_version is None and not ModelVersion.objects.filter(kind="draft_bot").exists()

    # the fresh worker takes the next run to its end
    again = enqueue_training("draft_bot", SCOPE, {"epochs": 20, "seed": 1}, user="test")
    done = wait_until(lambda: TrainingRun.objects.filter(pk=again.pk, status__in=("succeeded", "failed")).first(),
                      120, "the next run")
    assert done.status == "succeeded", done.error
    assert not TrainingRun.objects.filter(status="running").exists()
