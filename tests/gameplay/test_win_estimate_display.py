"""The advice panel's win estimate (static/js/play.js ``winEstimate``): the calibrated value model's estimate with
its spread over the copies, "uncertain" instead of a number when the copies disagree; the server side says when
they do (``value.spread``, ``advice._spread_fields``). The JS function runs under node."""
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gameplay.core.learning import value

PLAY_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "play.js"


def _function(source: str, name: str) -> str:
    start = re.search(rf"function {name}\(", source).start()
    depth, i = 0, source.index("{", start)
    while True:
        depth += {"{": 1, "}": -1}.get(source[i], 0)
        i += 1
        if depth == 0:
            return source[start:i]


def _win_estimate(advice: dict, rec: dict) -> dict:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    code = _function(PLAY_JS.read_text(encoding="utf-8"), "winEstimate")
    script = f"{code}\nconsole.log(JSON.stringify(winEstimate({json.dumps(advice)}, {json.dumps(rec)})));"
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=20, check=True)
    return json.loads(out.stdout)


def test_spread_says_uncertain_when_the_copies_disagree():
    agree = value.spread([0.30, 0.34, 0.36, 0.31])
    assert not agree["uncertain"] and agree["low"] == 0.30 and agree["high"] == 0.36 and agree["copies"] == 4
    assert abs(agree["estimate"] - 0.3275) < 1e-9
    split = value.spread([0.15, 0.62, 0.40, 0.30])
    assert split["uncertain"]
    assert value.spread([0.5, 0.5 + value.UNCERTAIN_SPREAD])["uncertain"]


def test_advice_head_carries_the_spread():
    from gameplay.play.advice import _spread_fields

    head = _spread_fields(value.spread([0.15, 0.62]))
    assert head == {"position_low": 0.15, "position_high": 0.62, "position_copies": 2, "position_uncertain": True}
    assert _spread_fields(None)["position_uncertain"] is False


def test_panel_shows_the_estimate_with_its_spread():
    shown = _win_estimate({"position_estimate": 0.14, "position_low": 0.11, "position_high": 0.18,
                           "position_copies": 4, "position_uncertain": False}, {"win_estimate": 0.6})
    assert shown["text"] == "14%" and not shown["uncertain"] and shown["value"] == 0.14
    assert shown["source"] == "11%–18% over 4 copies · value model, calibrated"


def test_panel_says_uncertain_when_the_copies_disagree():
    shown = _win_estimate({"position_estimate": 0.38, "position_low": 0.12, "position_high": 0.71,
                           "position_copies": 4, "position_uncertain": True}, {"win_estimate": 0.6})
    assert shown["text"] == "uncertain" and shown["uncertain"] and shown["value"] == 0.5
    assert "disagree" in shown["source"] and "12%–71%" in shown["source"]


def test_panel_without_a_model_shows_the_search_value():
    shown = _win_estimate({"position_estimate": None}, {"win_estimate": 0.625})
    assert shown == {"value": 0.625, "text": "63%", "uncertain": False, "source": "search"}


def test_panel_names_the_source_the_estimate_is_made_of():
    """The line names what the estimate is made of (the shown source bench/game_calibration.py chose), not always
    "value model"."""
    from gameplay.core.learning.value import FEATURES, ValueModel
    import numpy as np

    shown = _win_estimate({"position_estimate": 0.71, "position_low": 0.66, "position_high": 0.74, "position_copies": 4,
                           "position_uncertain": False, "position_source": "engine evaluation, calibrated"},
                          {"win_estimate": 0.6})
    assert shown["source"] == "66%–74% over 4 copies · engine evaluation, calibrated"
    flat = ([(np.zeros((1, len(FEATURES))), np.zeros(1))], np.zeros(len(FEATURES)), np.ones(len(FEATURES)))
    calib = {"a": {"turns 1-3": 0.5}, "b": {"turns 1-3": 0.0}}
    assert ValueModel(*flat, {"shown": {"source": "engine_both"}, "calibration": calib}).shown_label == \
        "engine evaluation, calibrated"
    assert ValueModel(*flat, {}).shown_label == "value model"
