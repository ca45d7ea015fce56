"""Celery tasks of the drafts app: pick timers of online pods."""
from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready


@shared_task(name="drafts.expire_picks", acks_late=True, ignore_result=True)
def expire_picks(draft_id: str) -> bool:
    """At a pick deadline: take the suggested card for every seat whose time ran out (idempotent)."""
    from drafts import online

    try:
        outcome = online.expire_overdue(draft_id)
    except online.PodError:
        return False
    online.publish_sync(outcome)
    return outcome is not None


@shared_task(name="drafts.sweep_timers", ignore_result=True)
def sweep_timers() -> int:
    from drafts import online

    return online.sweep_overdue()


@worker_ready.connect
def _resume_timers(sender=None, **kwargs):
    """A (re)started worker expires what fell due while no worker ran and re-arms every timer."""
    try:
        sweep_timers.delay()
    except Exception:  # pragma: no cover - broker trouble is logged by Celery itself
        pass
