"""How training and evaluation functions report what they are doing (pure: no Django).

A function of a model kind gets a ``progress`` and calls ``progress.expect(phases)`` once (how many bars it will
show), ``progress.bar(...)`` for each phase (a tqdm-like bar: ``update``, ``n``/``total`` + ``refresh``,
``set_postfix``, ``set_description``, ``close``, iteration, ``with``), ``progress.log(line)`` for what a command
prints, and ``progress.metric(name, value)`` for the figure a training run shows beside its progress.

``Progress`` itself reports nowhere; a management command passes a ``BarProgress`` (tqdm bars, lines on its
stdout); a training run passes its ``ml.training.Reporter`` (the run's row).
"""
from __future__ import annotations

from tqdm import tqdm


class Progress:
    """Reports nowhere (scripts, tests)."""

    def expect(self, phases: int) -> None:
        """The work shows this many bars, one after the other."""

    def bar(self, iterable=None, total=None, desc="", **kwargs):
        return tqdm(iterable, total=total, desc=desc, disable=True)

    def log(self, line: str) -> None:
        """A line of what is going on (a command prints it)."""

    def metric(self, name: str, value) -> None:
        """The current value of the figure that tells how the work goes (a loss, an accuracy)."""


class BarProgress(Progress):
    """A command's: ``bars(iterable, total=..., desc=..., unit=...)`` makes its progress bars (tqdm on stderr),
    ``write`` prints its lines (``self.stdout.write``)."""

    def __init__(self, bars, write=None):
        self.bars, self.write = bars, write

    def bar(self, iterable=None, total=None, desc="", **kwargs):
        return self.bars(iterable, total=total, desc=desc, **kwargs)

    def log(self, line: str) -> None:
        if self.write is not None:
            self.write(line)
