"""End to end: real Daphne + Debian's chromium through Playwright (sync API).

Covers the deck import form, the deck page (type groups, curve chart) and the legality panel
filled over the deck websocket. Screenshots go to test-artifacts/ (git-ignored).
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from tests.browser import ARTIFACTS, CHROMIUM

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "AtomicCards.sample.json"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]

DECKLIST = """\
// Boros Burn, paste from MTG Arena and MTGO mixed
4 Goblin Guide
4x Monastery Swiftspear
4 Eidolon of the Great Revel
4 Lightning Bolt (M11) 146
4 Lava Spike
4 Rift Bolt
4 Skewer the Critics
4 searing blaze
4 Light Up the Stage
2 fire/ice
4 Inspiring Vantage
4 Sacred Foundry
14 Mountain

Sideboard
4 Skullcrack
4 Path to Exile
2 Fire // Ice
3 Brazen Borrower
2 Jace, the Mind Sculptor
"""

TYPO_LIST = "4 Goblin Guide\n4 Lightnig Bolt\n52 Mountain\n"


def load_catalogue():
    from django.core.management import call_command

    call_command("import_cards", atomic=str(FIXTURE), no_oracle=True, stdout=io.StringIO())


@pytest.fixture
def analysis_runner(request):
    """Whatever runs analyze_deck: the request itself (embedded) or a real Celery worker (services)."""
    from django.conf import settings

    if settings.STACK == "services":
        return request.getfixturevalue("celery_worker_process")
    return None


def test_import_deck_and_see_live_legality(daphne_server, analysis_runner, page, browser):
    from playwright.sync_api import expect

    from decks.models import Deck

    load_catalogue()
    page.goto(f"{daphne_server}/decks/import/")
    expect(page.locator("h1")).to_have_text("Import a deck")
    page.fill("textarea[name=text]", DECKLIST)
    page.fill("input[name=name]", "Boros Burn")
    page.select_option("select[name=format]", "modern")
    page.click("button[type=submit]:has-text('Import deck')")

    page.wait_for_url(re.compile(r"/decks/\d+/$"))
    deck = Deck.objects.get()
    assert page.url.endswith(f"/decks/{deck.pk}/")
    expect(page.locator("h1")).to_have_text("Boros Burn")
    expect(page.get_by_test_id("main-count")).to_have_text("60")
    expect(page.get_by_test_id("side-count")).to_have_text("15")

    creatures = page.locator(".type-group[data-type=Creature]").first
    expect(creatures.locator("h3")).to_contain_text("Creature (12)")
    expect(creatures).to_contain_text("Goblin Guide")
    expect(page.locator(".type-group[data-type=Instant]").first).to_contain_text("Fire // Ice")

    # the curve: 8 columns, the tallest (mana value 1: 16 cards) drawn at full height
    bars = page.locator(".curve .curve-bar")
    expect(bars).to_have_count(8)
    expect(page.locator(".curve-col").nth(1)).to_have_attribute("aria-label", "Mana value 1: 16 cards")
    full = page.locator(".curve-col").nth(1).locator(".curve-bar").bounding_box()
    track = page.locator(".curve-col").nth(1).locator(".curve-track").bounding_box()
    assert full["height"] > 100 and abs(full["height"] - track["height"]) < 2
    assert page.locator(".curve-col").nth(3).locator(".curve-bar").bounding_box()["height"] < full["height"]

    # the legality panel is (re)filled from the websocket
    panel = page.locator("#legality")
    expect(panel).to_have_attribute("data-ws", "received", timeout=20_000)
    expect(panel).to_contain_text("Legal in:")
    expect(panel).to_contain_text("Modern: legal")
    expect(panel).to_have_attribute("data-state", "ready")

    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "deck-page.png"), full_page=True)
    phone = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    try:
        mobile = phone.new_page()
        mobile.goto(page.url)
        # nothing wider than the screen except inside horizontally scrolling tables
        assert mobile.evaluate("document.documentElement.scrollWidth") <= 390
        mobile.screenshot(path=str(ARTIFACTS / "deck-page-mobile.png"))
    finally:
        phone.close()
    assert page.problems == []


def test_pending_analysis_arrives_over_the_websocket(daphne_server, analysis_runner, page):
    from playwright.sync_api import expect

    from decks.core.decklist import parse_decklist
    from decks.services import card_index, save_parsed_deck

    load_catalogue()
    parsed = parse_decklist(DECKLIST, card_index())
    assert parsed.ok
    deck = save_parsed_deck(parsed.deck, fmt="pauper", name="Not analysed yet")  # no task queued
    assert deck.analysis is None

    page.goto(f"{daphne_server}/decks/{deck.pk}/")
    panel = page.locator("#legality")
    expect(panel).to_contain_text("Legal in:", timeout=20_000)
    expect(panel).to_have_attribute("data-ws", "received")
    expect(panel).to_contain_text("Pauper:")
    expect(panel).to_contain_text("Goblin Guide has not been seen legal in Pauper")
    deck.refresh_from_db()
    assert deck.analysis and "modern" in deck.analysis["legal_in"]
    assert page.problems == []


def test_typo_shows_inline_suggestion_and_saves_nothing(daphne_server, page):
    from playwright.sync_api import expect

    from decks.models import Deck

    load_catalogue()
    page.goto(f"{daphne_server}/decks/import/")
    page.fill("textarea[name=text]", TYPO_LIST)
    page.click("button[type=submit]:has-text('Import deck')")
    page.wait_for_load_state()

    error = page.locator(".line-error").first
    expect(error).to_contain_text('Line 2: Unknown card "Lightnig Bolt"')
    expect(error).to_contain_text("did you mean")
    suggestion = error.locator("button.suggestion", has_text="Lightning Bolt")
    expect(suggestion).to_be_visible()
    expect(page.locator("textarea[name=text]")).to_have_value(re.compile("4 Lightnig Bolt"))
    assert Deck.objects.count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "import-errors.png"), full_page=True)

    # applying the suggestion fixes the line; the list then imports
    suggestion.click()
    expect(page.locator("textarea[name=text]")).to_have_value("4 Goblin Guide\n4 Lightning Bolt\n52 Mountain\n")
    page.click("button[type=submit]:has-text('Import deck')")
    page.wait_for_url(re.compile(r"/decks/\d+/$"))
    assert Deck.objects.count() == 1
    assert page.problems == []


def test_home_quick_search_and_card_page(daphne_server, page):
    from playwright.sync_api import expect

    load_catalogue()
    page.goto(f"{daphne_server}/")
    expect(page.get_by_test_id("count-cards")).to_have_text("23")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "home.png"), full_page=True)
    page.fill("#quick-q", "BOLT")
    page.press("#quick-q", "Enter")
    page.wait_for_url(re.compile(r"/cards/\?q=BOLT"))
    rows = page.locator(".cards-table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("Lightning Bolt")
    expect(rows.first.locator(".pip-r")).to_have_count(1)

    page.check("input[name=color][value=R]")
    page.fill("#f-q", "")
    page.select_option("#f-format", "pauper")
    page.click("button[type=submit]:has-text('Search')")
    expect(page.get_by_test_id("result-count")).to_contain_text("cards")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "card-search.png"), full_page=True)

    page.click("text=Fire // Ice")
    expect(page.locator("h1")).to_have_text("Fire // Ice")
    expect(page.locator(".face-name")).to_have_text(["Fire", "Ice"])
    expect(page.locator(".legalities")).to_contain_text("MTGJSON")
    page.screenshot(path=str(ARTIFACTS / "card-page.png"), full_page=True)
    assert page.problems == []


def test_a_guests_deck_is_unlisted_until_they_make_it_public(daphne_server, page, browser):
    """A guest imports a deck: it is in their "My decks", not in the public list another browser sees, until
    they click "Make public"."""
    from playwright.sync_api import expect

    from decks.models import Deck

    load_catalogue()
    page.goto(f"{daphne_server}/decks/import/")
    page.fill("textarea[name=text]", DECKLIST)
    page.fill("input[name=name]", "Gus secret burn")
    page.click("button[type=submit]:has-text('Import deck')")
    page.wait_for_url(re.compile(r"/decks/\d+/$"))
    deck_url = page.url
    expect(page.get_by_test_id("unlisted")).to_be_visible()
    page.goto(f"{daphne_server}/decks/mine/")
    expect(page.locator("h1")).to_have_text("My decks")
    mine = page.locator("table.data-table tbody tr", has_text="Gus secret burn")
    expect(mine.get_by_test_id("visibility")).to_have_text("unlisted")

    other = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        stranger = other.new_page()
        stranger.goto(f"{daphne_server}/decks/")
        expect(stranger.locator(".result-count")).to_have_text("0 decks")
        stranger.goto(f"{daphne_server}/decks/mine/")
        expect(stranger.locator("main")).not_to_contain_text("Gus secret burn")
        stranger.goto(deck_url)  # the link still works, without the switch
        expect(stranger.locator("h1")).to_have_text("Gus secret burn")
        expect(stranger.locator("#visibility-form")).to_have_count(0)

        page.goto(deck_url)
        page.click("#visibility-form button:has-text('Make public')")
        page.wait_for_url(deck_url)
        expect(page.locator(".messages")).to_contain_text("The deck is public")
        expect(page.get_by_test_id("unlisted")).to_have_count(0)
        expect(page.locator("#visibility-form button")).to_have_text("Make unlisted")
        assert Deck.objects.get().public

        stranger.goto(f"{daphne_server}/decks/")
        expect(stranger.locator("table.data-table")).to_contain_text("Gus secret burn")
        ARTIFACTS.mkdir(exist_ok=True)
        page.goto(f"{daphne_server}/decks/mine/")
        expect(mine.get_by_test_id("visibility")).to_have_text("public")
        page.screenshot(path=str(ARTIFACTS / "my-decks.png"), full_page=True)
    finally:
        other.close()
    assert page.problems == []
