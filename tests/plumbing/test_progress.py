"""plumbing.progress.ticking: a step that reports nothing while it works (one SQL statement) still shows a bar
that moves at least every few seconds, never reads done before the step is, and ends at 100 %."""
from __future__ import annotations

import re
import time

from plumbing.progress import ticking


def _updates(text: str) -> list[int]:
    return [int(p) for p in re.findall(r"counting:\s+(\d+)%", text)]


def test_a_silent_step_gets_bar_updates_and_ends_done(capsys, monkeypatch):
    monkeypatch.setenv("MTG_PROGRESS", "1")
    with ticking("counting", expected=0.6, every=0.1):
        time.sleep(1.2)  # twice the estimate
    shown = _updates(capsys.readouterr().err)
    assert len(shown) >= 8, shown  # a line every 0.1 s, not one at the end
    assert shown[-1] == 100 and max(shown[:-1]) < 100  # past the estimate it waits short of the end
    assert shown == sorted(shown)


def test_a_step_that_fails_does_not_read_done(capsys, monkeypatch):
    monkeypatch.setenv("MTG_PROGRESS", "1")
    try:
        with ticking("counting", expected=5.0, every=0.1):
            time.sleep(0.3)
            raise ValueError("the statement failed")
    except ValueError:
        pass
    shown = _updates(capsys.readouterr().err)
    assert shown and shown[-1] < 100


def test_quiet_without_a_terminal_or_mtg_progress(capsys, monkeypatch):
    monkeypatch.delenv("MTG_PROGRESS", raising=False)
    with ticking("counting", expected=0.2, every=0.05):
        time.sleep(0.3)
    assert capsys.readouterr().err == ""


def test_done_is_shown_once_even_before_the_first_tick(capsys, monkeypatch):
    """The end is drawn once: a step that ends between ticks (or before the first) does not print 100 % twice,
    so a 100 % before the last line would mean the bar read done early."""
    monkeypatch.setenv("MTG_PROGRESS", "1")
    with ticking("counting", expected=5.0, every=1.0):
        time.sleep(0.05)
    shown = _updates(capsys.readouterr().err)
    assert shown[-1] == 100 and shown.count(100) == 1, shown
