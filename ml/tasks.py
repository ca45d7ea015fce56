"""Celery tasks of the ml app: training and evaluation runs, on the training queue (CELERY_TASK_ROUTES)."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="ml.train", acks_late=True, ignore_result=True)
def train_task(run_id: int) -> str:
    import os

    from ml.training import execute

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return execute(run_id).status


@shared_task(name="ml.evaluate", acks_late=True, ignore_result=True)
def evaluate_task(run_id: int) -> str:
    from ml.training import execute

    return execute(run_id).status


@shared_task(name="ml.loaded_version")
def loaded_version(kind: str, scope: str = "") -> dict:
    """Which version of (kind, scope) this worker serves: loads the active one lazily through the
    per-process cache (a newly activated version replaces it without a restart). A health check for
    inference workers, routed to the inference queue."""
    from ml.registry import load_active

    loaded = load_active(kind, scope)
    return {"version": loaded.version.pk, "number": loaded.version.version, "sha256": loaded.version.weights_sha256,
            "tensors": len(loaded.tensors)}
