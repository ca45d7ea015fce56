"""Celery tasks of online pods: their pick timers, and their queueing (above drafts.pods.service)."""
from __future__ import annotations

import logging
from datetime import datetime, timezone as dt_timezone

from celery import shared_task
from celery.signals import worker_ready
from kombu.exceptions import OperationalError
from django.conf import settings

from drafts.pods import service

log = logging.getLogger(__name__)


@shared_task(name="drafts.expire_picks", acks_late=True, ignore_result=True)
def expire_picks(draft_id: str) -> bool:
    """At a pick deadline: take the suggested card for every seat whose time ran out (idempotent)."""
    try:
        outcome = service.expire_overdue(draft_id)
    except service.PodError:
        return False
    publish_outcome(outcome)
    return outcome is not None


@shared_task(name="drafts.sweep_timers", ignore_result=True)
def sweep_timers() -> int:
    """Expire every overdue pick of every running pod and queue every pick timer again (a worker runs
    this when it starts). Returns how many pods had overdue picks."""
    n = 0
    for draft_id in service.running_pods():
        outcome = service.expire_overdue(draft_id)
        if outcome is not None:
            n += 1
            publish_outcome(outcome)
    for draft_id, deadline in sorted(set(service.pending_deadlines())):  # one task per pod and deadline
        enqueue_deadline(draft_id, deadline)
    return n


@worker_ready.connect
def _resume_timers(sender=None, **kwargs):
    """A (re)started worker expires what fell due while no worker ran and re-arms every timer."""
    try:
        sweep_timers.delay()
    except OperationalError:  # pragma: no cover - the broker went away again; Celery logs it, the next start sweeps
        pass


def publish_outcome(outcome: service.Outcome | None) -> None:
    """What synchronous code does after a change of a pod: send the outcome to the pod's sockets
    (``service.publish``), then queue the pick timers it started (the sockets' ``publish_outcome`` is
    the async twin)."""
    service.publish_sync(outcome)
    enqueue_timers(outcome)


def timers_to_enqueue(outcome: service.Outcome | None) -> bool:
    """Whether :func:`enqueue_timers` has work: deadlines, and a worker to run them (services stack)."""
    return bool(outcome is not None and outcome.timers and not settings.CELERY_TASK_ALWAYS_EAGER)


def enqueue_timers(outcome: service.Outcome | None) -> None:
    """On the services stack a Celery task wakes at each deadline (sockets also watch their own). One task
    per distinct deadline: :func:`expire_picks` settles every seat of the pod that is due, and the seats
    whose clock a change restarted share its deadline (a pick usually restarts the picker's and the
    waiting neighbour's clocks: one task, not two)."""
    if timers_to_enqueue(outcome):
        for deadline in sorted({deadline for _, deadline in outcome.timers}):
            enqueue_deadline(outcome.draft_id, deadline)


def enqueue_deadline(draft_id, deadline: float) -> None:
    try:
        expire_picks.apply_async(args=[str(draft_id)], eta=datetime.fromtimestamp(deadline + 0.05, tz=dt_timezone.utc))
    except Exception:  # the broker is down: the sockets' own watchdogs and the worker's sweep cover it
        log.exception("could not schedule the pick timer of pod %s", draft_id)
