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
