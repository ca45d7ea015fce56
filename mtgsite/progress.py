"""The progress bar of every management command (tqdm on stderr): ``progress(iterable, total=..., desc=...)``.

Quiet when stderr is not a terminal unless MTG_PROGRESS=1. A training or evaluation function reports through
``ml.progress`` instead; a command hands it ``ml.progress.BarProgress(progress, self.stdout.write)``.
"""
from __future__ import annotations

import os
import sys

from tqdm import tqdm


def progress(iterable=None, **kwargs):
    """A progress bar on stderr (quiet when stderr is not a terminal unless MTG_PROGRESS=1)."""
    kwargs.setdefault("disable", not (sys.stderr.isatty() or os.environ.get("MTG_PROGRESS") == "1"))
    kwargs.setdefault("unit_scale", True)
    kwargs.setdefault("file", sys.stderr)
    kwargs.setdefault("mininterval", 0.5)
    return tqdm(iterable, **kwargs)
