"""The end of a game: a concession (API, page, the games list), refusals that write nothing, and the final board as
it stood when the game ended (the engine exiles every card of the loser), shown by the view and the API with the
AI's hidden cards still hidden; a conceded game can be reviewed (real engine, the sample decks' cards)."""
from __future__ import annotations

import json

import pytest
from django.test import Client

from gameplay.models import PlayedGame
from gameplay.play import session
from gameplay.review import service
from tests.gameplay.play_fixtures import hidden_cards  # noqa: F401 - fixture
from tests.gameplay.test_play_api import post

pytestmark = pytest.mark.django_db


def _players(board):
    """A board's players with each hand as a sorted list of names (the engine puts hands back unordered)."""
    return [{**p, "hand": sorted(c["name"] for c in p.get("hand", []))} for p in board["players"]]


def test_a_game_is_conceded_then_reviewable_and_refusals_write_nothing(client, game_catalogue, hidden_cards):  # noqa: F811
    made = post(client, "/api/games", {"deck": "sample:mono_red_aggro", "opponent_deck": "sample:mono_white_weenie",
                                       "opponent": "engine:VeryEasy", "first": "you", "seed": 4})
    game_id = made.json()["id"]
    view = made.json()["view"]
    for _ in range(8):  # keep, then play the first thing offered that is not a pass
        chosen = next((a for a in view["actions"] if a["type"] not in ("PassPriority", "MulliganDecision")
                       and not a["label"].startswith("Mulligan")), view["actions"][0])
        view = post(client, f"/api/games/{game_id}/actions", {"key": chosen["key"], "revision": view["revision"]}).json()["view"]
    before = client.get(f"/api/games/{game_id}").json()["view"]
    revision = before["revision"]
    assert before["status"] == "playing" and any(p["battlefield"] for p in before["board"]["players"])

    stranger = Client()
    for url in (f"/api/games/{game_id}/concede", "/api/games/00000000-0000-0000-0000-000000000000/concede"):
        assert post(stranger, url, {}).status_code == 404
    assert stranger.post(f"/games/{game_id}/concede/").status_code == 404
    row = PlayedGame.objects.get(pk=game_id)
    assert (row.revision, row.status, row.final_board) == (revision, "playing", None)  # nothing written
    with pytest.raises(Exception, match="still being played"):
        service.reviewable(row)

    conceded = post(client, f"/api/games/{game_id}/concede", {})
    assert conceded.status_code == 200, conceded.content
    end = conceded.json()["view"]
    assert end["status"] == "finished" and end["revision"] == revision + 1 and not end["actions"]
    assert end["result"] == {"winner": 1, "you_won": False, "draw": False, "conceded": True}
    assert end["log"][-1]["text"] == "You conceded: the AI won"
    # the board as it stood when they conceded, not the one the engine leaves (every card of theirs in exile)
    assert _players(end["board"]) == _players(before["board"]) and end["board"]["prompt"]["type"] == "GameOver"
    assert "hand" not in end["board"]["players"][1]
    shown = client.get(f"/api/games/{game_id}").json()["view"]
    assert _players(shown["board"]) == _players(before["board"])
    stored = json.loads(PlayedGame.objects.get(pk=game_id).state)["state"]
    assert not [o for o in stored["battlefield"] if stored["objects"][str(o)]["controller"] == 0]  # the engine's clean-up
    for response in (conceded, client.get(f"/api/games/{game_id}")):
        hidden_cards.check(response.json(), what="the concession's answer", game=game_id)

    again = post(client, f"/api/games/{game_id}/concede", {})
    assert again.status_code == 409 and "over" in again.json()["errors"][0]["message"]
    assert PlayedGame.objects.get(pk=game_id).revision == revision + 1
    # the review replays every move, the concession included: the game rebuilds to the same end
    row = PlayedGame.objects.get(pk=game_id)
    service.reviewable(row)
    rebuilt = session._replay(row)
    assert rebuilt is not None and rebuilt.result() == {"winner": 1}
    page = client.get(f"/games/{game_id}/").content.decode()
    assert 'id="result-panel"' in page and f"/games/{game_id}/review/" in page


def test_a_game_left_unfinished_is_conceded_from_the_games_list(client, game_catalogue):
    made = post(client, "/api/games", {"deck": "sample:mono_blue_faeries", "opponent_deck": "sample:dimir_terror",
                                       "opponent": "engine:VeryEasy", "first": "ai", "seed": 2})
    game_id = made.json()["id"]
    listed = client.get("/games/").content.decode()
    assert f'action="/games/{game_id}/concede/"' in listed and "Engine AI, Very Easy" in listed
    assert "engine:VeryEasy</span>" not in listed
    answer = client.post(f"/games/{game_id}/concede/")
    assert answer.status_code == 302 and answer["Location"] == f"/games/{game_id}/"
    row = PlayedGame.objects.get(pk=game_id)
    assert row.status == "finished" and row.result["conceded"] and row.final_board
    listed = client.get("/games/").content.decode()
    assert f"/games/{game_id}/review/" in listed and "you conceded" in listed
    assert f'action="/games/{game_id}/concede/"' not in listed
    again = client.post(f"/games/{game_id}/concede/", follow=True)  # over already: shown as it is, with why
    assert again.status_code == 200 and "could not be conceded" in again.content.decode()
    assert PlayedGame.objects.get(pk=game_id).revision == row.revision


def test_a_game_won_shows_the_losers_board_as_it_stood(game_catalogue, hidden_cards):  # noqa: F811
    row, out = session.create_game("sample:mono_red_aggro", "sample:dimir_terror", "engine:VeryEasy", first="you",
                                   session_key="s" * 32, seed=8)
    view = out.view
    for _ in range(60):  # play lands and creatures; attack once there is an attacker, the AI at 1 life
        attack = next((a for a in view["actions"] if a["type"] == "DeclareAttackers" and a["label"] != "No attack"), None)
        if attack is not None:
            stored = PlayedGame.objects.get(pk=row.pk)
            state = json.loads(stored.state)
            state["state"]["players"][1]["life"] = 1
            stored.state = json.dumps(state)
            stored.save()
            session.GAME_CACHE.clear()
            view = session.human_action(row.pk, 0, attack["key"], expected_revision=stored.revision).view
            break
        chosen = next((a for a in view["actions"] if a["type"] in ("PlayLand", "CastSpell")),
                      next(a for a in view["actions"] if a["label"] != "Mulligan"))
        view = session.human_action(row.pk, 0, chosen["key"], expected_revision=view["revision"],
                                    pass_until="my_turn" if chosen["type"] == "PassPriority" else None).view
    for _ in range(40):  # on to the end (the AI may block and chump; the person passes)
        if view["status"] == "finished":
            break
        view = session.human_action(row.pk, 0, view["actions"][0]["key"], expected_revision=view["revision"]).view
    assert view["status"] == "finished" and view["result"]["you_won"]
    row = PlayedGame.objects.get(pk=row.pk)
    theirs = session.view_of(row)["board"]["players"][1]
    assert theirs["library"] > 0 and theirs["hand_count"] > 0 and theirs["battlefield"]  # not the empty, exiled side
    assert "hand" not in theirs and set(row.final_board) == {"0", "1"} and "hand" in row.final_board["1"]["players"][1]
    hidden_cards.check(session.view_of(row), what="the finished view")
