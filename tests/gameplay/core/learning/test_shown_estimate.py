"""What the page shows (``ValueModel.shown_probability``): the source named in the model's metadata through its
per-phase calibration map, computed the way bench/game_calibration.py scored it."""
import math

import numpy as np
import pytest

from gameplay.core.learning import calibration as cal
from gameplay.core.learning.value import FEATURES, ValueModel
from gameplay.core.search.evaluation import win_probability

BASE = ["me_life", "opp_life", "me_hand", "opp_hand", "me_power", "opp_power"]


def model(info: dict) -> ValueModel:
    w = np.zeros((1, len(FEATURES)))
    w[0, FEATURES.index("me_life")], w[0, FEATURES.index("opp_life")] = 2.0, -2.0
    return ValueModel([(w, np.zeros(1))], np.zeros(len(FEATURES)), np.ones(len(FEATURES)), info)


def rows():
    mine = [0.0] * len(FEATURES)
    mine[FEATURES.index("me_life")], mine[FEATURES.index("opp_life")] = 0.8, 0.45
    mine[FEATURES.index("me_power")] = 0.3
    theirs = list(mine)
    theirs[FEATURES.index("me_life")], theirs[FEATURES.index("opp_life")] = 0.45, 0.8
    return mine, theirs


def test_uncalibrated_model_shows_its_own_estimate():
    m = model({})
    mine, theirs = rows()
    assert m.calibration is None and m.shown_source == "value"
    p = m.raw_shown(mine, theirs, 5.0, 4)
    assert p == pytest.approx(1 / (1 + math.exp(-0.7)))
    assert m.calibrated(p, 4) == p


@pytest.mark.parametrize("source", ["value", "engine", "engine_both", "baseline", "blend"])
def test_each_source_through_its_map(source):
    calib = {"a": {"turns 1-3": 0.5, "turns 4-7": 0.8, "turns 8+": 1.2}, "b": {"turns 1-3": 0.1, "turns 4-7": -0.2,
                                                                               "turns 8+": 0.0}}
    weights = [0.5, -0.5, 0.1, -0.1, 1.0, -1.0]
    blend = {ph: {"weights": [0.6, 0.3, *weights], "bias": 0.05} for ph, _, _ in cal.PHASES}
    m = model({"calibration": calib, "shown": {"source": source, "features": BASE, "weights": weights, "bias": 0.2,
                                               "blend": blend}})
    mine, theirs = rows()
    own = 1 / (1 + math.exp(-0.7))
    base_in = [mine[FEATURES.index(f)] for f in BASE]
    raw = {"value": own, "engine": win_probability(5.0),
           "engine_both": 0.5 * (win_probability(5.0) + 1.0 - win_probability(-2.0)),
           "baseline": float(cal.sigmoid(np.dot(weights, base_in) + 0.2)),
           "blend": float(cal.sigmoid(0.6 * cal.logit(own) + 0.3 * cal.logit(win_probability(5.0))
                                      + np.dot(weights, base_in) + 0.05))}[source]
    assert m.raw_shown(mine, theirs, 5.0, 5, -2.0) == pytest.approx(raw)
    assert m.calibrated(raw, 5) == pytest.approx(float(cal.sigmoid(0.8 * cal.logit(raw) - 0.2)))


def test_engine_both_reads_the_other_seats_own_evaluation():
    """The shown estimate of source engine_both takes the other seat's evaluation, not the negation of this
    seat's (the engine's evaluation is not antisymmetric); unknown, the negation stands in."""
    m = model({"shown": {"source": "engine_both"}})
    mine, theirs = rows()
    assert m.shown_source == "engine_both"
    both = m.raw_shown(mine, theirs, 6.0, 9, 4.0)
    assert both == pytest.approx(0.5 * (win_probability(6.0) + 1.0 - win_probability(4.0)))
    assert both < win_probability(6.0)
    assert m.raw_shown(mine, theirs, 6.0, 9) == pytest.approx(win_probability(6.0))
