"""Queueing Celery work from a request: after the commit, and a job row that says so when the broker is down.

Each app's ``tasks.py`` owns the queueing of its work (its ``enqueue_*`` functions, built on
:func:`queue_on_commit`); a service never imports its tasks module.
"""
from __future__ import annotations

from typing import Callable

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError


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
