"""Job rows and their queueing: the one abstract row every kind of job is (:class:`JobRow`), and queueing Celery
work from a request: after the commit, and a job row that says so when the broker is down.

A job row is a deck completion, a gauntlet game, a game review or a training run: each has a status, the runs
it was started (``attempts``), the heartbeat its worker stamps while it runs it, its error, and when it started
and finished (``plumbing.recovery`` heartbeats them and recovers what a dead worker left).

Each app's ``tasks.py`` owns the queueing of its work (its ``enqueue_*`` functions, built on
:func:`queue_on_commit`); a service never imports its tasks module.
"""
from __future__ import annotations

from typing import Callable

from django.db import models, transaction
from django.db.models import QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError


class JobRow(models.Model):
    """The fields every job row has. ``status`` is one of the kind's own (each model gives its choices: the
    recovery reads ``running``, writes ``failed``, and queues again with the fields the kind gives)."""

    status = models.CharField(max_length=10, db_index=True)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="runs started (a worker that died leaves it "
                                                                      "running; the sweep runs it again or fails it)")
    heartbeat = models.DateTimeField(null=True, blank=True, help_text="stamped while a worker runs it")
    error = models.TextField(blank=True, default="")
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


def queue_on_commit(send: Callable[[], object], job: QuerySet, error: str, *, stamp_finished: bool = False) -> None:
    """Call ``send()`` (which queues the Celery work) once the current transaction commits, at once outside
    one (the tasks then run there and then on the embedded stack, where Celery is eager).

    When the broker is down the job's row(s) ``job`` are marked failed instead of a 500: ``error`` is the
    message, with the broker's own in place of ``{exc}``; ``stamp_finished`` also sets ``finished``."""

    def enqueue():
        try:
            send()
        except OperationalError as exc:  # broker down: the job says so
            fields = {"status": "failed", "error": error.format(exc=exc)}
            if stamp_finished:
                fields["finished"] = timezone.now()
            job.update(**fields)

    transaction.on_commit(enqueue)
