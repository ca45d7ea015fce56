"""The think times of bench/pods.py --pace (bench/harness/pace.py): pure, no Django, no servers."""
from __future__ import annotations

import random

import pytest

from bench.harness.pace import think_seconds, timer_limit


def test_the_arena_timer_runs_from_75_s_for_a_full_pack_down_to_30_s_for_the_last_card():
    limits = [timer_limit(n) for n in range(14, 0, -1)]
    assert limits[0] == 75.0 and limits[-1] == 30.0
    assert all(a > b for a, b in zip(limits, limits[1:]))
    assert timer_limit(20) == 75.0 and timer_limit(0) == 30.0  # clamped


def test_think_times_are_seeded_and_within_their_range():
    a = [think_seconds("human", random.Random(3), 14) for _ in range(3)]
    assert a == [think_seconds("human", random.Random(3), 14) for _ in range(3)]
    rng = random.Random(1)
    human = [think_seconds("human", rng, 10) for _ in range(500)]
    assert 3.0 <= min(human) and max(human) <= 20.0
    timer = [think_seconds("timer", rng, 14) for _ in range(500)]
    assert 0.1 * 75 <= min(timer) and max(timer) <= 0.7 * 75
    with pytest.raises(ValueError):
        think_seconds("burst", rng, 14)
