"""Playwright + Debian's chromium against a real Daphne: every choice says what it does (Manifold Mouse's modes on the
buttons, in the advice and in the log; two same-named attackers told apart, the card lit up on hover; advice for a
decision gone never playable), and a clear end (a conceded game shows its final board and, live, the link to its
review, which runs); the pages fit a 390 px phone and a 1280 px screen."""
from __future__ import annotations

import os
import re

import pytest

from tests.browser import ARTIFACTS, CHROMIUM
from tests.gameplay.play_fixtures import advice_worker, game_env  # noqa: F401  (fixtures)
from tests.gameplay.test_play_browser import _open_page, _start_game

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.timeout(500),
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing")]

MICE = {"name": "Mice", "main": [["Manifold Mouse", 20], ["Mountain", 20]]}
PLAINS = {"name": "Plains", "main": [["Plains", 40]]}


def _drive(row, view, stop, steps: int = 300):
    """Play the person's side from the server (keep, lands, Manifold Mouse without offspring, no attack, else pass)
    until ``stop(view)``; the view then."""
    from gameplay.play import session

    for _ in range(steps):
        if view["status"] != "playing" or stop(view):
            return view
        actions = view["actions"]
        pick = (next((a for a in actions if a["label"] in ("Keep hand", "No attack")), None)
                or next((a for a in actions if a["type"] in ("PlayLand", "CastSpell")), None)
                or next((a for a in actions if a["label"].startswith("Don't pay")), None)
                or next((a for a in actions if a["type"] == "PassPriority"), actions[0]))
        view = session.human_action(row.pk, row.human_seat, pick["key"], expected_revision=view["revision"]).view
    raise AssertionError(f"not reached in {steps} steps: {[a['label'] for a in view['actions']]}")


def _fits(page, name: str) -> None:
    """No horizontal overflow at 390 px and at 1280 px (screenshots of both in the test artifacts)."""
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        over = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert over <= 0, f"{page.url} is {over} px wider than a {width} px window"
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)


def _signed_in(page, server, django_user_model, name):
    from django.conf import settings
    from django.test import Client

    user = django_user_model.objects.create_user(name, password="pw-123456")
    client = Client()
    client.force_login(user)
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "url": server,
                               "value": client.cookies[settings.SESSION_COOKIE_NAME].value}])
    return user


def test_every_choice_says_what_it_does(game_env, advice_worker, daphne_server, browser, tmp_path,  # noqa: F811
                                        django_user_model):
    from playwright.sync_api import expect

    from gameplay.models import PlayedGame
    from gameplay.play import session

    with _open_page(browser, tmp_path) as (page, problems):
        user = _signed_in(page, daphne_server, django_user_model, "mia")
        row, out = session.create_game(MICE, PLAINS, "engine:VeryEasy", first="you", user=user, seed=5)
        view = _drive(row, out.view, lambda v: v["board"]["prompt"]["type"] == "ChooseOneOfBranch")
        page.goto(f"{daphne_server}/games/{row.pk}/")
        expect(page.locator("#conn")).to_have_text("live")
        # Manifold Mouse's beginning-of-combat trigger: the engine's mode texts, on the buttons...
        buttons = page.locator("#actions .action")
        expect(buttons).to_have_count(2)
        modes = buttons.all_inner_texts()
        assert [re.sub(r"\W+$", "", m).split(": ", 1)[1] for m in modes] == ["gain Double Strike", "gain Trample"], modes
        # ...in the advice (the recommendation and each row of the vote)...
        expect(page.locator("#advice-status")).to_have_attribute("data-done", "yes", timeout=120_000)
        expect(page.locator("#advice-action")).to_contain_text("Manifold Mouse: gain ")
        rows = page.locator("#advice-alternatives tr td:first-child").all_inner_texts()
        assert sorted(r.split(": ", 1)[1] for r in rows) == ["gain Double Strike", "gain Trample"], rows
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "game-modes.png"), full_page=True)
        # ...and in the log
        page.get_by_role("button", name=re.compile("gain Trample")).click()
        expect(page.locator("#log")).to_contain_text("You: Manifold Mouse: gain Trample")
        expect(page.locator("#actions .action").first).to_be_enabled(timeout=60_000)

        # Two Manifold Mice that can attack: two buttons told apart by the tag their cards show, lit on hover
        row = PlayedGame.objects.get(pk=row.pk)
        view = _drive(row, session.view_of(row), lambda v: sum(
            bool(re.fullmatch(r"Attack with Manifold Mouse #\d", a["label"])) for a in v["actions"]) >= 2)
        page.reload()
        expect(page.locator("#conn")).to_have_text("live")
        one = page.locator("#actions .action", has_text=re.compile(r"^Attack with Manifold Mouse #1\W*$"))
        two = page.locator("#actions .action", has_text=re.compile(r"^Attack with Manifold Mouse #2\W*$"))
        expect(one).to_have_count(1)
        expect(two).to_have_count(1)
        target = two.get_attribute("data-objects")
        card = page.locator(f'#my-battlefield .game-card[data-id="{target}"]')
        expect(card.locator(".card-tag")).to_have_text("#2")
        two.hover()
        expect(card).to_have_class(re.compile(r"\blit\b"))
        expect(page.locator("#my-battlefield .game-card.lit")).to_have_count(1)
        page.mouse.move(0, 0)
        expect(page.locator(".game-card.lit")).to_have_count(0)

        # Advice is tied to its decision's revision: one for a decision gone, or naming an action no longer
        # offered, is never shown with a live "Play it"; this decision's, naming an offered action, is.
        page.locator("#advice-auto").uncheck()
        page.click("#advice-stop")
        key = two.get_attribute("data-key")
        rec = {"action": {"key": key, "type": "DeclareAttackers", "label": "Attack with Manifold Mouse #2"},
               "playable": True, "line": [], "win_estimate": None, "alternatives": [], "simulations": 0,
               "elapsed": 0.1, "algorithm": "vote", "forced": False, "workers": 1}

        def feed(revision, action_key):
            message = {"v": 1, "type": "advice", "game": str(row.pk), "revision": revision, "done": True,
                       "level": "vote", "position_estimate": None,
                       "recommendation": {**rec, "action": {**rec["action"], "key": action_key}}}
            page.evaluate("m => window.GAME.receive(m)", message)

        feed(view["revision"] - 1, key)
        expect(page.locator("#advice-play")).to_be_hidden()
        expect(page.locator("#advice-body")).to_be_hidden()
        feed(view["revision"], '{"data":{"index":0},"type":"ChooseBranch"}')
        expect(page.locator("#advice-play")).to_be_hidden()
        feed(view["revision"], key)
        expect(page.locator("#advice-play")).to_be_visible()
        _fits(page, "game-attackers")
        assert not problems, problems


def test_a_conceded_game_shows_its_final_board_and_a_live_review_link(game_env, advice_worker, monkeypatch,  # noqa: F811
                                                                      request, browser, tmp_path):
    from playwright.sync_api import expect

    from gameplay.models import PlayedGame

    for name, value in (("GAME_REVIEW_MAX_DECISIONS", "2"), ("GAME_REVIEW_COPIES", "4"), ("GAME_REVIEW_SETTLE", "3")):
        monkeypatch.setenv(name, value)  # the served process reviews with its own settings
    server = request.getfixturevalue("daphne_server")
    with _open_page(browser, tmp_path) as (page, problems):
        _start_game(page, server, "engine:VeryEasy")  # as a guest
        page.locator("#advice-auto").uncheck()
        page.get_by_role("button", name="Keep hand").click()
        land = page.locator("#actions .action[data-type=PlayLand]").first
        expect(land).to_be_enabled(timeout=60_000)
        land.click()
        expect(page.locator("#my-battlefield .game-card")).to_have_count(1, timeout=60_000)
        mine = page.locator("#my-battlefield .game-card").all_inner_texts()
        hand = page.locator("#my-hand .game-card").count()
        expect(page.locator("#review-link")).to_be_hidden()
        page.evaluate("window.__same_page = true")  # a reload would lose it
        page.click("#concede")
        page.click("#concede-yes")
        expect(page.locator("#result-panel")).to_be_visible(timeout=60_000)
        expect(page.locator("#result-text")).to_have_text("You conceded: the AI won.")
        expect(page.locator("#review-link")).to_be_visible()
        assert page.evaluate("window.__same_page === true")  # shown live, over the socket
        # the final board: the person's cards where they stood, not in the exile the engine moved them to
        assert page.locator("#my-battlefield .game-card").all_inner_texts() == mine
        expect(page.locator("#my-hand .game-card")).to_have_count(hand)
        expect(page.locator("#concede-box")).to_be_hidden()
        row = PlayedGame.objects.get()
        assert row.status == "finished" and row.result["conceded"] and row.final_board
        _fits(page, "game-conceded")

        page.click("#review-button")
        expect(page.locator("#review-start")).to_be_visible()
        page.click("#review-start", timeout=300_000)  # on the embedded stack the review runs inside this request
        expect(page.locator("#review-plot svg")).to_be_visible(timeout=300_000)
        expect(page.locator("#mistake-count")).to_contain_text("decisions reviewed")
        _fits(page, "game-conceded-review")
        page.goto(f"{server}/games/")
        expect(page.locator("#game-list")).to_contain_text("you conceded")
        expect(page.locator("#guest-note")).to_contain_text("Play this deck")
        _fits(page, "games-list")
        assert not problems, problems
