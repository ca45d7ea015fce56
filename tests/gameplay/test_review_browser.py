"""Playwright + Debian's chromium against a real Daphne: the review page of a finished game, started with its
button, followed while the job runs (a real worker on the services stack), then the win-estimate plot and the
mistakes; nothing of the AI's hidden hand on the page."""
from __future__ import annotations

import os

import pytest

from tests.browser import CHROMIUM
from tests.gameplay.play_fixtures import advice_worker, game_env  # noqa: F401  (fixtures)
from tests.gameplay.test_play_browser import _open_page
from tests.gameplay.test_review import finished_game
from tests.leaks import assert_no_leak

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.timeout(400),
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing")]


def test_review_a_finished_game_in_the_browser(game_env, advice_worker, monkeypatch, request, browser,  # noqa: F811
                                               django_user_model, tmp_path):
    from django.conf import settings
    from django.test import Client
    from playwright.sync_api import expect

    for name, value in (("GAME_REVIEW_MAX_DECISIONS", "2"), ("GAME_REVIEW_SIMULATIONS", "1"),
                        ("GAME_REVIEW_SECONDS", "4")):
        monkeypatch.setenv(name, value)  # the served process starts the review with its own settings
    server = request.getfixturevalue("daphne_server")
    user = django_user_model.objects.create_user("ana", password="pw-123456")
    row, secret = finished_game(owner=user)
    assert secret
    client = Client()
    client.force_login(user)
    with _open_page(browser, tmp_path) as (page, problems):
        page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "url": server,
                                   "value": client.cookies[settings.SESSION_COOKIE_NAME].value}])
        page.goto(f"{server}/games/")
        page.click(f"a[href='/games/{row.pk}/review/']")
        expect(page.locator("#review-start")).to_be_visible()
        page.click("#review-start", timeout=300_000)  # on the embedded stack the review runs inside this request
        expect(page.locator("#review-plot svg")).to_be_visible(timeout=300_000)  # polled, then reloaded when done
        expect(page.locator("#mistake-count")).to_contain_text("decisions reviewed")
        assert page.locator("#review-plot circle").count() >= 2  # a point per turn
        assert_no_leak(page.content(), secret, "the review page")
        assert not problems, problems
