"""Shared pieces of the import commands: data paths, clean errors (their progress bars: ``plumbing.progress``)."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError

from decks.core.catalogue import DataError


def data_path(*parts: str) -> Path:
    return Path(settings.MTG_DATA_DIR).joinpath(*parts)


def require(path: Path, what: str) -> Path:
    if not Path(path).exists():
        raise CommandError(f"{what} not found at {path}. Set MTG_DATA_DIR or pass the path explicitly.")
    return Path(path)


class DataErrorAsCommandError:
    """Context manager: a DataError becomes a CommandError (a clear message, no traceback)."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(exc_type, DataError):
            raise CommandError(str(exc)) from exc
        return False
