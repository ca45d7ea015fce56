"""The whole-table logistic win estimate (gameplay.core.learning.estimate) and the page's ``logistic`` source."""
import math

import numpy as np
import pytest

from gameplay.core.learning import calibration as cal
from gameplay.core.learning import estimate
from gameplay.core.learning.value import FEATURES, ValueModel, swap_sides
from gameplay.core.search.evaluation import win_probability


def row(me_life=1.0, opp_life=1.0, me_power=0.0, opp_power=0.0, me_tough=0.0, ev=0.0, turn=5):
    r = [0.0] * len(FEATURES)
    r[FEATURES.index("me_life")], r[FEATURES.index("opp_life")] = me_life, opp_life
    r[FEATURES.index("me_power")], r[FEATURES.index("opp_power")] = me_power, opp_power
    r[FEATURES.index("me_toughness")] = me_tough
    r[FEATURES.index("turn")], r[FEATURES.index("evaluation")] = turn / 20, ev
    return r


def test_derived_features_by_hand():
    # 6 power against 12 life: half the life a turn; evasive power counts twice
    r = row(me_life=0.5, opp_life=0.6, me_power=0.6, opp_power=0.2, me_tough=0.4)
    r[FEATURES.index("me_evasive_power")] = 0.2
    r[FEATURES.index("me_hand")] = 3 / 7
    d = estimate.derived([r])[0]
    assert d[estimate.DERIVED.index("me_clock")] == pytest.approx((6 + 2) / 12)
    assert d[estimate.DERIVED.index("opp_clock")] == pytest.approx(2 / 10)
    assert d[estimate.DERIVED.index("me_cards")] == pytest.approx(0.3)
    assert d[estimate.DERIVED.index("me_blockers_vs_power")] == pytest.approx(4 / 2)
    assert estimate.derived([row(opp_life=0.0, me_power=1.0)])[0][0] == 2.0  # capped


def synthetic(n=1500, seed=3):
    """Positions whose winner depends on the life difference and the clock, with noise."""
    rng = np.random.default_rng(seed)
    mine, theirs, won, turns = [], [], [], []
    for _ in range(n):
        a, b = rng.uniform(0.1, 1.0, 2)
        pa, pb = rng.uniform(0, 0.8, 2)
        t = int(rng.integers(1, 14))
        r = row(a, b, pa, pb, turn=t)
        z = 3 * (a - b) + 2 * (pa - pb)
        mine.append(r)
        theirs.append(swap_sides(r))
        won.append(int(rng.random() < 1 / (1 + math.exp(-z))))
        turns.append(t)
    x = np.array(mine)
    own = cal.sigmoid(2 * (x[:, 0] - x[:, 16]))
    eng = np.full(n, 0.5)
    return (estimate.inputs(mine, own, eng), estimate.inputs(theirs, 1 - own, eng), np.array(won),
            np.array(turns))


def test_fit_beats_a_coin_and_is_antisymmetric():
    xm, xt, won, turns = synthetic()
    est = estimate.fit(xm[:1000], xt[:1000], won[:1000], turns[:1000])
    p = est.predict(xm[1000:], xt[1000:], turns[1000:])
    assert cal.brier(p, won[1000:]) < 0.21  # a coin scores 0.25
    q = est.predict(xt[1000:], xm[1000:], turns[1000:])
    assert np.allclose(p + q, 1.0)
    # the dict round trip keeps the estimate
    again = estimate.LogisticEstimate.from_dict(est.to_dict())
    assert np.allclose(again.predict(xm[1000:], xt[1000:], turns[1000:]), p, atol=1e-4)


def test_from_dict_refuses_bad_weights():
    xm, xt, won, turns = synthetic(200)
    d = estimate.fit(xm, xt, won, turns).to_dict()
    d["phases"]["turns 1-3"]["weights"] = d["phases"]["turns 1-3"]["weights"][:-1]
    with pytest.raises(ValueError):
        estimate.LogisticEstimate.from_dict(d)
    with pytest.raises(ValueError):
        estimate.LogisticEstimate.from_dict({"mean": [0.0], "std": [0.0], "phases": {}})


def test_page_source_logistic_is_what_the_bench_scores():
    xm, xt, won, turns = synthetic(400)
    est = estimate.fit(xm, xt, won, turns)
    w = np.zeros((1, len(FEATURES)))
    w[0, FEATURES.index("me_life")], w[0, FEATURES.index("opp_life")] = 2.0, -2.0
    calib = {"a": {"turns 1-3": 0.9, "turns 4-7": 0.8, "turns 8+": 1.1}, "b": {"turns 1-3": 0.0, "turns 4-7": 0.1,
                                                                               "turns 8+": -0.1}}
    m = ValueModel([(w, np.zeros(1))], np.zeros(len(FEATURES)), np.ones(len(FEATURES)),
                   {"calibration": calib, "shown": {"source": "logistic", "logistic": est.to_dict()}})
    assert m.shown_source == "logistic"
    mine = row(0.8, 0.45, 0.3, 0.1, ev=0.4, turn=6)
    theirs = swap_sides(mine, -3.0)
    own = m.predict(mine, theirs)
    x = estimate.inputs([mine, theirs], [own, 1 - own], [win_probability(4.0), win_probability(-3.0)])
    expected = float(est.predict(x[:1], x[1:], [6])[0])
    assert m.raw_shown(mine, theirs, 4.0, 6) == pytest.approx(expected)
    assert 0.5 < expected < 1.0  # more life and more power
    assert m.calibrated(expected, 6) == pytest.approx(float(cal.sigmoid(0.8 * cal.logit(expected) + 0.1)))
