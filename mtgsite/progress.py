"""The progress bar of every management command (tqdm on stderr): ``progress(iterable, total=..., desc=...)``.

Quiet when stderr is not a terminal unless MTG_PROGRESS=1. A training or evaluation function reports through
``ml.progress`` instead; a command hands it ``ml.progress.BarProgress(progress, self.stdout.write)``.
"""
from __future__ import annotations

import os
import sys

from pathlib import Path

from tqdm import tqdm
from tqdm.utils import CallbackIOWrapper


def progress(iterable=None, **kwargs):
    """A progress bar on stderr (quiet when stderr is not a terminal unless MTG_PROGRESS=1)."""
    kwargs.setdefault("disable", not (sys.stderr.isatty() or os.environ.get("MTG_PROGRESS") == "1"))
    kwargs.setdefault("unit_scale", True)
    kwargs.setdefault("file", sys.stderr)
    kwargs.setdefault("mininterval", 0.5)
    return tqdm(iterable, **kwargs)


def reading_bar(path: Path, desc: str):
    """``wrap`` for :func:`decks.core.catalogue.open_text`: a bar over the file's own bytes as they are read
    (its size is known, so the bar has an ETA, compressed or not)."""
    def wrap(raw):
        bar = progress(total=Path(path).stat().st_size, desc=desc, unit="B", unit_divisor=1024)
        return _ClosingBar(CallbackIOWrapper(bar.update, raw, "read"), bar)
    return wrap


class _ClosingBar:
    """A file object that closes its progress bar with it."""

    def __init__(self, raw, bar):
        self._raw, self._bar = raw, bar

    def __getattr__(self, name):
        return getattr(self._raw, name)

    def close(self):
        self._bar.close()
        self._raw.close()
