"""Draft figures render to SVG and PNG bytes quickly, from pick records or plain dicts."""
from __future__ import annotations

import time

import numpy as np
import pytest

from drafts.bots.base import rank
from common.figures import figure_bytes
from drafts.core.plots import (PAIRS, draft_history_figure, pair_commitment,
                               weights_heatmap_figure)
from drafts.core.pod import DraftPod, simulate

PNG = b"\x89PNG\r\n\x1a\n"


class NameBot:
    name = "by-name"

    def pick(self, pack, pool, context):
        order = sorted(pack)
        return rank(pack, [-order.index(n) for n in pack])


@pytest.fixture
def history(small_set):
    return simulate(DraftPod(small_set, seed=3), [NameBot() for _ in range(8)]).history(0)


def test_pair_commitment_counts_fitting_cards(small_set):
    running = pair_commitment(["Common W00", "Uncommon UB11", "Rare Artifact"], small_set)
    assert list(running[-1]) == list(PAIRS) and len(PAIRS) == 10
    assert running[0]["WU"] == 1 and running[0]["UB"] == 0
    assert running[1]["UB"] == 1 and running[1]["WU"] == 1  # the UB card fits only UB
    assert running[2]["RG"] == 1 and running[2]["UB"] == 2  # colourless fits every pair
    weighted = pair_commitment(["Common W00"], small_set, {"Common W00": 4.0})
    assert weighted[0]["WG"] == 4.0


def test_history_figure_svg_and_png(history, small_set):
    figure_bytes(draft_history_figure(history[:1], small_set), "png")  # import matplotlib outside the timing
    start = time.perf_counter()
    svg = figure_bytes(draft_history_figure(history, small_set), "svg")
    elapsed = time.perf_counter() - start
    assert svg.startswith(b"<?xml") and b"<svg" in svg[:500] and b"Azorius" in svg
    as_dicts = [r.as_dict() for r in history]
    png = figure_bytes(draft_history_figure(as_dicts, small_set, {r.pick: 3.0 for r in history}), "png")
    assert png.startswith(PNG)
    assert figure_bytes(draft_history_figure(history, small_set), "svg") == svg  # no date: same bytes
    assert elapsed < 1.0, f"history figure took {elapsed:.3f}s"


def test_partial_and_empty_history(small_set, history):
    assert figure_bytes(draft_history_figure(history[:5], small_set), "png").startswith(PNG)
    assert figure_bytes(draft_history_figure([], small_set), "svg").startswith(b"<?xml")
    shuffled = [r.as_dict() for r in history][::-1]  # dicts in any order are sorted by pack and pick
    in_order = figure_bytes(draft_history_figure(history, small_set), "svg")
    assert figure_bytes(draft_history_figure(shuffled, small_set), "svg") == in_order


def test_weights_heatmap(small_set):
    names = small_set.names
    rng = np.random.default_rng(0)
    weights = rng.random((len(names), 10))
    figure_bytes(weights_heatmap_figure(weights[:2], names[:2], list(PAIRS)), "png")  # warm-up: imports
    start = time.perf_counter()
    png = figure_bytes(weights_heatmap_figure(weights, names, list(PAIRS), top=25), "png")
    elapsed = time.perf_counter() - start
    assert png.startswith(PNG) and elapsed < 1.0
    svg = figure_bytes(weights_heatmap_figure(weights, names, list(PAIRS)), "svg")
    assert svg.startswith(b"<?xml") and names[0].encode() in svg
    with pytest.raises(ValueError, match="do not match"):
        weights_heatmap_figure(weights[:, :3], names, list(PAIRS))
    with pytest.raises(ValueError, match="'svg' or 'png'"):
        figure_bytes(weights_heatmap_figure(weights, names, list(PAIRS)), "jpg")
