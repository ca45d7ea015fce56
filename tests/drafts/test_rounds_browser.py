"""Playwright + Debian's chromium against a real Daphne: a bot draft (opened in the browser, drafted to the end by
the pod service to keep it short), the deck built (a card the engine cannot play swapped out) and saved, round 1 started from the pod page at the level
chosen, advice asked for and played, the round finished (by conceding: playing a whole game out by clicks is
minutes on a 2-core machine), its review opened, and the results table on the pod page."""
from __future__ import annotations

import os
import re

import pytest

from tests.browser import ARTIFACTS, CHROMIUM
from tests.drafts.pod_rounds import (card_records, finish, game_catalogue, game_env,  # noqa: F401  (fixtures)
                                     play_set, real_data_dir_session)
from tests.gameplay.play_fixtures import advice_worker  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.timeout(400),
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing")]


def test_draft_build_play_round_one_with_advice_and_review(play_set, advice_worker, daphne_server, browser,  # noqa: F811
                                                           tmp_path):
    from django.db import connections
    from playwright.sync_api import expect

    from drafts import rounds
    from drafts.core.deckbuild import BASIC_FOR_COLOR
    from drafts.models import Draft, DraftRound
    from gameplay.models import EngineCard

    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    problems = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    try:
        server = daphne_server
        page.goto(f"{server}/drafts/play/")
        page.select_option("select[name=set_code]", "PLY")
        page.fill("input[name=seats]", "4")
        page.fill("input[name=display_name]", "Ana")
        page.check("input[name=consent][value=yes]")
        page.click("#pod-form button[type=submit]")
        page.wait_for_url(re.compile(r"/drafts/pods/[0-9a-f-]{36}/$"))
        expect(page.locator("#conn")).to_have_text("live")
        page.click("#start-button")
        expect(page.locator("#pack .card-tile").first).to_be_visible()
        page.locator("#pack .card-tile button:not([disabled])").first.click()  # one pick by hand...
        draft = Draft.objects.get(kind="online")
        expect(page.locator("#pool-count")).to_have_text("(1)")
        finish(draft)  # ...the other 41 by the pod service, as the socket would make them (in this process: reload)
        page.reload()
        expect(page.locator("#done")).to_be_visible()

        # a card of the auto-built deck the engine cannot play: the builder names it and swaps it out
        seat = draft.seat_set.get(seat=0)
        card = next(n for n, _ in rounds.person_deck(seat) if n not in BASIC_FOR_COLOR.values())
        EngineCard.objects.filter(card__name=card).update(supported=False)
        page.click("#build-link")
        page.wait_for_url(re.compile(r"/build/$"))
        expect(page.locator("#engine-notice")).to_be_visible()
        expect(page.locator("#engine-cards")).to_have_text(card)
        page.click("#engine-swap")
        expect(page.locator("#engine-notice")).to_be_hidden()
        expect(page.locator("#builder-message")).to_contain_text(f"{card} → ")
        expect(page.locator("#main-count")).to_have_text("40")
        page.click("#save-deck")
        expect(page.locator("#saved-deck-link")).to_be_visible()

        page.goto(f"{server}/drafts/pods/{draft.pk}/")
        expect(page.locator("#play")).to_be_visible()
        expect(page.locator("#play-problems")).to_have_count(0)  # every card of the deck is supported
        page.select_option("#round-form select[name=level]", "engine:VeryEasy")
        page.click("#round-form button[type=submit]")
        page.wait_for_url(re.compile(r"/games/[0-9a-f-]{36}/$"))
        expect(page.locator("#conn")).to_have_text("live")
        rnd = DraftRound.objects.get()
        assert card not in {n for n, _ in rnd.game.human_deck}
        assert rnd.number == 1 and rnd.level == "engine:VeryEasy" and rnd.game.human_deck_name.startswith("Ana")

        # advice: on through single-choice decisions until there is a choice, then the advisor's pick is played
        for _ in range(12):
            if page.locator("#actions .action").count() > 1:
                break
            page.locator("#actions .action").first.click()
            page.wait_for_timeout(300)
        expect(page.locator("#advice-status")).to_have_attribute("data-done", "yes", timeout=120_000)
        best = page.locator("#advice-action").inner_text()
        assert best
        page.locator("#advice-play").click()
        expect(page.locator("#log")).to_contain_text("You: " + best.split(" (")[0])

        page.click("#concede")
        page.click("#concede-yes")
        expect(page.locator("#review-link")).to_be_visible()
        page.locator("#review-link a").click()
        page.wait_for_url(re.compile(r"/games/[0-9a-f-]{36}/review/$"))
        assert page.locator("h1").count()

        page.goto(f"{server}/drafts/pods/{draft.pk}/")
        row = page.locator("#rounds tr[data-round='1']")
        expect(row).to_contain_text("lost")
        expect(row.locator("a.review-link")).to_be_visible()
        expect(page.locator("#round-form button[type=submit]")).to_have_text("Play round 2")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "pod-rounds.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})  # a phone: the results table scrolls in its box
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=str(ARTIFACTS / "pod-rounds-phone.png"), full_page=True)
        assert not problems, problems
    except Exception:
        log = tmp_path / "daphne.log"
        print(log.read_text()[-6000:] if log.exists() else "(no Daphne log)")
        raise
    finally:
        context.close()
        connections.close_all()
