"""Server-rendered pages with Django's test client (embedded stack; the catalogue fixture)."""
from __future__ import annotations

import html as html_lib
import re

import pytest
from django.conf import settings
from django.urls import reverse

from decks.core.decklist import parse_decklist
from decks.models import Card, Deck, DeckCard
from decks.services import card_index

pytestmark = pytest.mark.django_db
# Tasks run eagerly in the embedded stack; in the services stack a worker (absent from these tests) runs them.
EAGER = settings.STACK == "embedded"

GOOD_LIST = """\
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
14 Mountain // basics

Sideboard
4 Skullcrack
4 Path to Exile
2 Fire // Ice
3 Brazen Borrower
2 Jace, the Mind Sculptor
"""

PAUPER_LIST = "4 Lightning Bolt\n4 Lava Spike\n4 Rift Bolt\n4 Skewer the Critics\n44 Mountain\n"

BAD_LIST = """\
4 Goblin Guide
4 Monastery Swiftspear
4 Lightnig Bolt
20 Mountain
3 Qwzxv Plorb
"""


def names(response) -> list[str]:
    """Card names in a /cards/ result table."""
    return [html_lib.unescape(n) for n in re.findall(r'<a href="/cards/\d+/">([^<]+)</a>', response.content.decode())]


def search(client, **params):
    response = client.get(reverse("card-list"), params)
    assert response.status_code == 200
    return response


# --- every page renders --------------------------------------------------------------


def test_home_shows_counts_and_links(client, catalogue):
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Manaforge" in html
    assert 'data-testid="count-cards">23<' in html
    for url in ("/cards/", "/decks/", "/decks/import/", "/api/schema/"):
        assert f'href="{url}' in html
    assert 'name="q"' in html  # quick search
    assert f'data-testid="stack">{settings.STACK}<' in html  # footer shows the stack
    assert "/static/css/site.css" in html


def test_pages_render_on_empty_database(client):
    for url in ("/", "/cards/", "/decks/", "/decks/import/", "/accounts/login/"):
        assert client.get(url).status_code == 200, url
    assert client.get("/cards/999/").status_code == 404
    assert client.get("/decks/999/").status_code == 404


def test_card_page_shows_characteristics_legalities_and_faces(client, catalogue):
    card = Card.objects.get(name="Fire // Ice")
    response = client.get(reverse("card-detail", args=[card.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Fire // Ice" in html and "Instant" in html
    assert "Ice" in html  # the other face
    assert "MTGJSON" in html
    assert "Pauper" in html and "status-legal" in html
    assert 'class="pip pip-r"' in html


def test_card_page_lists_decks_playing_it(client, catalogue):
    deck = _import(client, GOOD_LIST, name="Boros Burn")
    card = Card.objects.get(name="Goblin Guide")
    html = client.get(reverse("card-detail", args=[card.pk])).content.decode()
    assert f'href="/decks/{deck.pk}/"' not in html  # unlisted until its owner makes it public
    make_public(client, deck)
    html = client.get(reverse("card-detail", args=[card.pk])).content.decode()
    assert f'href="/decks/{deck.pk}/"' in html and "Boros Burn" in html


# --- card search -----------------------------------------------------------------------


def test_search_by_name_is_accent_and_case_insensitive(client, catalogue):
    assert names(search(client, q="lim-dul")) == ["Lim-Dûl's Vault"]
    assert names(search(client, q="LIM-DÛL")) == ["Lim-Dûl's Vault"]
    assert names(search(client, q="bolt")) == ["Lightning Bolt", "Rift Bolt"]
    assert names(search(client, q="fire/ice")) == ["Fire // Ice"]


def test_name_search_ranks_exact_then_prefix_then_popular(client, catalogue):
    from decks.core.catalogue import card_record

    for name in ("Bolt", "Bolt Bend", "Emeritus of Conflict // Lightning Bolt"):
        Card.objects.create(**card_record(name, {"manaCost": "{R}", "type": "Instant"}, [], "oracle"))
    Card.objects.filter(name="Rift Bolt").update(deck_count=50)
    assert names(search(client, q="bolt")) == ["Bolt", "Bolt Bend", "Rift Bolt",
                                               "Emeritus of Conflict // Lightning Bolt", "Lightning Bolt"]
    # The exact card wins over a card that merely has a face of that name.
    assert names(search(client, q="lightning bolt"))[0] == "Lightning Bolt"
    assert names(search(client, q="bolt", sort="name"))[0] == "Bolt"


def test_search_by_type_matches_types_subtypes_and_supertypes(client, catalogue):
    creatures = names(search(client, type="creature"))
    assert set(creatures) == {"Goblin Guide", "Monastery Swiftspear", "Eidolon of the Great Revel",
                              "Relentless Rats", "Brazen Borrower // Petty Theft"}
    assert names(search(client, type="Goblin")) == ["Goblin Guide"]
    assert names(search(client, type="Legendary")) == ["Jace, the Mind Sculptor"]
    assert set(names(search(client, type="Basic Land"))) == {"Island", "Mountain", "Plains"}
    # whole words: "Land" does not match an Island by its subtype text only
    assert "Rift Bolt" not in names(search(client, type="Land"))


def test_search_by_colors_requires_all_chosen(client, catalogue):
    assert names(search(client, color=["U", "B"])) == ["Lim-Dûl's Vault"]
    assert names(search(client, color=["R", "U"])) == ["Fire // Ice"]
    colorless = set(names(search(client, color="C")))
    assert {"Black Lotus", "Mountain", "Sacred Foundry"} <= colorless
    assert "Lightning Bolt" not in colorless
    assert "Lightning Bolt" in names(search(client, color="R"))


def test_search_by_text_and_format(client, catalogue):
    assert set(names(search(client, text="ANY TARGET"))) == {"Lightning Bolt", "Rift Bolt", "Skewer the Critics"}
    pauper = set(names(search(client, format="pauper")))
    assert "Lightning Bolt" in pauper and "Goblin Guide" not in pauper
    assert "Black Lotus" in names(search(client, format="vintage"))  # restricted counts
    assert "Black Lotus" not in names(search(client, format="legacy"))  # banned does not
    combined = names(search(client, q="bolt", format="pioneer"))
    assert combined == []


def test_search_sorts(client, catalogue):
    by_mv = names(search(client, type="Creature", sort="mv"))
    assert by_mv.index("Goblin Guide") < by_mv.index("Relentless Rats")
    assert names(search(client, sort="popularity"))  # renders


@pytest.mark.parametrize("params, note", [
    ({"page": "abc"}, "is not a page number"),
    ({"page": "99999"}, "There is no page 99999"),
    ({"page": "-3"}, "There is no page -3"),
    ({"format": "narnia"}, "Unknown format"),
    ({"sort": "chaos"}, "Unknown sort"),
    ({"color": "Z"}, "Unknown colour"),
    ({"color": ["C", "R"]}, "Colorless cannot be combined"),
    ({"q": "x" * 5000}, "cut to"),
])
def test_bad_search_params_are_safe(client, catalogue, params, note):
    response = search(client, **params)
    assert note in response.content.decode()


def test_pagination_keeps_the_query(client, catalogue, monkeypatch):
    from decks import search as search_module

    # 50 per page by default; shrink the page so the 23-card fixture spans pages.
    monkeypatch.setattr(search_module, "PAGE_SIZE", 3)
    response = client.get(reverse("card-list"), {"type": "Instant", "page": "2"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "page 2 of" in html
    assert "type=Instant&amp;page=1" in html


# --- deck import -------------------------------------------------------------------------


def make_public(client, deck):
    response = client.post(reverse("deck-visibility", args=[deck.pk]), {"visibility": "public"})
    assert response.status_code == 302 and response["Location"] == reverse("deck-detail", args=[deck.pk])


def _import(client, text, name="", fmt=""):
    before = set(Deck.objects.values_list("id", flat=True))
    response = client.post(reverse("deck-import"), {"text": text, "name": name, "format": fmt})
    assert response.status_code == 302, response.content.decode()[:2000]
    deck = Deck.objects.exclude(id__in=before).get()
    assert response["Location"] == reverse("deck-detail", args=[deck.pk])
    return deck


def test_import_good_list_redirects_to_deck_page(client, catalogue):
    deck = _import(client, GOOD_LIST, name="Boros Burn", fmt="modern")
    assert (deck.main_count, deck.side_count, deck.format, deck.name) == (60, 15, "modern", "Boros Burn")
    if EAGER:
        assert deck.analysis and "modern" in deck.analysis["legal_in"]  # the task ran in the request
    fire = DeckCard.objects.get(deck=deck, card__name="Fire // Ice", board="main")
    assert fire.count == 2

    response = client.get(reverse("deck-detail", args=[deck.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Boros Burn" in html
    for group in ("Creature (12)", "Instant (10)", "Sorcery (16)", "Land (22)"):
        assert group.replace(" (", ' <span class="muted">(') in html, group
    assert 'class="curve"' in html
    assert 'aria-label="Mana value 1: 16 cards"' in html
    assert 'aria-label="Mana value 3: 12 cards"' in html
    if EAGER:
        assert "Legal in:" in html and "Modern:</strong> legal" in html
    else:
        assert "Checking legality…" in html
    assert "Sideboard" in html and "Jace, the Mind Sculptor" in html
    assert "export.txt?style=arena" in html and "export.txt?style=mtgo" in html
    assert 'class="pip pip-r"' in html


def test_import_bad_lines_show_inline_errors_and_save_nothing(client, catalogue):
    decks, rows = Deck.objects.count(), DeckCard.objects.count()
    response = client.post(reverse("deck-import"), {"text": BAD_LIST, "name": "Oops", "format": "modern"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Line 3:" in html
    assert "Unknown card &quot;Lightnig Bolt&quot;" in html
    assert "did you mean" in html and 'data-suggestion="Lightning Bolt"' in html
    assert "Line 5:" in html
    assert "4 Lightnig Bolt" in html  # the text is kept in the textarea
    assert "Nothing was saved" in html
    assert "2 lines could not be read." in html
    assert (Deck.objects.count(), DeckCard.objects.count()) == (decks, rows)


@pytest.mark.parametrize("text, message", [
    ("", "Paste a decklist"),
    ("   \n\n  ", "Paste a decklist"),
    ("4 Lightning Bolt\n" * 1300, "too long"),
    ("// just a comment\n", "No cards found"),
])
def test_import_empty_or_too_long_input_is_a_clear_error(client, catalogue, text, message):
    response = client.post(reverse("deck-import"), {"text": text, "format": ""})
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Deck.objects.count() == 0


def test_import_unknown_format_is_a_form_error(client, catalogue):
    response = client.post(reverse("deck-import"), {"text": "4 Lightning Bolt", "format": "narnia"})
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert Deck.objects.count() == 0


def test_import_survives_a_broker_outage(client, catalogue, monkeypatch):
    from decks import tasks

    def broken(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.analyze_deck, "delay", broken)
    deck = _import(client, GOOD_LIST)
    assert deck.analysis is None
    html = client.get(reverse("deck-detail", args=[deck.pk])).content.decode()
    assert "Checking legality…" in html
    assert "analysis is pending" in html
    assert 'data-state="pending"' in html


def test_import_owner_is_the_logged_in_user(client, catalogue, django_user_model):
    user = django_user_model.objects.create_user("jace", password="mind-sculptor-4")
    client.force_login(user)
    deck = _import(client, "20 Mountain\n20 Lightning Bolt\n20 Lava Spike")
    assert deck.owner == user


# --- deck list and export -----------------------------------------------------------------


def test_deck_list_filters_and_sorts(client, catalogue):
    modern = _import(client, GOOD_LIST, name="Modern Burn", fmt="modern")
    pauper = _import(client, PAUPER_LIST, name="Pauper Burn", fmt="pauper")
    for deck in (modern, pauper):
        make_public(client, deck)
    html = client.get(reverse("deck-list")).content.decode()
    assert html.index("Pauper Burn") < html.index("Modern Burn")  # newest first
    html = client.get(reverse("deck-list"), {"format": "modern"}).content.decode()
    assert "Modern Burn" in html and "Pauper Burn" not in html
    for params in ({"sort": "popularity"}, {"format": "nope"}, {"sort": "nope"}, {"page": "x"}, {"page": "1000"}):
        assert client.get(reverse("deck-list"), params).status_code == 200
    assert f'href="/decks/{modern.pk}/"' in html and pauper.pk


def test_newest_decks_are_the_ones_seen_or_saved_last_whatever_their_ids(client, catalogue, django_user_model):
    """As the corpus import stores them (issue 35): ids follow the file, not the dates. "Newest" is the date the list
    shows: a corpus deck's last tournament, a person's deck's day it was saved; on one day the newer list first."""
    import datetime as dt

    from django.utils import timezone

    owner = django_user_model.objects.create_user("liliana", password="pw-123456")

    def deck(name, last=None, first=None, saved=None):
        row = Deck.objects.create(name=name, format="modern", list_hash=name, public=True, occurrences=2,
                                  source="corpus" if last else "user", owner=None if last else owner,
                                  first_seen=first or last, last_seen=last)
        if saved:
            Deck.objects.filter(pk=row.pk).update(created=timezone.make_aware(dt.datetime.combine(saved, dt.time(9))))
        return row

    today = timezone.localdate()
    for row in (deck("Long-lived list", dt.date(2026, 7, 14), dt.date(2024, 2, 1)),
                deck("Saved today"),
                deck("Old list", dt.date(2025, 4, 12)),
                deck("New list", dt.date(2026, 7, 14), dt.date(2026, 7, 10)),
                deck("Saved last year", saved=dt.date(2025, 6, 1)),
                deck("Mid list", dt.date(2026, 1, 20))):
        assert row.pk
    expected = ["Saved today", "New list", "Long-lived list", "Mid list", "Saved last year", "Old list"]
    html = client.get(reverse("deck-list")).content.decode()
    assert [html.index(name) for name in expected] == sorted(html.index(name) for name in expected), html
    shown = re.findall(r'<time datetime="([0-9-]+)">([^<]+)</time>', html)
    assert [text for _, text in shown] == [today.isoformat(), "2026-07-14", "2026-07-14", "2026-01-20", "2025-06-01",
                                           "2025-04-12"]  # one format throughout
    assert all(attr == text for attr, text in shown)
    assert re.findall(r'<time datetime="([0-9-]+)"', client.get(reverse("deck-list"), {"sort": "newest"}).content.decode()) \
        == [attr for attr, _ in shown]
    home = client.get(reverse("home")).content.decode()
    assert [home.index(name) for name in expected[:5]] == sorted(home.index(name) for name in expected[:5])
    client.force_login(owner)
    mine = client.get(reverse("my-decks")).content.decode()
    assert mine.index("Saved today") < mine.index("Saved last year")


@pytest.mark.parametrize("style", ["arena", "mtgo"])
def test_export_round_trips_through_the_parser(client, catalogue, style):
    deck = _import(client, GOOD_LIST, name="Boros Burn")
    response = client.get(reverse("deck-export", args=[deck.pk]), {"style": style})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert "attachment" in response["Content-Disposition"]
    result = parse_decklist(response.content.decode(), card_index())
    assert result.ok, result.errors
    stored = {(dc.card.name, dc.board): dc.count for dc in deck.cards.select_related("card")}
    parsed = {(e.name, "main"): e.count for e in result.deck.main}
    parsed.update({(e.name, "side"): e.count for e in result.deck.side})
    assert parsed == stored


def test_export_unknown_style_is_400(client, catalogue):
    deck = _import(client, GOOD_LIST)
    assert client.get(reverse("deck-export", args=[deck.pk]), {"style": "xml"}).status_code == 400


def test_corpus_deck_page_shows_appearances_and_unresolved(client, catalogue):
    import datetime

    from decks.models import DeckAppearance

    deck = _import(client, GOOD_LIST)
    Deck.objects.filter(pk=deck.pk).update(source="corpus", occurrences=7, first_seen=datetime.date(2020, 1, 2),
                                           last_seen=datetime.date(2021, 3, 4), unresolved=[["Mystery Card", 2, "side"]])
    for i in range(25):
        DeckAppearance.objects.create(deck=deck, key=f"k{i}", date=datetime.date(2021, 1, 1 + i),
                                      event=f"Challenge {i}", result=f"{i}-0")
    html = client.get(reverse("deck-detail", args=[deck.pk])).content.decode()
    assert "7 times" in html
    assert "2020-01-02" in html and "2021-03-04" in html and "2021-01-25" in html  # one date format, as in the lists
    assert "Challenge 24" in html and "Challenge 0" not in html  # latest 20 of 25
    assert "latest 20 of 25" in html
    assert "Mystery Card" in html


def test_card_page_and_api_show_printings(client, catalogue):
    import datetime

    from decks.models import CardSet, Printing

    card = Card.objects.get(name="Lightning Bolt")
    m11 = CardSet.objects.create(code="M11", name="Magic 2011", release_date=datetime.date(2010, 7, 16))
    Printing.objects.create(card=card, card_set=m11, rarity="common", collector_number="146", is_booster=True)
    html = client.get(reverse("card-detail", args=[card.pk])).content.decode()
    assert "M11" in html and "Magic 2011" in html and "rarity-common" in html and "146" in html
    body = client.get(f"/api/cards/{card.pk}/").json()
    assert body["printings"] == [{"set": "M11", "set_name": "Magic 2011", "rarity": "common",
                                  "collector_number": "146", "is_booster": True, "arena_id": None}]
    assert 'data-testid="count-sets">1<' in client.get("/").content.decode()


def test_login_and_logout(client, django_user_model):
    django_user_model.objects.create_user("liliana", password="veil-of-sorrow-9")
    response = client.post("/accounts/login/", {"username": "liliana", "password": "veil-of-sorrow-9", "next": "/"})
    assert response.status_code == 302 and response["Location"] == "/"
    html = client.get("/").content.decode()
    assert "liliana" in html and "Log out" in html
    response = client.post("/accounts/logout/", {"next": "/cards/"})
    assert response.status_code == 302 and response["Location"] == "/cards/"
    assert "Log in" in client.get("/").content.decode()


def test_admin_pages_render(client, catalogue, admin_user):
    from decks.models import DeckAppearance

    deck = _import(client, GOOD_LIST, name="Boros Burn")
    DeckAppearance.objects.create(deck=deck, key="a1", event="Challenge", result="5-0")
    client.force_login(admin_user)
    card = Card.objects.get(name="Fire // Ice")
    for url in ("/admin/", "/admin/decks/card/", "/admin/decks/card/?q=bolt", f"/admin/decks/card/{card.pk}/change/",
                "/admin/decks/cardset/", "/admin/decks/printing/", "/admin/decks/legality/?format=modern",
                "/admin/decks/deck/", f"/admin/decks/deck/{deck.pk}/change/", "/admin/decks/deckappearance/"):
        response = client.get(url)
        assert response.status_code == 200, url
    assert "Goblin Guide" in client.get(f"/admin/decks/deck/{deck.pk}/change/").content.decode()
