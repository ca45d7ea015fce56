"""Deck completion against real processes: Daphne (+ a Celery worker on the services stack) and chromium."""
from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.request
from pathlib import Path

import pytest
import websockets
from django.conf import settings

from tests.browser import ARTIFACTS, CHROMIUM


@pytest.fixture
def runner(request):
    """What runs the completion task: the request itself (embedded) or a real Celery worker (services)."""
    if settings.STACK == "services":
        return request.getfixturevalue("celery_worker_process")
    return None


def post_json(url: str, payload: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def follow(url: str, timeout: float = 90.0) -> list[dict]:
    messages = []
    async with websockets.connect(url, origin="http://127.0.0.1", open_timeout=10) as ws:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=deadline - time.monotonic()))
            messages.append(msg)
            if msg["type"] == "job" and msg["job"]["status"] in ("done", "failed"):
                return messages
    raise AssertionError(f"the job did not finish: {messages[-3:]}")


def test_completion_job_over_http_and_websocket(tiny_models, daphne_server, runner):
    status, body = post_json(f"{daphne_server}/api/decks/complete",
                             {"format": "modern", "text": "4 Lightning Bolt\n4 Goblin Guide", "seed": 5})
    assert status == 202, body
    messages = asyncio.run(follow(daphne_server.replace("http://", "ws://") + body["ws"]))
    assert all(m["v"] == 1 for m in messages)
    final = messages[-1]["job"]
    assert final["status"] == "done", final
    assert sum(c for _, c in final["result"]["main"]) == 60 and sum(c for _, c in final["result"]["side"]) == 15
    progress = [m["job"]["progress"] for m in messages]
    assert progress == sorted(progress)  # progress only moves forward
    from decks.models import CompletionJob

    assert CompletionJob.objects.get(pk=body["id"]).deck.main_count == 60


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as resp:
        return json.loads(resp.read())


def test_concurrent_completion_requests_all_finish(tiny_models, daphne_server, runner):
    """Several requests at once (batched by the worker on the services stack): each job gets its own deck."""
    from concurrent.futures import ThreadPoolExecutor

    payloads = [{"format": "modern", "text": "4 Lightning Bolt\n4 Goblin Guide", "seed": i} for i in range(4)]
    payloads.append({"format": "legacy", "text": "4 Counterspell\n10 Island", "seed": 9})
    with ThreadPoolExecutor(len(payloads)) as pool:
        answers = list(pool.map(lambda p: post_json(f"{daphne_server}/api/decks/complete", p), payloads))
    assert all(status == 202 for status, _ in answers), answers
    ids = [body["id"] for _, body in answers]
    deadline, finals = time.monotonic() + 120, {}
    while len(finals) < len(ids) and time.monotonic() < deadline:
        for job_id in ids:
            if job_id not in finals:
                body = get_json(f"{daphne_server}/api/decks/complete/{job_id}")
                if body["status"] in ("done", "failed"):
                    finals[job_id] = body
        time.sleep(0.2)
    assert len(finals) == len(ids), f"unfinished: {set(ids) - set(finals)}"
    assert all(b["status"] == "done" for b in finals.values()), finals
    assert all(sum(c for _, c in b["result"]["main"]) == 60 for b in finals.values())
    assert len({b["deck"] for b in finals.values()}) == len(ids)  # one deck per job, none run twice
    legacy = dict(map(tuple, finals[ids[-1]]["result"]["main"]))
    assert legacy["Counterspell"] == 4 and finals[ids[-1]]["format"] == "legacy"


def test_bad_completion_request_over_http(tiny_models, daphne_server):
    status, body = post_json(f"{daphne_server}/api/decks/complete", {"format": "modern", "text": "4 Lightnig Bolt"})
    assert status == 400 and "Lightning Bolt" in body["errors"][0]["suggestions"]


def completion_page(browser, server: str):
    """The completion form in a new page, and the list its script errors are collected in."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(60_000)
    problems = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.goto(f"{server}/decks/complete/")
    return page, problems


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")
def test_complete_a_deck_in_the_browser(tiny_models, daphne_server, runner, browser):
    from playwright.sync_api import expect

    page, problems = completion_page(browser, daphne_server)
    expect(page.locator("h1")).to_have_text("Complete a deck")
    page.fill("textarea[name=text]", "4 Lightnig Bolt\n4 Goblin Guide")
    page.select_option("select[name=format]", "modern")
    page.click("button[type=submit]")
    expect(page.locator("#line-errors")).to_contain_text("Unknown card")
    page.click("button.suggestion[data-suggestion='Lightning Bolt']")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/decks/complete/[0-9a-f-]{36}/$"))
    expect(page.locator("h1")).to_have_text("Completed Modern deck")
    expect(page.get_by_test_id("main-count")).to_have_text("60")
    expect(page.get_by_test_id("side-count")).to_have_text("15")
    expect(page.locator(".tag-mine").first).to_be_visible()
    expect(page.locator(".curve .curve-bar")).to_have_count(8)
    # the default (masked) model shows the decks it drew on, linked, and how sure it was of each card
    expect(page.locator("#job-sources li a").first).to_have_attribute("href", re.compile(r"^/decks/\d+/$"))
    assert page.locator("meter").count() >= 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "completion.png"), full_page=True)
    assert problems == []


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")
def test_complete_from_a_collection_in_the_browser(burn_corpus, daphne_server, runner, browser):
    """Issue 36's Burn core from a 46-card collection (a bad collection line is an inline error first): a 60-card
    deck with 17-24 lands, its open slots marked not owned, no basic land in the sideboard, and the 'missing' table
    with owned copies subtracted; at 1280 and at 390 px (nothing wider than the phone)."""
    from playwright.sync_api import expect

    page, problems = completion_page(browser, daphne_server)
    page.fill("textarea[name=text]", "4 Lightning Bolt\n4 Goblin Guide\n4 Monastery Swiftspear")
    page.select_option("select[name=format]", "modern")
    page.click("details.collection summary")
    page.fill("textarea[name=collection]", "4 Lightning Bolt\n4 Lava Spikke\n")
    page.click("button[type=submit]")
    expect(page.locator("#line-errors")).to_contain_text("Collection, line 2: Unknown card")
    page.fill("textarea[name=collection]", "4 Lightning Bolt\n4 Goblin Guide\n4 Monastery Swiftspear\n20 Mountain\n"
                                           "4 Lava Spike\n4 Rift Bolt\n2 Skewer the Critics\n")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/decks/complete/[0-9a-f-]{36}/$"))
    expect(page.locator("h1")).to_have_text("Completed Modern deck")
    expect(page.get_by_test_id("main-count")).to_have_text("60")
    lands = page.locator("#main-heading ~ .type-group[data-type='Land'] h3 .muted").inner_text()
    assert 17 <= int(lands.strip("()")) <= 24, lands
    side = page.locator("#side-heading ~ .type-group .card-rows li > a").all_inner_texts()
    assert not {"Mountain", "Island", "Plains", "Swamp", "Forest"} & set(side), side
    expect(page.locator("#collection-notes")).to_contain_text("not owned")
    expect(page.locator("#collection-notes")).to_contain_text("sideboard holds")
    assert page.locator("#main-heading ~ .type-group .tag-not-owned").count() >= 1
    rows = {r.locator("td").nth(0).inner_text(): [int(r.locator("td").nth(k).inner_text()) for k in (1, 2, 3)]
            for r in page.locator("#missing-table tbody tr").all()}
    assert rows and all(gap == wanted - have > 0 for wanted, have, gap in rows.values()), rows
    if "Skewer the Critics" in rows:
        assert rows["Skewer the Critics"][1] == 2
    assert "Lightning Bolt" not in rows and "Lava Spike" not in rows
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "completion_collection.png"), full_page=True)
    phone = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    try:
        mobile = phone.new_page()
        mobile.goto(page.url)
        expect(mobile.locator("#missing-table")).to_be_visible()
        expect(mobile.locator(".tag-not-owned").first).to_be_visible()
        mobile.screenshot(path=str(ARTIFACTS / "completion_collection_390.png"), full_page=True)
        wide = mobile.evaluate("[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right"
                               " > 391).slice(0, 5).map(e => e.tagName + '.' + e.className)")
        assert mobile.evaluate("document.documentElement.scrollWidth") <= 390, wide
    finally:
        phone.close()
    assert problems == []


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install chromium)")
def test_archetype_tabs_in_the_browser(two_archetypes_corpus, daphne_server, runner, browser):
    """Legacy Lightning Bolt fits Burn and blue-red control: one tab per archetype, one panel shown at a time, at
    1280 and at 390 px."""
    from playwright.sync_api import expect

    page, problems = completion_page(browser, daphne_server)
    page.fill("textarea[name=text]", "4 Lightning Bolt")
    page.select_option("select[name=format]", "legacy")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/decks/complete/[0-9a-f-]{36}/$"))
    tabs = page.locator("#archetype-tabs [role=tab]")
    expect(tabs).to_have_count(2)
    expect(page.locator("#arch-panel-1")).to_be_visible()
    expect(page.locator("#arch-panel-2")).to_be_hidden()
    tabs.nth(1).click()
    expect(page.locator("#arch-panel-2")).to_be_visible()
    expect(page.locator("#arch-panel-1")).to_be_hidden()
    expect(tabs.nth(1)).to_have_attribute("aria-selected", "true")
    tabs.nth(1).press("ArrowRight")
    expect(tabs.nth(0)).to_have_attribute("aria-selected", "true")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "completion_archetypes.png"), full_page=True)
    phone = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    try:
        mobile = phone.new_page()
        mobile.goto(page.url)
        expect(mobile.locator("#archetype-tabs [role=tab]").first).to_be_visible()
        mobile.screenshot(path=str(ARTIFACTS / "completion_archetypes_390.png"), full_page=True)
        assert mobile.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        phone.close()
    assert problems == []
