"""The calibration scores and map (gameplay.core.learning.calibration): hand-checked figures, and a map fitted on
miscalibrated estimates that brings them back."""
import math

import numpy as np
import pytest

from gameplay.core.learning import calibration as cal


def test_brier_and_log_loss_by_hand():
    p, y = [0.9, 0.2, 0.5, 1.0], [1, 0, 1, 1]
    assert cal.brier(p, y) == pytest.approx((0.01 + 0.04 + 0.25 + 0) / 4)
    expected = -(math.log(0.9) + math.log(0.8) + math.log(0.5) + math.log(1 - cal.EPS)) / 4
    assert cal.log_loss(p, y) == pytest.approx(expected)


def test_ece_and_reliability_by_hand():
    # bin [0.1, 0.2): two estimates of 0.15, one won -> gap 0.35; bin [0.8, 0.9): 0.85 x2, both won -> gap 0.15;
    # 1.0 falls in the last bin [0.9, 1.0]: gap 0
    p = [0.15, 0.15, 0.85, 0.85, 1.0]
    y = [1, 0, 1, 1, 1]
    bins = cal.reliability(p, y)
    assert [(b["lo"], b["n"], b["mean_p"], b["won"]) for b in bins] == [
        (0.1, 2, 0.15, 0.5), (0.8, 2, 0.85, 1.0), (0.9, 1, 1.0, 1.0)]
    assert cal.ece(p, y) == pytest.approx((2 * 0.35 + 2 * 0.15 + 0) / 5)


def test_a_calibrated_source_scores_near_zero_ece_and_a_confident_one_does_not():
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 20000)
    y = (rng.uniform(0, 1, p.size) < p).astype(float)
    assert cal.ece(p, y) < 0.02
    over = cal.sigmoid(3 * cal.logit(p))  # overconfident: the same ranking, pushed to the edges
    assert cal.ece(over, y) > 0.08
    assert cal.confident_wrong(over, y) > 0.05


def test_the_map_fitted_per_phase_brings_an_overconfident_source_back():
    rng = np.random.default_rng(1)
    turns = rng.integers(1, 14, 30000)
    p = rng.uniform(0.02, 0.98, turns.size)
    y = (rng.uniform(0, 1, p.size) < p).astype(float)
    # early turns overconfident, late turns underconfident and shifted
    raw = np.where(turns <= 3, cal.sigmoid(3 * cal.logit(p)), cal.sigmoid(0.5 * cal.logit(p) + 0.3))
    train = np.arange(turns.size) < 20000
    m = cal.Calibrator.fit(raw[train], y[train], turns[train])
    fixed = m(raw[~train], turns[~train])
    assert cal.ece(raw[~train], y[~train]) > 0.05
    assert cal.ece(fixed, y[~train]) < 0.02
    assert m.a["turns 1-3"] == pytest.approx(1 / 3, abs=0.05) and m.a["turns 8+"] == pytest.approx(2, abs=0.2)
    again = cal.Calibrator.from_dict(m.to_dict())
    assert again.one(0.8, 2) == pytest.approx(m.one(0.8, 2))


def test_scores_refuse_what_is_not_a_probability():
    with pytest.raises(ValueError):
        cal.brier([1.2], [1])
    with pytest.raises(ValueError):
        cal.ece([0.5, 0.5], [1])
    with pytest.raises(ValueError):
        cal.Calibrator.from_dict({"a": {"turns 1-3": "x"}})


def test_phases():
    assert [cal.phase_of(t) for t in (1, 3, 4, 7, 8, 30)] == [
        "turns 1-3", "turns 1-3", "turns 4-7", "turns 4-7", "turns 8+", "turns 8+"]


def test_map_regularised_per_phase_falls_back_to_the_share_won():
    """A strong pull on one phase's slope makes its map say about that phase's share of wins whatever the source
    says (early in a game nothing predicts the winner); the other phases keep their fitted slope."""
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.95, 4000)
    y = (rng.uniform(size=4000) < p).astype(float)
    turns = np.where(np.arange(4000) % 2 == 0, 2, 9)
    m = cal.Calibrator.fit(p, y, turns, l2={"turns 1-3": 10.0, "turns 4-7": 1e-3, "turns 8+": 1e-3})
    assert abs(m.a["turns 1-3"]) < 0.05 and 0.8 < m.a["turns 8+"] < 1.2
    early = y[turns == 2].mean()
    assert abs(m.one(0.05, 2) - early) < 0.03 and abs(m.one(0.95, 2) - early) < 0.03
    assert m.one(0.9, 9) > 0.8
    assert abs(cal.Calibrator.fit(p, y, turns, l2=10.0).a["turns 8+"]) < 0.05  # one l2: every phase
