"""The game API (advice for a posted state; games against the AI) and the play pages."""
from __future__ import annotations

import json

import pytest

from gameplay.models import PlayedGame
from tests.gameplay.conftest import deck_list
from tests.gameplay.play_fixtures import hidden_cards  # noqa: F401  (fixture)
from tests.leaks import expect_leak

pytestmark = pytest.mark.django_db


def post(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


def test_advice_api_recommends_and_refuses_bad_input(client, game_catalogue, settings):
    engine = game_catalogue.get_engine()
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("mono_white_weenie"), seed=4)
    for seat in (0, 1):
        game.apply(seat, game.legal_actions(seat)[0])
    while len(game.legal_actions(game.seat_to_act())) < 2:
        seat = game.seat_to_act()
        game.apply(seat, game.legal_actions(seat)[0])
    seat = game.seat_to_act()
    state = game.state()
    settings.GAME_API_ADVICE_MAX_SECONDS = 2

    ok = post(client, "/api/games/advice", {"state": state, "seat": seat, "algorithm": "flat",
                                            "budget": {"seconds": 60, "simulations": 3}})
    assert ok.status_code == 200, ok.content
    body = ok.json()
    assert body["action"]["key"] in {a.key for a in game.legal_actions(seat)} and body["playable"]
    assert body["budget"]["seconds"] == 2  # capped
    assert body["algorithm"] == "flat" and 0 <= body["win_estimate"] <= 1 and body["alternatives"]
    assert body["seat"] == seat and body["legal_actions"]
    assert 0 < body["position_estimate"] < 1
    if not body["forced"]:  # the headline and the table on one scale: the recommended move's value is the estimate
        own = next(a for a in body["alternatives"] if a["key"] == body["action"]["key"])
        assert body["win_estimate"] == body["position_estimate"] == own["value"]
    text_state = post(client, "/api/games/advice", {"state": json.dumps(state), "seat": seat, "level": "fast",
                                                    "budget": {"simulations": 2}})
    assert text_state.status_code == 200 and text_state.json()["level"] == "fast"
    # the default level: the ensemble's vote, each action's share, the copies used, no search unless asked
    voted = post(client, "/api/games/advice", {"state": state, "seat": seat})
    assert voted.status_code == 200, voted.content[:300]
    body = voted.json()
    vote = body["vote"]
    assert body["level"] == vote["level"] == "vote" and body["algorithm"] == "vote" and body["simulations"] == 0
    assert body["action"]["key"] in {a.key for a in game.legal_actions(seat)} and not vote["fallback"]
    assert sum(a["votes"] for a in body["alternatives"]) == vote["copies"] >= 1 and not vote["searched"]
    assert abs(sum(a["share"] for a in body["alternatives"]) - 1) < 1e-3
    assert body["alternatives"][0]["key"] == body["action"]["key"] and 0 <= body["win_estimate"] <= 1
    # the shipped value model's estimate, made on the vote's own copies (no load of its own)
    if not body["forced"]:
        assert vote["position_by"] == "value model" and 0 < body["position_estimate"] == body["win_estimate"] < 1
    searched = post(client, "/api/games/advice", {"state": state, "seat": seat, "level": "vote+search",
                                                  "budget": {"simulations": 2}})
    assert searched.status_code == 200, searched.content[:300]
    vote = searched.json()["vote"]
    assert vote["search_level"] == "default" and vote["searched"] == vote["split"]  # searched only where split
    assert post(client, "/api/games/advice", {"state": state, "seat": seat, "level": "search:fast",
                                              "budget": {"simulations": 2}}).json()["algorithm"] == "mcts"
    learned = post(client, "/api/games/advice", {"state": state, "seat": seat, "level": "learned",
                                                 "budget": {"simulations": 2}})  # the shipped value model
    assert learned.status_code == 200 and learned.json()["level"] == "learned", learned.content[:300]
    assert 0 <= learned.json()["win_estimate"] <= 1

    cases = [
        ({"seat": seat}, "state"),
        ({"state": {"nope": 1}, "seat": seat}, "'state' key"),
        ({"state": "{not json", "seat": seat}, "not JSON"),
        ({"state": state, "seat": 2}, "seat must be 0 or 1"),
        ({"state": state, "seat": "0"}, "seat must be 0 or 1"),
        ({"state": state, "seat": 1 - seat}, "no decision"),
        ({"state": state, "seat": seat, "algorithm": "alphazero"}, "unknown algorithm"),
        ({"state": state, "seat": seat, "level": "godlike"}, "unknown level"),
        ({"state": state, "seat": seat, "budget": {"seconds": -1}}, "positive"),
        ({"state": state, "seat": seat, "budget": 3}, "budget"),
    ]
    for body, text in cases:
        r = post(client, "/api/games/advice", body)
        assert r.status_code == 400, (body.keys(), r.content[:300])
        assert text in r.json()["errors"][0]["message"], r.json()
    assert client.post("/api/games/advice", "[1, 2]", content_type="application/json").status_code == 400
    assert client.post("/api/games/advice", "{bad", content_type="application/json").status_code == 400


def test_games_api_create_act_and_refuse(client, game_catalogue, hidden_cards):  # noqa: F811
    r = post(client, "/api/games", {"deck": "sample:mono_blue_faeries", "opponent_deck": "sample:dimir_terror",
                                    "opponent": "engine:VeryEasy", "first": "you", "seed": 2})
    scanned = [r]
    assert r.status_code == 201, r.content
    body = r.json()
    game_id, view = body["id"], body["view"]
    assert body["websocket"] == f"/ws/games/{game_id}/" and r["Location"].endswith(f"/api/games/{game_id}")
    assert view["revision"] == 1 and [a["label"] for a in view["actions"]] == ["Keep hand", "Mulligan"]
    assert "hand" not in view["board"]["players"][1]

    keep = view["actions"][0]["key"]
    acted = post(client, f"/api/games/{game_id}/actions", {"key": keep, "revision": 1, "client_action_id": "a"})
    assert acted.status_code == 200 and acted.json()["view"]["revision"] == 2 and not acted.json()["acted"]["duplicate"]
    again = post(client, f"/api/games/{game_id}/actions", {"key": keep, "revision": 1, "client_action_id": "a"})
    assert again.status_code == 200 and again.json()["acted"]["duplicate"]
    stale = post(client, f"/api/games/{game_id}/actions", {"key": keep, "revision": 1})
    assert stale.status_code == 409 and "stale" in stale.json()["errors"][0]["message"]
    illegal = post(client, f"/api/games/{game_id}/actions", {"key": keep, "revision": 2})
    assert illegal.status_code == 409
    assert post(client, f"/api/games/{game_id}/actions", {"key": "garbage"}).status_code == 400
    assert post(client, f"/api/games/{game_id}/actions", {"revision": 2}).status_code == 400
    assert client.get(f"/api/games/{game_id}").json()["view"]["revision"] == 2
    scanned += [acted, again, stale, illegal, client.get(f"/api/games/{game_id}")]

    from django.test import Client

    stranger = Client()
    assert stranger.get(f"/api/games/{game_id}").status_code == 404
    assert post(stranger, f"/api/games/{game_id}/actions", {"key": keep}).status_code == 404
    assert PlayedGame.objects.get(pk=game_id).revision == 2

    # "Pass until my turn": one request passes for the person until their next main phase (or until
    # the AI puts something on the stack, or another decision comes up); only with a pass.
    view = client.get(f"/api/games/{game_id}").json()["view"]
    passing = next(a["key"] for a in view["actions"] if a["type"] == "PassPriority")
    other = next(a["key"] for a in view["actions"] if a["type"] != "PassPriority")
    for body, field in (({"key": passing, "revision": 2, "pass_until": "forever"}, "end_of_turn"),
                        ({"key": passing, "revision": 2, "pass_until": ["my_turn"]}, "end_of_turn"),
                        ({"key": other, "revision": 2, "pass_until": "my_turn"}, "passing priority")):
        refused = post(client, f"/api/games/{game_id}/actions", body)
        assert refused.status_code == 400 and field in refused.json()["errors"][0]["message"]
    assert PlayedGame.objects.get(pk=game_id).revision == 2
    passed = post(client, f"/api/games/{game_id}/actions", {"key": passing, "revision": 2, "pass_until": "my_turn"})
    assert passed.status_code == 200 and passed.json()["view"]["revision"] == 3
    scanned.append(passed)
    for response in scanned:  # what the player got: nothing of the AI's hand or library
        hidden_cards.check(response.json(), what=f"the API's {response.status_code} response", game=game_id)
    board = passed.json()["view"]["board"]
    assert (board["stack"] or board["turn"] > view["board"]["turn"] or passed.json()["view"]["status"] == "finished"
            or not any(a["type"] == "PassPriority" for a in passed.json()["view"]["actions"]))

    bad = post(client, "/api/games", {"deck": {"name": "Typos", "main": [["Island", 56], ["Spellstutter Sprit", 4]]},
                                      "opponent_deck": "sample:dimir_terror"})
    assert bad.status_code == 400
    error = bad.json()["errors"][0]
    assert error["deck"] == "your deck" and error["unknown"] == ["Spellstutter Sprit"]
    for body in ({"deck": "sample:dimir_terror"}, {"deck": "sample:x", "opponent_deck": "sample:dimir_terror"},
                 {"deck": "sample:dimir_terror", "opponent_deck": "sample:dimir_terror", "opponent": "chess"},
                 {"deck": "sample:dimir_terror", "opponent_deck": "sample:dimir_terror", "seat": 5}):
        assert post(client, "/api/games", body).status_code == 400
    from django.contrib.auth import get_user_model

    ana, ben = (get_user_model().objects.create_user(n, password="pw-12345678") for n in ("ana", "ben"))
    signed_in = Client()
    signed_in.force_login(ana)
    mine = post(signed_in, "/api/games", {"deck": "sample:mono_blue_faeries", "opponent_deck": "sample:dimir_terror",
                                          "opponent": "random", "seed": 1})
    assert mine.status_code == 201 and PlayedGame.objects.get(pk=mine.json()["id"]).owner == ana
    other = Client()
    other.force_login(ben)
    assert other.get(f"/api/games/{mine.json()['id']}").status_code == 404
    assert signed_in.get(f"/games/{mine.json()['id']}/").status_code == 200

    decks = client.get("/api/games/decks").json()
    assert "sample:dimir_terror" in [d["deck"] for d in decks["decks"]] and decks["opponents"]
    schema = client.get("/api/schema/?format=json").json()
    for path in ("/api/games", "/api/games/advice", "/api/games/{game_id}/actions"):
        assert path in schema["paths"]


def test_a_deck_number_must_be_plain_digits(client):
    """'deck:²' passed str.isdigit() and failed in int(): a 500 (found while fuzzing the API)."""
    for spec in ("deck:²", "deck:" + "9" * 5000, "deck:-1"):
        r = post(client, "/api/games", {"deck": spec, "opponent_deck": "sample:mono_red_aggro"})
        assert r.status_code == 400 and "deck:<number>" in r.json()["errors"][0]["message"], r.content[:200]
    for wanted in ("²", "9" * 5000):
        assert client.get(f"/games/?deck={wanted}").status_code == 200


def test_play_pages_start_a_game_and_list_unsupported_cards(client, admin_client, game_catalogue,
                                                             hidden_cards):  # noqa: F811
    from decks.models import Card, Deck, DeckCard
    from gameplay.models import EngineCard

    page = client.get("/games/")
    assert page.status_code == 200 and "sample:mono_red_aggro" in page.content.decode()

    weird = Card.objects.create(name="Odd Clone", name_key="odd clone", front_name="Odd Clone", mana_cost="{3}{U}",
                                types="Creature", power="0", toughness="0", oracle_text="Enter as a copy.")
    EngineCard.objects.create(card=weird, supported=False, problems=["enter as a copy"])
    deck = Deck.objects.create(name="Clones")
    DeckCard.objects.create(deck=deck, card=Card.objects.get(name="Island"), board="main", count=56)
    DeckCard.objects.create(deck=deck, card=weird, board="main", count=4)
    refused = client.post("/games/", {"deck": "sample:mono_red_aggro", "deck_number": deck.pk,
                                      "ai_deck": "sample:dimir_terror", "opponent": "engine:Easy", "first": "random"})
    html = refused.content.decode()
    assert refused.status_code == 400 and "Odd Clone" in html and "enter as a copy" in html
    assert not PlayedGame.objects.exists()

    started = client.post("/games/", {"deck": "sample:mono_red_aggro", "ai_deck": "sample:dimir_terror",
                                      "opponent": "engine:Easy", "first": "ai"})
    assert started.status_code == 302
    row = PlayedGame.objects.get()
    assert started["Location"] == f"/games/{row.pk}/" and row.opponent == "engine:Easy"
    game_page = client.get(started["Location"])
    html = game_page.content.decode()
    assert game_page.status_code == 200 and f"/ws/games/{row.pk}/" in html and 'id="game-initial"' in html
    assert "Keep hand" in html  # the mulligan decision is offered
    hidden_cards.check(game_page.content, what="the game page", game=row.pk, revision=row.revision)
    assert row.human_deck_name in client.get("/games/").content.decode()  # listed under your games

    from django.test import Client

    assert Client().get(f"/games/{row.pk}/").status_code == 404
    assert admin_client.get("/admin/gameplay/playedgame/").status_code == 200
    change = admin_client.get(f"/admin/gameplay/playedgame/{row.pk}/change/")
    assert change.status_code == 200 and "KiB of engine JSON" in change.content.decode()
    assert f"{row.decisions} recorded" in change.content.decode() and "name=\"moves\"" not in change.content.decode()


@pytest.mark.parametrize("leak", [False, True], ids=["as-served", "planted-leak"])
def test_the_scan_fails_on_a_planted_leak_of_the_ais_hand(client, game_catalogue, hidden_cards, monkeypatch,  # noqa: F811
                                                          leak):
    """The API body and the game page as served pass the scan; with the AI's hand planted in the view, both fail it."""
    from gameplay.play import session

    if leak:
        recorded = session.view_of

        def leaky(row, game=None):
            game = game if game is not None else session.load_game(row)
            view = recorded(row, game)
            state = game.state()["state"]
            theirs = next(p for p in state["players"] if p["id"] != row.human_seat)
            view["board"]["players"][1 - row.human_seat]["hand"] = [
                {"id": o, "name": state["objects"][str(o)]["name"]} for o in theirs["hand"]]
            return view

        monkeypatch.setattr(session, "view_of", leaky)
    r = post(client, "/api/games", {"deck": "sample:mono_red_aggro", "opponent_deck": "sample:mono_white_weenie",
                                    "opponent": "engine:VeryEasy", "first": "you", "seed": 3})
    assert r.status_code == 201, r.content
    game_id = r.json()["id"]
    page = client.get(f"/games/{game_id}/")
    for what, body, revision in (("the API body", r.json(), None), ("the game page", page.content, 1)):
        with expect_leak(leak):
            hidden_cards.check(body, what=what, game=game_id, revision=revision)
