"""Playwright + Debian's chromium: two people in two browser contexts draft a pod with bots, live
over the pod websocket, then one builds a deck (click to sideboard, lands, Arena export, save)."""
from __future__ import annotations

import os
import re
import time

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.browser import ARTIFACTS, CHROMIUM

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300),
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing")]


def new_page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.problems = []
    page.on("pageerror", lambda exc: page.problems.append(str(exc)))
    return context, page


def open_pod(page, server: str, seats: int, name: str, consent: str = "yes", set_code: str = "TST") -> None:
    """Fill /drafts/play/'s form and create the pod: the page is then the pod's, its host's seat taken."""
    page.goto(f"{server}/drafts/play/")
    page.select_option("select[name=set_code]", set_code)
    page.fill("input[name=seats]", str(seats))
    page.fill("input[name=display_name]", name)
    page.check(f"input[name=consent][value={consent}]")
    page.click("#pod-form button[type=submit]")
    page.wait_for_url(re.compile(r"/drafts/pods/[0-9a-f-]{36}/$"))


def pick_once(page) -> bool:
    """Click the first pickable card, if there is one now. True when the page shows the draft is done."""
    if page.locator("#done").is_visible():
        return True
    button = page.locator("#pack .card-tile button:not([disabled])").first
    if button.count():
        try:
            button.click(timeout=2000)
        except PlaywrightError:  # the pack was replaced under the click: the next round picks again
            pass
    return False


def test_two_people_draft_against_bots_and_build_a_deck(daphne_server, browser):
    from playwright.sync_api import expect

    from django.db import connections

    from drafts.models import DraftPick
    from tests.drafts.conftest import make_set

    make_set("TST")
    host_ctx, host = new_page(browser)
    guest_ctx, guest = new_page(browser)
    try:
        open_pod(host, daphne_server, 4, "Ana")
        expect(host.locator("#conn")).to_have_text("live")
        invite = host.input_value("#share-link")

        guest.goto(invite)
        guest.fill("input[name=display_name]", "Ben")
        guest.check("input[name=consent][value=no]")
        guest.click("#join-form button[type=submit]")
        expect(guest.locator("#wait-host")).to_be_visible()
        # the host sees the new seat live, without reloading
        expect(host.locator("#seat-list li[data-seat='1'] .seat-name")).to_contain_text("Ben")
        expect(host.locator("#seat-list li.seat-open")).to_have_count(2)

        host.click("#start-button")
        expect(host.locator("#pack .card-tile").first).to_be_visible()
        expect(guest.locator("#pack .card-tile").first).to_be_visible()
        expect(host.locator("#pass-direction")).to_contain_text("left")
        expect(host.locator("#pack .rank").first).to_be_visible()  # suggestions shown...
        host.uncheck("#show-suggestions")
        expect(host.locator("#pack .rank")).to_have_count(0)  # ...and hidden
        host.locator("#pack .card-tile button").first.click()
        expect(host.locator("#pool-count")).to_have_text("(1)")
        expect(host.locator("#pool .pool-group")).to_have_count(1)
        ARTIFACTS.mkdir(exist_ok=True)
        host.screenshot(path=str(ARTIFACTS / "pod-drafting.png"), full_page=True)

        deadline = time.monotonic() + 240
        done = [False, False]
        while not all(done) and time.monotonic() < deadline:
            done = [pick_once(host), pick_once(guest)]
            host.wait_for_timeout(30)
        assert all(done), "the draft did not finish"
        expect(host.locator("#pool-count")).to_have_text("(42)")
        expect(guest.locator("#pool-count")).to_have_text("(42)")
        expect(host.locator("#history-plot")).to_be_visible()

        host.click("#build-link")
        host.wait_for_url(re.compile(r"/build/$"))
        expect(host.locator("#main-count")).to_have_text("40")
        first = host.locator("#main-board .board-card").first
        name = first.get_attribute("data-card")
        side_before = int(host.inner_text("#side-count"))
        first.locator("button").click()  # one click: deck -> sideboard
        expect(host.locator("#side-count")).to_have_text(str(side_before + 1))
        lands = host.locator("#lands input").first
        lands.fill(str(int(lands.input_value()) + 1))
        lands.dispatch_event("change")
        expect(host.locator("#main-count")).to_have_text("40")
        host.click("#export-arena")
        expect(host.locator("#export-text")).to_have_value(re.compile(r"^About\nName .*\n\nDeck\n", re.S))
        side = host.input_value("#export-text").split("Sideboard")[1]
        assert re.search(rf"^\d+ {re.escape(name)}$", side, re.M), side  # the moved card is in the sideboard
        host.click("#save-deck")
        host.locator("#saved-deck-link").click()
        host.wait_for_url(re.compile(r"/decks/\d+/$"))
        expect(host.get_by_test_id("main-count")).to_have_text("40")
        host.screenshot(path=str(ARTIFACTS / "pod-deck.png"), full_page=True)
        assert not host.problems and not guest.problems, host.problems + guest.problems
        assert DraftPick.objects.filter(seat__seat__in=[0, 1], timed_out=False, seat__drafter="human").count() == 84
    finally:
        host_ctx.close()
        guest_ctx.close()
        connections.close_all()
