"""The progress bar of every management command (tqdm on stderr): ``progress(iterable, total=..., desc=...)``.

Quiet when stderr is not a terminal unless MTG_PROGRESS=1. ``ticking(desc, expected=seconds)`` is the bar of
a step that reports nothing while it works (one SQL statement): it advances with the clock. A training or
evaluation function reports through ``ml.progress`` instead; a command hands it
``ml.progress.BarProgress(progress, self.stdout.write)``.
"""
from __future__ import annotations

import os
import sys
import threading
import time

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


class ticking:
    """A bar for one step that reports nothing while it works (a single SQL statement, a numpy sort, a commit):
    it advances with the clock, from a thread, at least every ``every`` seconds, towards ``expected`` seconds
    (an estimate from the work's size, so its ETA is an estimate too); past the estimate it stays short of the
    end until the step is done. ``with ticking("counting", expected=5.0): cursor.execute(...)``, or
    ``t = ticking(...).start()`` ... ``t.close()`` where the step ends in a callback."""

    def __init__(self, desc: str, expected: float, every: float = 2.0, **kwargs):
        self.expected, self.every = max(float(expected), 0.1), every
        kwargs.setdefault("bar_format", "{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining} (estimated)")
        self.bar = progress(total=self.expected, desc=desc, unit="s", unit_scale=False, mininterval=0, **kwargs)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def _tick(self):
        t0 = time.monotonic()
        while not self._done.wait(self.every):
            elapsed = time.monotonic() - t0
            if elapsed >= 0.95 * self.bar.total:  # past the estimate: stretch it, the bar never reads done early
                self.bar.total = elapsed / 0.95
            self.bar.update(elapsed - self.bar.n)

    def start(self) -> "ticking":
        self._thread.start()
        return self

    def close(self, done: bool = True) -> None:
        """Stops the clock (again: nothing); ``done``: the bar ends at 100 %."""
        if self._done.is_set():
            return
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
        if done:  # set, not update(): update may print 100 % and close() prints the final state again
            self.bar.n = self.bar.total
        self.bar.close()

    def __enter__(self):
        self.start()
        return self.bar

    def __exit__(self, *exc):
        self.close(done=exc[0] is None)
        return False
