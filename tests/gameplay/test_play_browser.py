"""Playwright + Debian's chromium against a real Daphne: start a game from the form, click an action,
see the advisor's recommendation appear over the websocket, play it with one click; against a search
opponent, see your action and "The AI is thinking…" before its reply."""
from __future__ import annotations

import contextlib
import os
import re

import pytest

from tests.gameplay.play_fixtures import advice_worker, game_env  # noqa: F401  (fixtures)
from tests.browser import ARTIFACTS, CHROMIUM

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300),
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing")]


def _stack_ids(state: dict):
    """Object ids of the sources of what is on the stack (public)."""
    for entry in state.get("stack") or []:
        if isinstance(entry, dict) and (entry.get("source_id") or entry.get("id")) is not None:
            yield entry.get("source_id") or entry.get("id")


@contextlib.contextmanager
def _open_page(browser, tmp_path, init_script: str | None = None):
    """A browser page (30 s timeouts) and the list its JavaScript errors go to; on a failure the
    Daphne log is printed; the context and this thread's database connections are closed after."""
    from django.db import connections

    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    if init_script:
        context.add_init_script(init_script)
    page = context.new_page()
    page.set_default_timeout(30_000)
    problems = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    try:
        yield page, problems
    except Exception:
        log = tmp_path / "daphne.log"
        print(log.read_text()[-6000:] if log.exists() else "(no Daphne log)")
        raise
    finally:
        context.close()
        connections.close_all()


def _start_game(page, server: str, opponent: str) -> None:
    """Start mono-red (you, first) against mono-white from the /games/ form; wait for the live page."""
    from playwright.sync_api import expect

    page.goto(f"{server}/games/")
    page.select_option("select[name=deck]", "sample:mono_red_aggro")
    page.select_option("select[name=ai_deck]", "sample:mono_white_weenie")
    page.select_option("select[name=opponent]", opponent)
    page.select_option("select[name=first]", "you")
    page.click("#game-form button[type=submit]")
    page.wait_for_url(re.compile(r"/games/[0-9a-f-]{36}/$"))
    expect(page.locator("#conn")).to_have_text("live")


def test_play_a_game_with_the_advisor(game_env, advice_worker, daphne_server, browser, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    from gameplay.play import session
    from gameplay.models import PlayedGame

    with _open_page(browser, tmp_path) as (page, problems):
        _start_game(page, daphne_server, "engine:VeryEasy")
        expect(page.locator("#my-life")).to_have_text("20")
        expect(page.locator("#advice-level")).to_have_value("vote")  # the page's default level: the ensemble

        page.get_by_role("button", name="Keep hand").click()  # one click = one action
        expect(page.locator("#actions .action[data-type=MulliganDecision]")).to_have_count(0)
        expect(page.locator("#log")).to_contain_text("You: Keep hand")

        # Play on through single-choice decisions until the advisor has something to say.
        for _ in range(10):
            if page.locator("#actions .action").count() > 1:
                break
            page.locator("#actions .action").first.click()
            page.wait_for_timeout(300)
        expect(page.locator("#advice-status")).to_have_attribute("data-done", "yes", timeout=120_000)
        best = page.locator("#advice-action").inner_text()
        assert best, "no recommended action shown"
        expect(page.locator("#advice-alternatives tr").first).to_be_visible()
        # the table shows each action's share of the vote; the line below it, the copies and whether it searched
        expect(page.locator("#advice-alternatives tr.best td.vote-share")).to_contain_text("%")
        expect(page.locator("#advice-vote")).to_contain_text("honest copies")
        expect(page.locator("#actions .action.recommended")).to_have_count(1)
        win = page.locator("#advice-win-text").inner_text()
        assert win.endswith("%") or win == "uncertain"  # "uncertain" when the copies disagree
        # named as the shipped estimate's source ("whole-table regression, calibrated"), not always "value model"
        from gameplay.core.learning.value import DEFAULT_WEIGHTS, ValueModel  # noqa: PLC0415 test-only: the shipped file

        expect(page.locator("#advice-win-source")).to_contain_text(ValueModel.load(DEFAULT_WEIGHTS).shown_label)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "game-advice.png"), full_page=True)

        row = PlayedGame.objects.get()
        revision = row.revision
        page.locator("#advice-play").click()  # play the recommended action
        expect(page.locator("#log")).to_contain_text("You: " + best.split(" (")[0])
        html = page.content()  # before reading the row: the row may only be newer than the page
        row.refresh_from_db()
        assert row.revision > revision
        # What reached the browser holds none of the opponent's hidden cards. A name that was public
        # at some point is not hidden: a card in play, in a graveyard, in exile or on the stack, or one
        # the log showed the AI casting (Kor Skyfisher may return itself to its owner's hand). The
        # log's own redaction is tested in tests/gameplay/test_seatview.py.
        state = __import__("json").loads(row.state)["state"]
        objects = state["objects"]
        opp = next(p for p in state["players"] if p["id"] == 1)
        hidden = {objects[str(o)]["name"] for o in opp["hand"]} - {"Plains"}
        # an id with no object (an ability whose source has left the game) names nothing: skipping it can
        # only leave more names counted as hidden
        public = {objects[str(o)]["name"] for o in
                  state["battlefield"] + opp["graveyard"] + state["exile"] + list(_stack_ids(state))
                  if str(o) in objects}
        said = " ".join(e["text"] for e in row.log if e.get("who") == "ai")
        assert not [n for n in hidden - public if n in html and n not in said]

        # "Pass until my turn": one click, and the server passes for you until your next main phase
        # (or until the AI puts something on the stack, or you must decide something else).
        for _ in range(10):
            expect(page.locator("#actions .action").first).to_be_enabled()
            if page.locator("#pass-until").is_visible() or page.locator("#game-over").is_visible():
                break
            page.locator("#actions .action").first.click()
            page.wait_for_timeout(300)
        if page.locator("#pass-until").is_visible():
            row.refresh_from_db()
            before = row.revision
            page.get_by_role("button", name="Pass until my turn").click()
            expect(page.locator("#pass-until button").first).to_be_enabled(timeout=120_000)
            row.refresh_from_db()
            assert row.revision > before
            now = session.view_of(row)
            whose = "your turn" if now["board"]["active_player"] == now["you"] else "the AI's turn"
            expect(page.locator("#turn-info")).to_have_text(f"Turn {now['turn']} · {whose}")
            page.screenshot(path=str(ARTIFACTS / "game-pass-until.png"), full_page=True)
        assert not problems, problems


# Records every text the decision prompt shows, however briefly (a provisional view may be replaced by
# the AI's reply a moment later, before a poll could see it).
PROMPT_RECORDER = """
window.__prompts = [];
document.addEventListener("DOMContentLoaded", () => {
  const prompt = document.getElementById("decision-prompt");
  if (!prompt) return;
  new MutationObserver(() => window.__prompts.push(prompt.textContent))
    .observe(prompt, {childList: true, characterData: true, subtree: true});
});
"""


def test_against_a_search_opponent_your_action_shows_while_it_thinks(game_env, daphne_server, browser,  # noqa: F811
                                                                     tmp_path):
    from playwright.sync_api import expect


    with _open_page(browser, tmp_path, PROMPT_RECORDER) as (page, problems):
        _start_game(page, daphne_server, "search:fast")
        page.locator("#advice-auto").uncheck()  # this test is about the opponent, not the advisor

        # Play the first offered action until one hands the decision to the AI: the page must show
        # that action and "The AI is thinking…" before the AI's reply arrives.
        thought = False
        for _ in range(20):
            button = page.locator("#actions .action").first
            expect(button).to_be_enabled(timeout=120_000)
            label = button.inner_text()
            button.click()
            expect(page.locator("#actions .action").first).to_be_enabled(timeout=120_000)
            prompts = page.evaluate("window.__prompts")
            if "The AI is thinking…" in prompts:
                thought = True
                break
            page.evaluate("window.__prompts = []")
        assert thought, "'The AI is thinking…' never showed in 20 actions"
        assert "Waiting for the AI…" not in prompts  # a search opponent's wait is shown as thinking
        expect(page.locator("#log")).to_contain_text("You: " + label.split(" (")[0])
        expect(page.locator("#decision-prompt")).not_to_have_text("The AI is thinking…")  # the reply came
        assert not problems, problems
