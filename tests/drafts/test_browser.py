"""End to end in Debian's chromium: simulate a pod from the drafts page, open a seat, see its plot, export."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.browser import ARTIFACTS, CHROMIUM

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing")]


def test_simulate_a_pod_and_read_a_seat(daphne_server, page):  # noqa: F811 - the imported page fixture
    from playwright.sync_api import expect

    from tests.drafts.conftest import make_set

    make_set("TST")
    page.goto(f"{daphne_server}/drafts/")
    expect(page.locator("h1")).to_have_text("Booster drafts")
    page.select_option("select[name=set_code]", "TST")
    page.select_option("select[name=bots]", "draftsim")
    page.fill("input[name=seats]", "6")
    page.fill("input[name=seed]", "42")
    page.click("#simulate-form button[type=submit]")
    page.wait_for_url(re.compile(r"/drafts/[0-9a-f-]{36}/$"))
    rows = page.locator("#seat-table tbody tr")
    expect(rows).to_have_count(6)
    expect(rows.first).to_contain_text("draftsim")
    expect(rows.first.locator("td").nth(3)).to_have_text("42")

    rows.nth(2).locator("a").first.click()
    page.wait_for_url(re.compile(r"/seats/2/$"))
    expect(page.locator("h1")).to_contain_text("Seat 3")
    expect(page.locator("#pick-table tbody tr")).to_have_count(42)
    plot = page.locator("#history-plot")
    expect(plot).to_be_visible()
    page.wait_for_function("document.getElementById('history-plot').complete && "
                           "document.getElementById('history-plot').naturalWidth > 0")
    with page.expect_download() as download:
        page.click("text=Export seat")
    path = download.value.path()
    lines = Path(path).read_text(encoding="utf-8").strip().splitlines()
    assert len(lines) == 43 and lines[0].startswith("expansion,event_type,draft_id")

    page.click("text=Built deck")
    page.wait_for_url(re.compile(r"/decks/\d+/$"))
    expect(page.get_by_test_id("main-count")).to_have_text("40")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "draft-deck.png"), full_page=True)
    assert not page.problems, page.problems
