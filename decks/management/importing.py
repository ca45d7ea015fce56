"""Shared pieces of the import commands: data paths, progress bars, clean errors."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError
from tqdm import tqdm

from decks.core.catalogue import DataError


def data_path(*parts: str) -> Path:
    return Path(settings.MTG_DATA_DIR).joinpath(*parts)


def progress(iterable=None, **kwargs):
    """A progress bar on stderr (quiet when stderr is not a terminal unless MTG_PROGRESS=1)."""
    kwargs.setdefault("disable", not (sys.stderr.isatty() or os.environ.get("MTG_PROGRESS") == "1"))
    kwargs.setdefault("unit_scale", True)
    kwargs.setdefault("file", sys.stderr)
    kwargs.setdefault("mininterval", 0.5)
    return tqdm(iterable, **kwargs)


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
