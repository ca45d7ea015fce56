"""Shared pieces of the draft commands: reading logs, choosing bots, held-out splits."""
from __future__ import annotations

from django.core.management.base import CommandError

from decks.core.catalogue import DataError
from plumbing.progress import progress
from drafts import training
from drafts.core.cards import DraftError
from drafts.core.logs import DraftLogs, held_out_mask, pod_keys, read_seats, seats_file_for
from ml.kinds import TrainingError
from ml.progress import BarProgress


class DraftErrorsAsCommandErrors:
    """A DataError, DraftError or TrainingError becomes a CommandError: a clear message, no traceback."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(exc_type, (DataError, DraftError, TrainingError)):
            raise CommandError(str(exc)) from exc
        return False


def read_logs(path: str, limit: int | None = None) -> DraftLogs:
    """A 17Lands-layout file with a progress bar (inside DraftErrorsAsCommandErrors: a missing file is a CommandError)."""
    return training.read_logs(path, limit, BarProgress(progress))


def held_out(logs: DraftLogs, path: str, seats_path: str | None = None):
    """Mask of the held-out pods (1 in 10, by pod; seats file beside the logs when there is one)."""
    seats_file = seats_path or seats_file_for(path)
    seats = read_seats(seats_file) if seats_file else None
    return held_out_mask(pod_keys(logs, seats))
