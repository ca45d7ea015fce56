"""Jobs that outlive a killed worker: heartbeats on running rows, and the sweeps that find what a dead worker left.

A task runs a job row (a deck completion, a training run, a gauntlet game) under :func:`heartbeat`: a
thread stamps the row's ``heartbeat`` every ``MTG_JOB_HEARTBEAT_SECONDS`` while the job runs. A worker
killed mid-job (``kill -9``, out of memory, its machine gone) stops stamping, so a row still "running"
whose heartbeat is older than ``MTG_JOB_STALE_SECONDS`` (:func:`stale`) was left by a dead worker.

Every kind of job row (deck completions, gauntlet games, game reviews, training runs) is a
:class:`plumbing.jobs.JobRow`, and one function, :func:`recover_stale`, finds what a dead worker left: it queues
a row again while it has runs left, or fails it with one message (:func:`worker_lost`).

Each app registers its sweep task with :func:`sweep_on_workers`; every worker queues the sweeps when it
starts and every ``MTG_JOB_SWEEP_SECONDS`` after, and each sweep runs its stale rows again (up to
``MTG_JOB_MAX_ATTEMPTS`` runs) or fails them with the reason, and queues again the work whose messages a
Redis that came back empty lost (:func:`broker_came_back_empty`). See docs/reliability.md#faults.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from datetime import timedelta
from typing import Callable

from celery import current_app
from celery.signals import worker_ready
from django.conf import settings
from django.db import DatabaseError, connections
from django.db.models import Model, Q, QuerySet
from django.utils import timezone

log = logging.getLogger(__name__)

_sweeps: list = []


def max_attempts() -> int:
    return max(1, int(settings.MTG_JOB_MAX_ATTEMPTS))


def stale_q() -> Q:
    """Running rows whose worker stopped stamping them (or never did, for a row claimed before heartbeats)."""
    cut = timezone.now() - timedelta(seconds=float(settings.MTG_JOB_STALE_SECONDS))
    return Q(status="running") & (Q(heartbeat__lt=cut) | Q(heartbeat__isnull=True, started__lt=cut))


def stale(rows: QuerySet) -> QuerySet:
    return rows.filter(stale_q())


def worker_lost(what: str, runs: int, *, progress: float | None = None, then: str = "") -> str:
    """The one message of a job whose worker stopped: what it was, how far it got (``progress``, percent), how many
    runs it had (said from the second on), and what the person may do (``then``)."""
    at = f" at {progress:.0f}%" if progress is not None else ""
    tried = f"; it was tried {runs} times" if runs > 1 else ""
    return f"The worker running this {what} stopped (killed or lost){at}{tried}.{f' {then}' if then else ''}"


def recover_stale(rows: QuerySet, *, what: str, again: Callable[[Model], dict] | None = None, then: str = "",
                  failed: dict | None = None, fail: Callable[[Model, str], object] | None = None,
                  progress: bool = False) -> tuple[list, list]:
    """The job rows of ``rows`` (in its order) that a dead worker left running (:func:`stale`): each is queued
    again while it has runs left (``again(row)``: the fields that queue it; None: never run again), or fails with
    :func:`worker_lost` (``what``, ``then``; its progress in the message with ``progress``): status ``failed``, the
    error, ``finished`` and the fields ``failed``, or ``fail(row, error)`` where failing is more than an update.
    Conditional updates: a row that a redelivered task claims meanwhile is left to it.

    Returns (the rows queued again, the rows failed), read again from the database."""
    requeued, lost = [], []
    for row in stale(rows):
        mine = stale(type(row).objects.filter(pk=row.pk))
        if again is not None and row.attempts < max_attempts():
            if mine.update(**again(row)):
                requeued.append(row)
            continue
        error = worker_lost(what, row.attempts, progress=row.progress if progress else None, then=then)
        if fail is not None:
            fail(row, error)
            lost.append(row)
        elif mine.update(status="failed", error=error, finished=timezone.now(), **(failed or {})):
            lost.append(row)
    for row in requeued + lost:
        row.refresh_from_db()
    return requeued, lost


@contextlib.contextmanager
def heartbeat(rows: QuerySet):
    """Stamp the running rows of ``rows`` every MTG_JOB_HEARTBEAT_SECONDS from a thread while the block runs.

    Not on the embedded stack: its tasks run eagerly in the process that asked for them, and no worker
    sweeps (nor could a thread write beside SQLite's single writer without waiting on it)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        yield
        return
    interval = float(settings.MTG_JOB_HEARTBEAT_SECONDS)
    stop = threading.Event()

    def beat():
        try:
            while not stop.wait(interval):
                try:
                    rows.filter(status="running").update(heartbeat=timezone.now())
                except DatabaseError:  # the connection was dropped: the next beat opens another
                    log.warning("could not stamp the heartbeat of %s", rows.model.__name__, exc_info=True)
                    connections.close_all()
        finally:
            connections.close_all()  # this thread's own connection

    thread = threading.Thread(target=beat, name=f"heartbeat-{rows.model.__name__}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=interval + 5)


def broker_came_back_empty(sweep: str) -> bool:
    """Whether the broker's Redis lost its data since the sweep ``sweep`` last looked (it restarted without
    persistence, as the Docker set-up runs it): a marker kept there is gone. The messages of work that was
    queued but not taken went with it, so the sweep queues that work again; the tasks run a job once however
    many copies arrive. True the first time too (a copy too many, harmless). False on other brokers."""
    try:
        with current_app.connection_for_write() as conn:
            client = getattr(conn.default_channel, "client", None)
            if client is None:
                return False
            key = f"mtg:sweep-marker:{settings.CELERY_TASK_DEFAULT_QUEUE}:{sweep}"
            return bool(client.set(key, "1", nx=True))
    except Exception:  # noqa: BLE001 - the broker is away (kombu's and redis's errors): the next sweep looks again
        log.warning("could not look for the sweep marker of %s", sweep, exc_info=True)
        return False


# --- sweeps --------------------------------------------------------------------------------------------

def sweep_on_workers(task):
    """Register a Celery task (no arguments) that every worker queues when it starts and every
    MTG_JOB_SWEEP_SECONDS after (decorate the task with it)."""
    _sweeps.append(task)
    return task


def queue_sweeps() -> None:
    """Queue every registered sweep once; a copy that waits longer than one period is dropped."""
    period = float(settings.MTG_JOB_SWEEP_SECONDS)
    for task in _sweeps:
        try:
            task.apply_async(expires=max(period, 1.0))
        except Exception:  # noqa: BLE001 - the broker is away (kombu's and redis's errors): the next period tries again
            log.warning("could not queue the sweep %s", task.name, exc_info=True)


@worker_ready.connect
def _start_sweeping(sender=None, **kwargs):
    """A worker that starts sweeps at once (what a worker killed before it left running), then every period on
    its own timer: in its main process, whose event loop is free while the pool processes run the tasks (no
    thread beside it when the pool forks)."""
    queue_sweeps()
    period = float(settings.MTG_JOB_SWEEP_SECONDS)
    timer = getattr(sender, "timer", None)
    if timer is not None:
        timer.call_repeatedly(period, queue_sweeps)
    else:  # pragma: no cover - every Celery consumer has a timer; a sweep on start is still done above
        log.warning("this worker has no timer: it sweeps only when it starts")
