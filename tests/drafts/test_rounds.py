"""Play your pod (issue 38): rounds of a finished bot draft against the bots' decks, on /games/'s code path, the
refusals, the hidden bot decks, and the games in the draft's export under the picks' consent."""
from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from drafts.models import DraftRound, DraftSeat
from gameplay.models import PlayedGame
from tests.drafts.pod_rounds import bot_draft, card_records, game_catalogue, game_env, play_set, real_data_dir_session  # noqa: F401

pytestmark = pytest.mark.django_db


def guest(client: Client) -> str:
    client.get("/drafts/play/")
    session = client.session
    session["guest"] = True
    session.save()
    return session.session_key


def concede(client, game_id):
    r = client.post(f"/api/games/{game_id}/concede", content_type="application/json")
    assert r.status_code == 200, r.content


def test_a_person_plays_three_rounds_of_their_bot_draft(play_set):  # noqa: F811
    c = Client()
    draft = bot_draft(guest(c))
    url = f"/api/pods/{draft.pk}/rounds"
    body = c.get(url).json()
    assert body["open"] and body["can_start"] and body["problems"]["supported"] and body["rounds"] == []
    page = c.get(f"/drafts/pods/{draft.pk}/")
    assert b'id="round-form"' in page.content and b"Play round 1" in page.content
    opponents = []
    for n in (1, 2, 3):
        r = c.post(url, {"level": "engine:VeryEasy"}, content_type="application/json")
        assert r.status_code == 201, r.content
        game = PlayedGame.objects.get(pk=r.json()["game"])
        rnd = game.draft_round
        assert rnd.number == n and rnd.seat.seat == 0 and rnd.opponent.drafter != "human"
        assert game.opponent == "engine:VeryEasy" and sum(c_ for _, c_ in game.human_deck) == 40
        assert c.get(f"/games/{game.pk}/").status_code == 200  # the games page plays it
        # the person's view of the game never names the bot's deck list beyond the board
        view = c.get(f"/api/games/{game.pk}").json()["view"]
        assert "ai_deck" not in str(view.keys())
        playing = c.post(url, {"level": "engine:VeryEasy"}, content_type="application/json")
        assert playing.status_code == 409 and DraftRound.objects.count() == n  # finish this round first
        concede(c, game.pk)
        opponents.append(rnd.opponent.seat)
    assert len(set(opponents)) == 3  # a Swiss: no rematch while bots are left
    assert opponents[0] == 2  # round 1 across the table
    fourth = c.post(url, {"level": "engine:VeryEasy"}, content_type="application/json")
    assert fourth.status_code == 409 and DraftRound.objects.count() == 3
    body = c.get(url).json()
    assert body["losses"] == 3 and not body["can_start"] and [r["result"] for r in body["rounds"]] == ["lost"] * 3
    assert all(r["opponent_colors"] is not None and r["review_url"] for r in body["rounds"])
    page = c.get(f"/drafts/pods/{draft.pk}/").content.decode()
    assert 'id="rounds"' in page and "lost" in page and "/review/" in page and "All 3 rounds played" in page


def test_bad_round_requests_are_refused_and_write_nothing(play_set):  # noqa: F811
    owner, stranger = Client(), Client()
    draft = bot_draft(guest(owner))
    guest(stranger)
    url = f"/api/pods/{draft.pk}/rounds"
    games = PlayedGame.objects.count()
    assert stranger.post(url, {"level": "engine:Easy"}, content_type="application/json").status_code == 403
    assert stranger.get(url).status_code == 403
    assert owner.post(url, {"level": "engine:Godlike"}, content_type="application/json").status_code == 400
    assert owner.post(url, "{not json", content_type="application/json").status_code == 400
    assert owner.post("/api/pods/00000000-0000-0000-0000-000000000000/rounds", {"level": "engine:Easy"},
                      content_type="application/json").status_code == 404
    assert owner.post(f"/drafts/pods/{draft.pk}/rounds/", {"level": "nope"}).status_code == 302  # shown on the page
    assert DraftRound.objects.count() == 0 and PlayedGame.objects.count() == games
    early_client = Client()
    early = bot_draft(guest(early_client), finished=False)
    r = early_client.post(f"/api/pods/{early.pk}/rounds", {"level": "engine:Easy"}, content_type="application/json")
    assert r.status_code == 409 and "not over" in r.json()["errors"][0]["message"]
    assert DraftRound.objects.count() == 0 and PlayedGame.objects.count() == games


def test_the_bots_decks_stay_hidden_until_the_rounds_are_played(play_set):  # noqa: F811
    from drafts import rounds
    from tests.leaks import assert_no_leak, find_leaks

    c = Client()
    draft = bot_draft(guest(c))
    bot = DraftSeat.objects.get(draft=draft, seat=2)  # round 1's opponent: across the table
    assert bot.deck_id is not None  # its auto-built deck, stored in the catalogue
    r = c.post(f"/api/pods/{draft.pk}/rounds", {"level": "engine:VeryEasy"}, content_type="application/json")
    assert r.status_code == 201
    game_id = r.json()["game"]
    view = c.get(f"/api/games/{game_id}").json()["view"]
    seen = {n for pack in DraftSeat.objects.get(draft=draft, seat=0).picks.values_list("pack", flat=True) for n in pack}
    deck = {n for n, _ in rounds.bot_deck(bot)}
    secrets = {n for n in deck - seen if not find_leaks(view, [n])}  # never in my packs, not shown by the game
    assert secrets and find_leaks({"deck": sorted(deck)}, secrets)  # the scan finds a planted deck list
    for who in (c, Client()):
        assert who.get(f"/drafts/{draft.pk}/seats/2/").status_code == 404
        for url in (f"/drafts/{draft.pk}/", f"/api/drafts/{draft.pk}", f"/drafts/pods/{draft.pk}/",
                    f"/api/pods/{draft.pk}/rounds", f"/games/{game_id}/", f"/drafts/{draft.pk}/export.csv"):
            assert_no_leak(who.get(url).content, secrets, what=url)
        assert f"/decks/{bot.deck_id}/" not in who.get(f"/drafts/{draft.pk}/").content.decode()
        for url in (f"/decks/{bot.deck_id}/", f"/decks/{bot.deck_id}/export.txt", f"/api/decks/{bot.deck_id}/",
                    f"/api/decks/{bot.deck_id}/export"):  # its id guessed: the answer of an unknown deck
            assert who.get(url).status_code == 404, url
    assert c.get(f"/api/pods/{draft.pk}/rounds").json()["rounds"][0]["opponent_colors"] is None  # while playing
    assert c.get(f"/api/drafts/{draft.pk}").json()["seats"][2]["colors"] is None
    concede(c, game_id)
    for _ in range(2):
        r = c.post(f"/api/pods/{draft.pk}/rounds", {"level": "engine:VeryEasy"}, content_type="application/json")
        assert r.status_code == 201
        concede(c, r.json()["game"])
    assert c.get(f"/drafts/{draft.pk}/seats/2/").status_code == 200  # every round played: the bot's seat is public
    assert c.get(f"/api/decks/{bot.deck_id}/").status_code == 200  # and its deck


def game_rows(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_the_export_holds_the_game_rows_and_they_leave_with_the_picks(play_set):  # noqa: F811
    from django.contrib.auth.models import User
    from django.core.management import CommandError, call_command

    user = User.objects.create_user("ana", password="pw-123456")
    staff = User.objects.create_user("staff", password="pw-123456", is_staff=True)
    c, admin = Client(), Client()
    c.force_login(user)
    admin.force_login(staff)
    draft = bot_draft(user=user)
    seat = DraftSeat.objects.get(draft=draft, seat=0)
    r = c.post(f"/api/pods/{draft.pk}/rounds", {"level": "engine:VeryEasy"}, content_type="application/json")
    game = PlayedGame.objects.get(pk=r.json()["game"])
    concede(c, game.pk)
    game.refresh_from_db()

    rows = game_rows(c.get(f"/drafts/{draft.pk}/export.csv?rows=games"))
    assert len(rows) == 1
    row = rows[0]
    assert row["draft_id"] == seat.log_id and row["won"] == "False" and row["match_number"] == "1"
    assert row["on_play"] == str(game.first_player == game.human_seat) and row["num_turns"] == str(game.turn)
    assert row["opp_colors"] == DraftSeat.objects.get(pk=game.draft_round.opponent_id).colors
    assert sum(int(v) for k, v in row.items() if k.startswith("deck_")) == 40
    board = game.final_board[str(game.human_seat)]  # as it stood before the clean-up exiled the loser's library
    library = next(p["library"] for p in board["players"] if p["seat"] == game.human_seat)
    drawn = sum(int(v) for k, v in row.items() if k.startswith("drawn_"))
    assert 7 <= drawn == 40 - library  # the opening hand and every draw, not the library exiled at the end
    assert game_rows(c.get("/drafts/mine/export.csv?set=PLY&rows=games")) == rows
    assert game_rows(c.get(f"/api/drafts/{draft.pk}/export?rows=games")) == rows
    assert c.get(f"/drafts/{draft.pk}/export.csv?rows=cards").status_code == 400
    picks = c.get(f"/drafts/{draft.pk}/export.csv")
    assert picks.status_code == 200 and seat.log_id in picks.content.decode()  # the pick rows beside them
    assert game_rows(admin.get("/drafts/data/consented.csv?set=PLY&rows=games")) == rows

    out = io.StringIO()
    call_command("export_drafts", "--set", "PLY", "--consented", "--games", "--out", "-", stdout=out)
    assert list(csv.DictReader(io.StringIO(out.getvalue()))) == rows

    # withdrawing consent takes the games out of the shared data with the picks
    c.post("/drafts/consent/", {"consent": "no"})
    with pytest.raises(CommandError):
        call_command("export_drafts", "--set", "PLY", "--consented", "--games", "--out", "-", stdout=io.StringIO())
    assert admin.get("/drafts/data/consented.csv?set=PLY&rows=games").status_code == 404
    assert admin.get("/drafts/data/consented.csv?set=PLY").status_code == 404
    # deleting the draft deletes its games with its picks
    assert c.post(f"/drafts/mine/{seat.pk}/delete/").status_code == 302
    assert not PlayedGame.objects.filter(pk=game.pk).exists() and not DraftRound.objects.exists()
    assert c.get(f"/games/{game.pk}/").status_code == 404


def test_cards_the_engine_cannot_play_are_named_before_a_round_with_a_swap(play_set):  # noqa: F811
    import json

    from drafts import rounds
    from drafts.core.deckbuild import BASIC_FOR_COLOR
    from gameplay.models import EngineCard

    c = Client()
    draft = bot_draft(guest(c))
    seat = DraftSeat.objects.get(draft=draft, seat=0)
    card = next(n for n, _ in rounds.person_deck(seat) if n not in BASIC_FOR_COLOR.values())
    EngineCard.objects.filter(card__name=card).update(supported=False, problems=["planted: not implemented"])
    body = c.get(f"/api/pods/{draft.pk}/rounds").json()
    assert body["problems"]["supported"] is False and card in body["problems"]["unsupported"]
    (out, swap), = body["problems"]["swaps"]
    assert out == card and swap and swap != card
    page = c.get(f"/drafts/pods/{draft.pk}/").content.decode()
    assert 'id="play-problems"' in page and card in page and f"swap for {swap}" in page.replace("&#x27;", "'")
    r = c.post(f"/api/pods/{draft.pk}/rounds", {"level": "engine:Easy"}, content_type="application/json")
    assert r.status_code == 400 and card in r.json()["errors"][0]["message"] and not DraftRound.objects.exists()
    builder = c.get(f"/drafts/{draft.pk}/seats/0/build/").content.decode()
    state = json.loads(builder.split('id="builder-state" type="application/json">')[1].split("</script>")[0])
    assert state["unplayable"] == [card] and card not in state["playable"] and swap in state["playable"]
    assert 'id="engine-swap"' in builder
    for bot in DraftSeat.objects.filter(draft=draft).exclude(drafter="human"):  # a bot's deck is rebuilt without it
        deck = rounds.bot_deck(bot)
        assert card not in {n for n, _ in deck} and sum(n for _, n in deck) == 40
