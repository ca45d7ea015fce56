"""Playwright + Debian's chromium: the simulated pods' ratings beside the pick suggestions on a pod's page (issue 38),
at desktop and phone width, for a set whose simulated ratings agree with real players' (a results file planted for
the Daphne process); the label sits beside the card's name, never over it, and the page does not overflow."""
from __future__ import annotations

import json
import os

import pytest

from tests.browser import ARTIFACTS, CHROMIUM
from tests.drafts.test_pod_browser import open_pod

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300),
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing")]


@pytest.fixture
def trusted_results(transactional_db, tmp_path, monkeypatch):
    """A results file in which every TST card was drawn in 41 simulated games (won 23) and the set's ratings agree
    with 17Lands' (interval above zero); the Daphne process reads it through MTG_SIM_RATINGS."""
    from tests.drafts.conftest import make_set

    names = make_set("TST")
    cards = {n: {"won": 23, "games": 41, "wr": 0.561, "low": 0.41, "high": 0.70} for n in names}
    path = tmp_path / "draft_games.json"
    path.write_text(json.dumps({"benchmark": "draft_games", "sets": {"TST": {
        "games": 400, "card_table": cards, "spearman": {"rho": 0.41, "cards": len(names), "low": 0.12, "high": 0.63}}}}))
    monkeypatch.setenv("MTG_SIM_RATINGS", str(path))
    return path


@pytest.mark.parametrize("width", [1280, 390])
def test_a_drafter_sees_simulated_ratings_beside_the_suggestions(trusted_results, daphne_server, browser, width):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    try:
        open_pod(page, daphne_server, 2, "Ana")
        expect(page.locator("#conn")).to_have_text("live")  # the pod's socket is open: the start goes through it
        page.click("#start-button")
        tile = page.locator("#pack .card-tile").first
        expect(tile).to_be_visible()
        expect(tile.locator(".sim-rating")).to_have_text("sim GIH 56% (n=41)")
        expect(page.locator("#pack .sim-rating")).to_have_count(page.locator("#pack .card-tile").count())
        # beside the name, not over it: the two boxes do not overlap
        name_box = tile.locator(".card-name").bounding_box()
        label_box = tile.locator(".sim-rating").bounding_box()
        assert name_box and label_box and label_box["width"] > 0
        apart = (label_box["y"] >= name_box["y"] + name_box["height"] or name_box["y"] >= label_box["y"] + label_box["height"]
                 or label_box["x"] >= name_box["x"] + name_box["width"] or name_box["x"] >= label_box["x"] + label_box["width"])
        assert apart, (name_box, label_box)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"pod-sim-ratings-{width}.png"), full_page=True)
        assert not problems, problems
    finally:
        context.close()
