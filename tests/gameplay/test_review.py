"""The game review: the Celery job (eager on the embedded stack, a real worker on the services stack), its API and
page, who may see it, bad input, and the sweep that runs again a review whose worker died."""
from __future__ import annotations

import functools
import json
import time
import uuid
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from gameplay.models import PlayedGame
from gameplay.review import service
from gameplay.review.models import GameReview
from tests.gameplay.conftest import sample_deck_lists, deck_list
from tests.gameplay.core.matches.test_decision_review import never_seen
from tests.gameplay.play_fixtures import advice_worker, game_env  # noqa: F401 - fixtures
from tests.leaks import assert_no_leak

pytestmark = pytest.mark.django_db(transaction=True)


NAMES = {"mono_red_aggro": "Mono red", "dimir_terror": "Dimir", "mono_blue_faeries": "Mono blue faeries"}


def finished_game(owner=None, session_key: str = "", seed: int = 27, *, person: str = "mono_red_aggro",
                  ai: str = "dimir_terror", players=None, secret: bool = True) -> tuple[PlayedGame, set[str]]:
    """A whole game (by default the engine's Easy AI in the person's seat, VeryEasy opposite) stored as the site
    stores one: decks, seed, first player and every move; and the names of the AI's cards the person never saw
    (``secret``: else an empty set, without the replay that finds them). A game of the default players is played
    once per process (``_played``): the tests only read it, and a game with its replay is seconds of CPU."""
    if players is None:
        moves, state, winner, turn, unseen = _played(person, ai, seed, secret)
    else:
        moves, state, winner, turn, unseen = _play(person, ai, seed, players, secret)
    decks = sample_deck_lists()
    row = PlayedGame.objects.create(
        owner=owner, session_key=session_key, human_deck_name=NAMES.get(person, person),
        human_deck=decks[person]["main"], ai_deck_name=NAMES.get(ai, ai), ai_deck=decks[ai]["main"],
        opponent="engine:VeryEasy", human_seat=0, seed=seed, first_player=0, moves=[list(m) for m in moves],
        decisions=len(moves), state=state, status="finished",
        result={"winner": winner, "you_won": winner == 0, "draw": winner is None}, turn=turn)
    return row, set(unseen)


def _play(person: str, ai: str, seed: int, players, secret: bool):
    """(moves, state JSON, winner, last turn, the AI's cards the person never saw) of one whole game."""
    from gameplay import carddb
    from gameplay.core.matches.players import play_game

    engine = carddb.get_engine()
    lists = (deck_list(person), deck_list(ai))
    game = engine.new_game(*lists, seed=seed, first_player=0)
    moves = []
    play_game(game, players, on_decision=lambda g, seat, action: moves.append((seat, action.key)))
    winner = (game.result() or {}).get("winner")
    unseen = never_seen(engine, lists, moves, seed=seed, first_player=0, seat=0) if secret else set()
    return tuple(moves), json.dumps(game.state()), winner, game.turn, frozenset(unseen)


@functools.lru_cache(maxsize=8)
def _played(person: str, ai: str, seed: int, secret: bool):
    from gameplay.core.matches.players import EnginePlayer

    return _play(person, ai, seed, (EnginePlayer("Easy"), EnginePlayer("VeryEasy")), secret)


@pytest.fixture
def small_reviews(settings):
    settings.GAME_REVIEW_MAX_DECISIONS = 2
    settings.GAME_REVIEW_COPIES, settings.GAME_REVIEW_SETTLE, settings.GAME_REVIEW_WORKERS = 4, 3, 2


def signed_in(django_user_model, name):
    user = django_user_model.objects.create_user(name, password="pw-123456")
    client = Client()
    client.force_login(user)
    return user, client


def wait_done(client, url, timeout=240.0) -> dict:
    deadline = time.monotonic() + timeout
    seen = set()
    while time.monotonic() < deadline:
        body = client.get(url).json()
        seen.add(body["status"])
        if body["status"] in ("done", "failed"):
            return {**body, "seen": seen}
        time.sleep(0.5)
    raise AssertionError(f"the review did not finish in {timeout}s (seen {seen})")


def test_a_review_runs_as_a_job_and_only_its_owner_sees_it(game_env, advice_worker, small_reviews,  # noqa: F811
                                                           django_user_model):
    user, client = signed_in(django_user_model, "ana")
    _, other = signed_in(django_user_model, "bob")
    row, secret = finished_game(owner=user)
    assert secret, "the AI should end the game holding a card the person never saw"
    api, page = f"/api/games/{row.pk}/review", f"/games/{row.pk}/review/"

    assert client.get(api).json()["status"] == "none"
    fresh = client.get(page)
    assert fresh.status_code == 200 and b'id="review-start"' in fresh.content
    started = client.post(api)
    assert started.status_code == 202, started.content
    body = wait_done(client, api)
    assert body["status"] == "done", body
    review = GameReview.objects.get(game=row)
    assert (review.progress, review.attempts) == (1.0, 1) and review.finished and not review.error
    result = body["result"]
    assert result["seat"] == 0 and 1 <= result["reviewed"] <= 2 and result["turns"]
    assert all(0 <= t["estimate"] <= 1 for t in result["turns"])
    for d in result["decisions"]:
        assert {"played", "best", "played_value", "best_value", "line", "mistake"} <= set(d)
    again = client.post(api)
    assert again.status_code == 200 and again.json()["status"] == "done"  # one review per game
    assert GameReview.objects.filter(game=row).count() == 1

    shown = client.get(page)
    assert shown.status_code == 200
    text = shown.content.decode()
    assert "<svg" in text and "Your win estimate" in text and 'id="mistake-count"' in text
    for payload in (body, text):  # only what the person could see, and the advisor's suggestions
        assert_no_leak(payload, secret, "the review")
    for where in ("/games/", f"/games/{row.pk}/"):  # your games list and the finished game's page link to it
        assert f'/games/{row.pk}/review/' in client.get(where).content.decode(), where

    # someone else's game, an unknown game: 404 on the page and the API, nothing started
    for c, url in ((other, api), (other, page), (client, f"/api/games/{uuid.uuid4()}/review"),
                   (client, f"/games/{uuid.uuid4()}/review/")):
        assert c.get(url).status_code == 404, url
        assert c.post(url).status_code == 404, url
    assert Client().get(api).status_code == 404  # anonymous


@pytest.mark.timeout(900)  # ~10 judged decisions of 4 VeryHard calls each: minutes on a loaded 2-core machine
def test_a_review_marks_every_skipped_land_drop(game_env, advice_worker, small_reviews,  # noqa: F811
                                               django_user_model, settings):
    """The game of issue 29: the person passes every decision (never plays a land; mono-blue faeries against
    mono-red, VeryEasy) until it loses on turn 10. Its review, run as the site runs one (the job; a real worker on
    the services stack), marks every skipped land drop a mistake with a land as the better line, and the page
    lists them."""
    from gameplay import carddb
    from gameplay.core.matches.decision_review import skipped_land_drops
    from gameplay.core.matches.players import EnginePlayer, PassPlayer

    settings.GAME_REVIEW_MAX_DECISIONS = 40
    user, client = signed_in(django_user_model, "ana")
    row, _ = finished_game(owner=user, person="mono_blue_faeries", ai="mono_red_aggro",
                           players=(PassPlayer(), EnginePlayer("VeryEasy", seed=27)), secret=False)
    assert row.result["winner"] == 1
    skipped = skipped_land_drops(carddb.get_engine(), (deck_list("mono_blue_faeries"), deck_list("mono_red_aggro")),
                                 row.moves, seed=27, first_player=0, seat=0)
    assert len(skipped) >= 8, skipped  # both main phases of each of its turns
    api = f"/api/games/{row.pk}/review"
    assert client.post(api).status_code == 202
    body = wait_done(client, api, timeout=600)
    assert body["status"] == "done", body
    result = body["result"]
    assert result["judge"] == "ensemble" and result["not_reviewed"] == 0
    judged = {d["move"]: d for d in result["decisions"]}
    missed = [i for i in skipped if not (judged.get(i) or {}).get("mistake")]
    assert not missed, [judged.get(i) for i in missed]
    for i in skipped:
        assert judged[i]["played"] == "Pass priority" and judged[i]["best"].startswith("Play ")
    page = client.get(f"/games/{row.pk}/review/").content.decode()
    assert page.count('class="mistake"') == result["mistakes"] >= len(skipped)
    assert 'id="review-rule"' in page and all(judged[i]["best"] in page for i in skipped)


def test_a_game_still_being_played_cannot_be_reviewed(game_env, small_reviews, django_user_model):  # noqa: F811
    from gameplay.play import session

    user, client = signed_in(django_user_model, "ana")
    row, _ = session.create_game("sample:mono_red_aggro", "sample:mono_white_weenie", "engine:VeryEasy", first="you",
                                 user=user, seed=8)
    for method in ("get", "post"):
        got = getattr(client, method)(f"/api/games/{row.pk}/review")
        assert got.status_code == 409 and "still being played" in got.json()["errors"][0]["message"]
        page = getattr(client, method)(f"/games/{row.pk}/review/")
        assert page.status_code == 409 and b"still being played" in page.content
    assert not GameReview.objects.exists()
    old = PlayedGame.objects.filter(pk=row.pk)
    old.update(status="finished", first_player=None)  # a game stored before moves were recorded
    assert client.post(f"/api/games/{row.pk}/review").status_code == 409


def test_the_sweep_runs_again_a_review_whose_worker_died(game_env, settings, django_user_model):  # noqa: F811
    user, _ = signed_in(django_user_model, "ana")
    row, _ = finished_game(owner=user)
    review, fresh = service.start_review(row)
    assert fresh and review.status == "queued"
    long_ago = timezone.now() - timedelta(seconds=settings.MTG_JOB_STALE_SECONDS + 5)
    GameReview.objects.filter(pk=review.pk).update(status="running", attempts=1, heartbeat=long_ago, started=long_ago)
    assert service.claim(review.pk) is not None  # a stale review may be claimed again...
    GameReview.objects.filter(pk=review.pk).update(heartbeat=timezone.now())
    assert service.claim(review.pk) is None  # ...but not one a live worker stamps
    GameReview.objects.filter(pk=review.pk).update(heartbeat=long_ago, attempts=1)
    assert service.recover_stale_reviews() == [review.pk]
    assert GameReview.objects.get(pk=review.pk).status == "queued"
    GameReview.objects.filter(pk=review.pk).update(status="running", heartbeat=long_ago,
                                                   attempts=settings.MTG_JOB_MAX_ATTEMPTS)
    assert service.recover_stale_reviews() == []
    failed = GameReview.objects.get(pk=review.pk)
    assert failed.status == "failed" and "worker running this review stopped" in failed.error
    again, fresh = service.start_review(row)  # a failed review may be started again
    assert fresh and again.status == "queued" and again.attempts == 0 and not again.error


def test_a_finished_game_keeps_the_ais_unseen_cards_hidden(game_env, django_user_model):  # noqa: F811
    """At game over the engine exiles every card of the losing side (hand and library): the finished game's page
    and API must still not name an AI card the person never saw."""
    user, client = signed_in(django_user_model, "cy")
    row, secret = finished_game(owner=user)
    assert row.result["winner"] == 0 and secret, "the AI should lose holding cards the person never saw"
    api = client.get(f"/api/games/{row.pk}")
    page = client.get(f"/games/{row.pk}/")
    assert api.status_code == 200 and page.status_code == 200
    assert_no_leak(api.json(), secret, "the finished game's API answer")
    assert_no_leak(page.content.decode(), secret, "the finished game's page")


def test_a_review_stored_by_the_old_judge_still_reads(django_user_model):
    """A review stored before the ensemble judge (no ``judge``, values instead of vote shares) shows its mistakes
    as it did; one stored by the ensemble shows the shares and the rule."""
    user, client = signed_in(django_user_model, "ana")
    row = PlayedGame.objects.create(owner=user, human_deck_name="Mono red", human_deck=[], ai_deck_name="Dimir",
                                    ai_deck=[], opponent="engine:VeryEasy", human_seat=0, seed=1, first_player=0,
                                    moves=[], decisions=0, state="{}", status="finished", result={"winner": 1})
    old = {"seat": 0, "turns": [{"turn": 1, "estimate": 0.5}], "mistakes": 1, "reviewed": 1, "not_reviewed": 0,
           "settings": {"level": "flat", "seconds": 6.0, "simulations": 2, "max_decisions": 40, "margin": 0.1,
                        "determinizations": 4},
           "decisions": [{"move": 3, "turn": 1, "phase": "PreCombatMain", "played": "Pass priority", "played_value": 0.2,
                          "best": "Play Mountain", "best_value": 0.45, "loss": 0.25, "mistake": True,
                          "line": ["Play Mountain"], "alternatives": [], "estimate": 0.45, "forced": False}]}
    review = GameReview.objects.create(game=row, status="done", progress=1.0, result=old, settings=old["settings"])
    page = client.get(f"/games/{row.pk}/review/")
    text = page.content.decode()
    assert page.status_code == 200 and text.count('class="mistake"') == 1 and "0.45" in text and "2 simulations" in text
    assert 'id="review-rule"' not in text
    new = {**old, "judge": "ensemble", "settings": service.review_settings().to_dict(),
           "decisions": [{**old["decisions"][0], "played_share": 0.0, "best_share": 1.0, "votes": 4, "same": False}]}
    GameReview.objects.filter(pk=review.pk).update(result=new)
    text = client.get(f"/games/{row.pk}/review/").content.decode()
    assert text.count('class="mistake"') == 1 and "100%" in text and "of 4" in text and 'id="review-rule"' in text
    assert client.get(f"/api/games/{row.pk}/review").json()["result"]["decisions"][0]["played_share"] == 0.0
