"""For the limits tests: the abuse limits (plumbing.limits) on, which the rest of the suite runs without
(tests/isolation.py), with a clock of their own set in a window no other test, nor an earlier run on the services
stack's Redis, has used. Each limits test module makes its ``limits_on`` fixture with :func:`turn_on`."""
from __future__ import annotations

import random
import time

from plumbing import limits


class Clock:
    def __init__(self):
        self.now = time.time() + random.SystemRandom().randrange(1, 10**9) * 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def turn_on(settings, monkeypatch):
    """The limits on, every rate off unless a test sets it; returns (set limits, clock)."""
    settings.MTG_LIMITS = {"enabled": "1", "guest_ip_factor": "0", "busy_retry_after": "5"}
    clock = Clock()
    monkeypatch.setattr(limits, "clock", clock)

    def set_limits(**values):
        settings.MTG_LIMITS = {**settings.MTG_LIMITS, **{k: str(v) for k, v in values.items()}}

    return set_limits, clock
