"""Every page a person can reach, at a phone's width (390 px) and a desktop's (1280 px), in one browser against one
Daphne (issue 35): the page is no wider than the window, every navigation link can be reached (on screen, or
through the Menu button), no template syntax shows as text, every wide table scrolls inside its own box with
readable headings, and the pod's suggestion badges leave the card names uncovered. A 500-line garbage paste into
the completion form lists 10 problems and how many more, with the form and the pasted text still there.
Screenshots of each page at each width go to test-artifacts/pages/."""
from __future__ import annotations

import datetime as dt
import os
import re

import pytest

from tests.browser import ARTIFACTS, CHROMIUM
from tests.drafts.test_pod_browser import open_pod
from tests.gameplay.conftest import card_records, game_catalogue, real_data_dir_session  # noqa: F401  (fixtures)
from tests.gameplay.play_fixtures import game_env  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300),
              pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing")]

WIDTHS = {"phone": (390, 844), "desktop": (1280, 900)}
SHOTS = ARTIFACTS / "pages"
# a heading that is a raw key: snake_case or dotted words (a decimal point such as 1.0 is fine)
RAW_KEY = re.compile(r"[A-Za-z]_[A-Za-z]|[A-Za-z]\.[A-Za-z]")

LAYOUT = """() => {
  const width = window.innerWidth;
  const text = document.body.innerText;
  const tables = [...document.querySelectorAll('main table')].map(table => {
    let box = table.parentElement, scrolls = false;
    for (; box && box !== document.body; box = box.parentElement) {
      if (['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) { scrolls = true; break; }
    }
    return {id: table.id || table.className, scrolls, right: table.getBoundingClientRect().right,
            heads: [...table.querySelectorAll('th')].map(th => th.textContent.trim())};
  });
  // what sticks out on the right, innermost first (for the failure message)
  const name = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
  const wide = [...document.body.querySelectorAll('*')].filter(el => el.getBoundingClientRect().right > width + 0.5
    && ![...el.children].some(c => c.getBoundingClientRect().right > width + 0.5)).slice(0, 6)
    .map(el => name(el) + ' (' + Math.round(el.getBoundingClientRect().right) + ' px)');
  return {width, scrollWidth: document.documentElement.scrollWidth, tables, wide,
          template: (text.match(/.{0,40}(\\{#|\\{\\{|\\{%).{0,40}/) || [null])[0]};
}"""

# for every tile with a suggestion badge: does the badge's box cross the card name's (or the card image's)?
BADGES = """() => [...document.querySelectorAll('#pack .card-button')].filter(b => b.querySelector('.rank')).map(b => {
  const r = b.querySelector('.rank').getBoundingClientRect();
  return [...b.querySelectorAll('.card-name, img')].some(el => {
    const n = el.getBoundingClientRect();
    return n.width > 1 && r.left < n.right && n.left < r.right && r.top < n.bottom && n.top < r.bottom;
  });
})"""


NAV = {"/cards/", "/decks/", "/decks/complete/", "/drafts/", "/drafts/play/", "/games/", "/games/gauntlet/", "/models/"}


def _nav_problems(page, name: str, width: int) -> list[str]:
    """Every navigation link on screen, after opening the Menu button when they are folded away (then closed)."""
    links = page.locator("nav.site-nav a")
    toggle = page.locator(".nav-toggle")
    opened = False
    if not links.first.is_visible():
        if not toggle.is_visible():
            return [f"{name}: the navigation is hidden and there is no Menu button"]
        toggle.click()
        opened = True
    problems, hrefs = [], set()
    for i in range(links.count()):
        link = links.nth(i)
        box = link.bounding_box() if link.is_visible() else None
        if not box or box["x"] < 0 or box["x"] + box["width"] > width + 0.5:
            problems.append(f"{name}: nav link {link.text_content().strip()!r} is not on screen ({box})")
        hrefs.add(link.get_attribute("href"))
    if NAV - hrefs:
        problems.append(f"{name}: the navigation lacks {sorted(NAV - hrefs)}")
    if opened:
        if toggle.get_attribute("aria-expanded") != "true":
            problems.append(f"{name}: the Menu button does not say it is open")
        toggle.click()
        if links.first.is_visible():
            problems.append(f"{name}: the Menu button does not close the navigation")
    return problems


def _layout_problems(page, name: str, width: int) -> list[str]:
    got = page.evaluate(LAYOUT)
    assert got["width"] == width
    problems = []
    if got["scrollWidth"] > width:
        problems.append(f"{name}: the page is {got['scrollWidth']} px wide in a {width} px window; "
                        f"sticking out: {got['wide']}")
    if got["template"] is not None:
        problems.append(f"{name}: template syntax shown as text: {got['template']!r}")
    for table in got["tables"]:
        if not table["scrolls"] and table["right"] > width + 0.5:
            problems.append(f"{name}: table {table['id']!r} runs off the page")
        raw = [h for h in table["heads"] if RAW_KEY.search(h)]
        if raw:
            problems.append(f"{name}: raw keys as headings: {raw}")
    return problems


def _world(django_user_model, game_env):  # noqa: F811
    """What the pages show: decks (a corpus deck, a person's), a draft set, model versions, a live game and a
    finished one with its review, and a staff account; -> (staff user, {page name: path})."""
    from decks.models import Card, Deck, DeckCard
    from gameplay.models import PlayedGame
    from gameplay.play import session
    from gameplay.review.models import GameReview
    from ml import registry
    from tests.drafts.conftest import make_set
    from tests.gameplay.conftest import sample_deck_lists
    from tests.ml.conftest import archetype_config, tiny_tensors

    staff = django_user_model.objects.create_user("ada", password="pw-staff-123", is_staff=True)
    cards = {c.name: c for c in Card.objects.all()}
    lists = sample_deck_lists()
    decks = []
    for name, fmt, seen in (("mono_red_aggro", "standard", dt.date(2026, 7, 14)),
                            ("mono_white_weenie", "pauper", dt.date(2025, 4, 12)),
                            ("dimir_terror", "pauper", None)):
        deck = Deck.objects.create(name=name.replace("_", " ").title(), format=fmt, list_hash=name, public=True,
                                   source="corpus" if seen else "user", owner=None if seen else staff,
                                   first_seen=seen, last_seen=seen, occurrences=3 if seen else 1, main_count=60,
                                   side_count=0)
        DeckCard.objects.bulk_create([DeckCard(deck=deck, card=cards[c], board="main", count=n)
                                      for c, n in lists[name]["main"] if c in cards])
        decks.append(deck)
    make_set("TST")
    metrics = {"held_out": {"all": {"top1": 0.512, "top3": 0.8, "mean_rank": 2.1, "picks": 4200},
                            "unforced": {"top1": 0.43, "top3": 0.74, "mean_rank": 2.6, "picks": 3100}},
               "train_seconds": 12.5, "val_loss": 1.23, "train_picks": 90000, "val_top1": 0.5, "refit_picks": 1000}
    for scope in ("archetype:TST", "archetype:BLB"):
        registry.save_version("draft_bot", tiny_tensors(), archetype_config(), scope=scope, metrics=metrics,
                              data_snapshot={"train_rows": 900, "logs": "drafts of TST"})
    live, _ = session.create_game("sample:mono_red_aggro", "sample:mono_white_weenie", "engine:VeryEasy",
                                  user=staff, first="you", seed=8)
    done = PlayedGame.objects.create(owner=staff, human_deck_name="Mono red", human_deck=[], ai_deck_name="Dimir",
                                     ai_deck=[], opponent="engine:VeryEasy", human_seat=0, seed=1, first_player=0,
                                     moves=[], decisions=0, state="{}", status="finished", result={"winner": 1})
    result = {"seat": 0, "turns": [{"turn": t, "estimate": e} for t, e in ((1, .5), (2, .42), (3, .3))],
              "mistakes": 1, "reviewed": 1, "not_reviewed": 0,
              "settings": {"level": "flat", "seconds": 6.0, "simulations": 2, "max_decisions": 40, "margin": 0.1,
                           "determinizations": 4},
              "decisions": [{"move": 3, "turn": 1, "phase": "PreCombatMain", "played": "Pass priority",
                             "played_value": 0.2, "best": "Play Mountain", "best_value": 0.45, "loss": 0.25,
                             "mistake": True, "line": ["Play Mountain", "Cast Monastery Swiftspear"],
                             "alternatives": [], "estimate": 0.45, "forced": False}]}
    GameReview.objects.create(game=done, status="done", progress=1.0, result=result, settings=result["settings"])
    card = cards["Monastery Swiftspear"] if "Monastery Swiftspear" in cards else next(iter(cards.values()))
    return staff, {
        "home": "/", "cards": "/cards/?q=a", "card": f"/cards/{card.pk}/", "decks": "/decks/",
        "deck": f"/decks/{decks[0].pk}/", "my-decks": "/decks/mine/", "import": "/decks/import/",
        "completion": "/decks/complete/", "drafts": "/drafts/", "play": "/drafts/play/", "games": "/games/",
        "game": f"/games/{live.pk}/", "review": f"/games/{done.pk}/review/", "models": "/models/",
        "gauntlet": "/games/gauntlet/",
    }


def _start_pod(page, server) -> str:
    """A pod of the staff person and a bot, started: its page shows a pack with the bot's suggestions."""
    from playwright.sync_api import expect

    open_pod(page, server, 2, "Ada", consent="no")
    expect(page.locator("#conn")).to_have_text("live")  # the start goes over the pod's socket
    page.click("#start-button")
    expect(page.locator("#pack .rank").first).to_be_visible()
    return page.url.removeprefix(server)


def _garbage_paste(page, server, width: int, height: int) -> list[str]:
    """500 lines nobody can read: 10 listed, 'and 490 more', the pasted text kept and the form on the first screen."""
    from playwright.sync_api import expect

    garbage = "\n".join(f"{n} zz{n:03d}qq" for n in range(1, 501))
    page.goto(f"{server}/decks/complete/")
    page.fill("#complete-form textarea[name=text]", garbage)
    page.click("#complete-form button[type=submit]")
    expect(page.locator("#line-errors")).to_be_visible()
    assert page.locator("#line-errors .line-error").count() == 10
    expect(page.locator("[data-testid=more-errors]")).to_contain_text("490 more problems on lines 11–500")
    assert page.input_value("#complete-form textarea[name=text]") == garbage
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / f"completion-errors-{width}.png"), full_page=True)
    box = page.locator("#complete-form textarea[name=text]").bounding_box()
    tall = page.evaluate("document.documentElement.scrollHeight")
    return ([f"garbage paste at {width} px: the textarea starts at {box['y']:.0f} px, below the first screen"]
            if box["y"] >= height else []) + ([f"garbage paste at {width} px: a {tall} px page"] if tall > 4 * height else [])


def test_every_page_fits_phone_and_desktop_widths(daphne_server, browser, django_user_model, game_env,  # noqa: F811
                                                  settings, tmp_path):
    from django.test import Client

    settings.MTG_MODEL_DIR = tmp_path / "models"
    staff, paths = _world(django_user_model, game_env)
    client = Client()
    client.force_login(staff)
    cookie = {"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
              "url": daphne_server}
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    for label, (width, height) in WIDTHS.items():
        context = browser.new_context(viewport={"width": width, "height": height})
        context.add_cookies([cookie])
        # the advisor off (as a player may set it): the game page then asks for no advice, whose search would take
        # the CPU from the pages after it
        context.add_init_script("localStorage.setItem('game-advice-auto', 'off')")
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.on("pageerror", lambda exc: problems.append(f"script error: {exc}"))
        try:
            if "pod" not in paths:
                paths["pod"] = _start_pod(page, daphne_server)
            for name, path in paths.items():
                page.goto(f"{daphne_server}{path}")
                where = f"{name} at {width} px"
                problems += _layout_problems(page, where, width) + _nav_problems(page, where, width)
                if name == "pod":
                    covered = page.evaluate(BADGES)
                    assert covered, "the pod shows no suggestion badge"
                    if any(covered):
                        problems.append(f"{where}: {sum(covered)} suggestion badges cover a card's name")
                page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
            problems += _garbage_paste(page, daphne_server, width, height)
        finally:
            context.close()
    assert not problems, "\n".join(problems)
