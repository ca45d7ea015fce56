"""The JSON API (DRF) and its OpenAPI schema."""
from __future__ import annotations

import json

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from decks.core.decklist import parse_decklist
from decks.models import Card, Deck, DeckCard
from decks.services import card_index
from tests.decks.test_pages import GOOD_LIST, PAUPER_LIST

pytestmark = pytest.mark.django_db
EAGER = settings.STACK == "embedded"  # tasks run in the request; the services stack queues them


@pytest.fixture
def api():
    # enforce_csrf_checks: an anonymous JSON client must not need a CSRF token.
    return APIClient(enforce_csrf_checks=True)


def post_deck(api, body, **kwargs):
    return api.post("/api/decks/", json.dumps(body) if not isinstance(body, (str, bytes)) else body,
                    content_type=kwargs.pop("content_type", "application/json"), **kwargs)


def names(response):
    return [c["name"] for c in response.json()["results"]]


# --- cards ---------------------------------------------------------------------------


def test_card_list_and_filters(api, catalogue):
    response = api.get("/api/cards/")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 23 and len(body["results"]) == 23
    assert {"id", "name", "mana_cost", "type_line", "colors", "deck_count"} <= set(body["results"][0])
    assert names(api.get("/api/cards/", {"q": "lim-dul"})) == ["Lim-Dûl's Vault"]
    assert names(api.get("/api/cards/", {"type": "goblin"})) == ["Goblin Guide"]
    assert names(api.get("/api/cards/", {"color": ["U", "B"]})) == ["Lim-Dûl's Vault"]
    assert names(api.get("/api/cards/", {"color": "UR"})) == ["Fire // Ice"]
    pauper = names(api.get("/api/cards/", {"format": "pauper", "type": "Instant"}))
    assert "Lightning Bolt" in pauper and "Path to Exile" not in pauper
    assert names(api.get("/api/cards/", {"text": "any target", "sort": "name"})) == [
        "Lightning Bolt", "Rift Bolt", "Skewer the Critics"]


def test_card_list_bad_params(api, catalogue):
    response = api.get("/api/cards/", {"format": "narnia"})
    assert response.status_code == 400
    assert "Unknown format" in response.json()["errors"][0]["message"]
    assert api.get("/api/cards/", {"color": "Z"}).status_code == 400
    assert api.get("/api/cards/", {"page": "abc"}).status_code == 404
    assert api.get("/api/cards/", {"page": "999"}).status_code == 404


def test_card_detail_has_legalities_and_printings(api, catalogue):
    card = Card.objects.get(name="Black Lotus")
    body = api.get(f"/api/cards/{card.pk}/").json()
    assert body["name"] == "Black Lotus"
    legal = {row["format"]: row["status"] for row in body["legalities"]}
    assert legal["vintage"] == "restricted" and legal["legacy"] == "banned"
    assert body["legalities"][0]["source"] == "mtgjson"
    assert body["printings"] == []
    fire = api.get(f"/api/cards/{Card.objects.get(name='Fire // Ice').pk}/").json()
    assert fire["faces"][0]["name"] == "Ice"
    assert api.get("/api/cards/99999/").status_code == 404


# --- decks ---------------------------------------------------------------------------


def test_post_good_deck_as_anonymous_json_client(api, catalogue):
    response = post_deck(api, {"text": GOOD_LIST, "name": "Boros Burn", "format": "Modern"})
    assert response.status_code == 201, response.content
    body = response.json()
    deck = Deck.objects.get(pk=body["id"])
    assert response["Location"] == f"/api/decks/{deck.pk}/"
    assert (deck.name, deck.format, deck.main_count, deck.side_count, deck.owner) == ("Boros Burn", "modern", 60, 15, None)
    assert DeckCard.objects.filter(deck=deck).count() == 18  # 13 main + 5 side
    main = {e["name"]: e["count"] for e in body["cards"]["main"]}
    assert main["Fire // Ice"] == 2 and main["Mountain"] == 14 and sum(main.values()) == 60
    assert all(isinstance(e["card_id"], int) for e in body["cards"]["side"])
    if EAGER:
        assert "modern" in body["analysis"]["legal_in"]
    else:
        assert body["analysis"] is None  # queued for a worker


def test_post_bad_line_returns_per_line_errors_and_saves_nothing(api, catalogue):
    response = post_deck(api, {"text": "4 Goblin Guide\n\n4 Lightnig Bolt\n56 Mountain\n1 Zzyzx Qqq", "format": "modern"})
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert [e["line"] for e in errors] == [3, 5]
    assert errors[0]["text"] == "4 Lightnig Bolt"
    assert errors[0]["message"] == 'Unknown card "Lightnig Bolt"'
    assert errors[0]["suggestions"][0] == "Lightning Bolt"
    assert Deck.objects.count() == 0 and DeckCard.objects.count() == 0


@pytest.mark.parametrize("body, field, message", [
    ({"text": "20 Mountain", "format": "narnia"}, "format", "Unknown format"),
    ({"name": "no text"}, "text", "Paste a decklist"),
    ({"text": ""}, "text", "Paste a decklist"),
    ({"text": 42}, "text", "must be a string"),
    ({"text": "4 Lightning Bolt\n" * 1300}, "text", "too long"),
    ({"text": "20 Mountain", "name": "x" * 300}, "name", "too long"),
    ({"text": "20 Mountain", "format": ["modern"]}, "format", "must be a string"),
])
def test_post_invalid_fields(api, catalogue, body, field, message):
    response = post_deck(api, body)
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["field"] == field and message in error["message"]
    assert Deck.objects.count() == 0


@pytest.mark.parametrize("body, content_type", [
    ("{not json", "application/json"),
    ("4 Lightning Bolt", "text/plain"),
    ("text=4+Lightning+Bolt", "application/x-www-form-urlencoded"),
    ('["4 Lightning Bolt"]', "application/json"),
    ("", "application/json"),
])
def test_post_non_json_bodies_are_400(api, catalogue, body, content_type):
    response = post_deck(api, body, content_type=content_type)
    assert response.status_code == 400
    assert response.json()["errors"][0]["message"]
    assert Deck.objects.count() == 0


def test_post_as_logged_in_user_sets_owner(catalogue, django_user_model):
    user = django_user_model.objects.create_user("chandra", password="pyromancer-77")
    api = APIClient()
    api.force_authenticate(user)
    response = post_deck(api, {"text": "20 Mountain\n20 Lightning Bolt\n20 Lava Spike"})
    assert response.status_code == 201
    assert Deck.objects.get(pk=response.json()["id"]).owner == user


def test_deck_list_detail_and_format_filter(api, catalogue):
    modern = post_deck(api, {"text": GOOD_LIST, "format": "modern"}).json()["id"]
    pauper = post_deck(api, {"text": PAUPER_LIST, "format": "pauper"}).json()["id"]
    assert api.get("/api/decks/").json()["results"] == []  # unlisted until their owner makes them public
    for deck in (modern, pauper):
        assert api.patch(f"/api/decks/{deck}/", {"public": True}, format="json").json()["public"] is True
    body = api.get("/api/decks/").json()
    assert [d["id"] for d in body["results"]] == [pauper, modern]
    assert [d["id"] for d in api.get("/api/decks/", {"format": "modern"}).json()["results"]] == [modern]
    assert api.get("/api/decks/", {"format": "narnia"}).status_code == 400
    detail = api.get(f"/api/decks/{pauper}/").json()
    assert detail["format"] == "pauper" and detail["main_count"] == 60
    assert {e["name"] for e in detail["cards"]["main"]} == {"Lightning Bolt", "Lava Spike", "Rift Bolt", "Skewer the Critics", "Mountain"}
    assert detail["cards"]["side"] == []
    if EAGER:
        assert "pauper" in detail["analysis"]["legal_in"]
    assert api.get("/api/decks/99999/").status_code == 404


@pytest.mark.parametrize("style", ["arena", "mtgo"])
def test_export(api, catalogue, style):
    deck_id = post_deck(api, {"text": GOOD_LIST, "name": "Boros Burn"}).json()["id"]
    response = api.get(f"/api/decks/{deck_id}/export", {"style": style})
    assert response.status_code == 200
    text = response.json()["text"]
    result = parse_decklist(text, card_index())
    assert result.ok and result.deck.main_count == 60 and result.deck.side_count == 15
    assert api.get(f"/api/decks/{deck_id}/export", {"style": "xml"}).status_code == 400
    assert api.get("/api/decks/99999/export").status_code == 404


def test_schema_generates_and_lists_the_endpoints(api):
    response = api.get("/api/schema/")
    assert response.status_code == 200
    text = response.content.decode()
    for path in ("/api/decks/", "/api/decks/{id}/", "/api/decks/{id}/export", "/api/cards/", "/api/cards/{id}/"):
        assert f"{path}:" in text, path


def test_schema_has_no_warnings():
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator

    GENERATOR_STATS.reset()
    SchemaGenerator().get_schema(request=None, public=True)
    assert not GENERATOR_STATS._warn_cache and not GENERATOR_STATS._error_cache
