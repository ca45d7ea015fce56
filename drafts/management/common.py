"""Shared pieces of the draft commands: reading logs, choosing bots, held-out splits."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from decks.core.catalogue import DataError
from decks.management.importing import progress
from drafts.core.cards import DraftError
from drafts.core.logs import DraftLogs, held_out_mask, pod_keys, read_17lands_csv, read_seats, seats_file_for


class DraftErrorsAsCommandErrors:
    """A DataError or DraftError becomes a CommandError: a clear message, no traceback."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(exc_type, (DataError, DraftError)):
            raise CommandError(str(exc)) from exc
        return False


def read_logs(path: str, limit: int | None = None) -> DraftLogs:
    if not Path(path).exists():
        raise CommandError(f"{path}: no such file")
    bar = progress(desc=f"reading {Path(path).name}", unit="pick")
    last = [0]

    def on_chunk(n):
        bar.update(n - last[0])
        last[0] = n

    try:
        return read_17lands_csv(path, limit=limit, on_chunk=on_chunk)
    finally:
        bar.close()


def held_out(logs: DraftLogs, path: str, seats_path: str | None = None):
    """Mask of the held-out pods (1 in 10, by pod; seats file beside the logs when there is one)."""
    seats_file = seats_path or seats_file_for(path)
    seats = read_seats(seats_file) if seats_file else None
    return held_out_mask(pod_keys(logs, seats))
