"""The shared statistics (pure): the exact sign test and the Wilson score interval."""
import math

import pytest

from common import stats


def test_sign_test_counts_only_the_flips():
    assert stats.sign_test(0, 0) == 1.0 and stats.sign_test(3, 3) == 1.0
    assert stats.sign_test(5, 2) == pytest.approx(2 * (1 + 7 + 21) / 128)  # 0.453
    assert stats.sign_test(2, 5) == stats.sign_test(5, 2)
    assert stats.sign_test(10, 0) == pytest.approx(2 / 1024) and stats.sign_test(10, 0) < 0.05


def test_wilson_interval_matches_the_formula():
    rate, low, high = stats.wilson(8, 10)
    assert rate == 0.8
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert stats.wilson(0, 0) == (None, 0.0, 1.0)
    r, lo, hi = stats.wilson(0, 5)
    assert r == 0 and lo == 0 and 0.4 < hi < 0.5
    r, lo, hi = stats.wilson(5, 5)
    assert r == 1 and hi == 1 and 0.5 < lo < 0.6
    r, lo, hi = stats.wilson(50, 100)
    assert lo == pytest.approx(0.5 - 0.0962, abs=1e-3) and hi == pytest.approx(0.5 + 0.0962, abs=1e-3)
    r, lo, hi = stats.wilson(2.5, 5)  # half a win from a draw
    assert r == 0.5 and math.isclose(lo + hi, 1.0)


def test_sprt_bounds_are_walds():
    lower, upper = stats.sprt_bounds(0.05, 0.05)
    assert upper == pytest.approx(math.log(19)) and lower == pytest.approx(-math.log(19))
    assert upper == pytest.approx(2.944, abs=1e-3)
    with pytest.raises(ValueError):
        stats.sprt_bounds(0, 0.05)


def test_sprt_llr_and_state_over_discordant_pairs():
    up, down = math.log(0.65 / 0.5), math.log(0.35 / 0.5)
    r = stats.sprt(4, 2)
    assert r["llr"] == pytest.approx(4 * up + 2 * down, abs=1e-4) and r["state"] == "running"
    assert r["discordant"] == 6
    # 12 straight wins: 12 * 0.2624 = 3.15 >= 2.944
    assert stats.sprt(12, 0)["state"] == "H1 accepted" and stats.sprt(11, 0)["state"] == "running"
    # 9 straight losses: 9 * -0.3567 = -3.21 <= -2.944
    assert stats.sprt(0, 9)["state"] == "H0 accepted" and stats.sprt(0, 8)["state"] == "running"
    # at p = 0.575 the two drifts nearly cancel: many pairs stay undecided
    assert stats.sprt(115, 85)["state"] == "running"
    with pytest.raises(ValueError):
        stats.sprt(1, 1, p0=0.5, p1=0.5)


def test_sprt_path_stops_at_the_first_crossing():
    # 12 wins cross H1; the losses after it do not count
    r = stats.sprt_path([True] * 12 + [False] * 20)
    assert r["state"] == "H1 accepted" and r["stopped_at"] == 12 and r["better"] == 12 and r["worse"] == 0
    assert len(r["trace"]) == 12 and r["trace"] == sorted(r["trace"])
    r = stats.sprt_path([True, False] * 5)
    assert r["state"] == "running" and r["stopped_at"] is None and r["discordant"] == 10
