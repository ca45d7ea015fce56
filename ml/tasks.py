"""Celery tasks of the ml app: training and evaluation runs, on the training queue (CELERY_TASK_ROUTES), and the
queueing of them (``enqueue_training``, ``enqueue_evaluation``, ``cancel``) for the pages and the commands."""
from __future__ import annotations

import os

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError

from ml.models import ModelVersion, TrainingRun
from ml.registry import load_active
from ml.training import create_evaluation_run, create_training_run, execute, fail_stale_runs
from plumbing.recovery import broker_came_back_empty, sweep_on_workers


# Not rejected back to the queue when their worker dies (reject_on_worker_lost is off): a run is not started
# again by itself; the sweep below fails it with the reason.
@shared_task(name="ml.train", acks_late=True, ignore_result=True)
def train_task(run_id: int) -> str:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return execute(run_id).status


@shared_task(name="ml.evaluate", acks_late=True, ignore_result=True)
def evaluate_task(run_id: int) -> str:
    return execute(run_id).status


@sweep_on_workers
@shared_task(name="ml.recover_runs", ignore_result=True)
def recover_runs() -> int:
    """Every worker's sweep (``plumbing.recovery``): the runs a dead worker left running fail with the reason;
    after Redis came back empty, the waiting runs' tasks are sent again. Returns how many runs failed."""
    if broker_came_back_empty("ml.runs"):
        for run in TrainingRun.objects.filter(status="queued"):
            (train_task if run.job == "train" else evaluate_task).apply_async(args=[run.pk])
    return len(fail_stale_runs())


@shared_task(name="ml.loaded_version")
def loaded_version(kind: str, scope: str = "") -> dict:
    """Which version of (kind, scope) this worker serves: loads the active one lazily through the
    per-process cache (a newly activated version replaces it without a restart). A health check for
    inference workers, routed to the inference queue."""
    loaded = load_active(kind, scope)
    return {"version": loaded.version.pk, "number": loaded.version.version, "sha256": loaded.version.weights_sha256,
            "tensors": len(loaded.tensors)}


# --- queueing ----------------------------------------------------------------------------------------------

def enqueue_training(kind: str, scope: str = "", parameters: dict | None = None, quick: bool = False,
                     activate: bool = False, user: str = "") -> TrainingRun:
    """Create the run and queue it on the training queue (run now, in-process, in the embedded stack)."""
    return _enqueue(create_training_run(kind, scope, parameters, quick=quick, activate=activate, user=user))


def enqueue_evaluation(version: ModelVersion, parameters: dict | None = None, user: str = "") -> TrainingRun:
    return _enqueue(create_evaluation_run(version, parameters, user=user))


def _enqueue(run: TrainingRun) -> TrainingRun:
    task = train_task if run.job == "train" else evaluate_task

    def send():
        try:
            result = task.apply_async(args=[run.pk])
            TrainingRun.objects.filter(pk=run.pk).exclude(task_id__gt="").update(task_id=result.id or "")
        except OperationalError as exc:
            TrainingRun.objects.filter(pk=run.pk).update(status="failed", finished=timezone.now(),
                                                         error=f"Could not queue the run (broker unavailable: {exc}).")

    transaction.on_commit(send)
    return run


def cancel(run: TrainingRun) -> bool:
    """Mark a queued or running run cancelled; a running one stops at its next progress report."""
    updated = TrainingRun.objects.filter(pk=run.pk, status__in=("queued", "running")).update(
        status="cancelled", finished=timezone.now(), message="Cancelled")
    if updated and run.task_id and not settings.CELERY_TASK_ALWAYS_EAGER:
        train_task.app.control.revoke(run.task_id)
    return bool(updated)
