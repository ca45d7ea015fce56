"""A gauntlet game and an advice search whose Celery worker is killed with ``kill -9`` mid-work (services stack,
a private Redis: tests/faults.py). The game: a fresh worker's sweep finds it without a heartbeat and plays it
again, and the run finishes with every game counted once. The advice: the broker hands its unacknowledged
message to the fresh worker, which searches again and answers, once."""
from __future__ import annotations

import time

import pytest
from django.core.cache import cache

from gameplay.gauntlet import service
from gameplay.gauntlet.models import GauntletGame, GauntletRun
from gameplay.gauntlet.tasks import start_run
from gameplay.models import PlayedGame
from gameplay.tasks import _advice_key, enqueue_advice
from tests.faults import record, wait_until, worker
from tests.gameplay.play_fixtures import game_env, play_to_a_choice  # noqa: F401
from tests.ws import guest_session

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]


def test_a_gauntlet_game_whose_worker_is_killed_is_played_again_and_counted_once(game_env, private_services,  # noqa: F811
                                                                                 served, tmp_path):
    w = worker(tmp_path)
    served(w)
    run = start_run([service.sample_deck("mono_red_aggro"), service.sample_deck("mono_white_weenie")], 2,
                    "engine:Medium", seed=5)
    game = wait_until(lambda: GauntletGame.objects.filter(run=run, status="running").first(), 120, "a game playing")
    time.sleep(0.5)  # into the game
    assert GauntletGame.objects.get(pk=game.pk).status == "running", "the game ended before the kill: make it longer"
    assert w.kill9() >= 2

    served(worker(tmp_path, "worker2"))
    row = wait_until(lambda: GauntletRun.objects.filter(pk=run.pk, status__in=("done", "failed")).first(), 180,
                     "the run finishing after the restart")
    games = {g.index: g for g in row.games.all()}
    record("gauntlet game: worker killed mid-game", queued=row.total,
           succeeded_after_retry=int(games[game.index].status == "done" and games[game.index].attempts > 1),
           failed_with_reason=sum(g.status == "error" for g in games.values()),
           stuck=GauntletGame.objects.filter(status="running").count(), counted=row.done, total=row.total,
           attempts={i: g.attempts for i, g in games.items()})
    assert (row.status, row.done, row.errors, row.total) == ("done", 2, 0, 2)
    assert games[game.index].attempts == 2 and all(g.status == "done" for g in games.values())
    assert row.results["summary"]["games"]["scored"] == 2  # each game counted once
    assert not GauntletGame.objects.filter(status="running").exists()


def test_an_advice_search_whose_worker_is_killed_is_searched_again_and_answers_once(game_env, private_services,  # noqa: F811
                                                                                    served, tmp_path):
    w = worker(tmp_path)
    served(w)
    owner = guest_session()
    row, view = play_to_a_choice(owner)
    ticket = enqueue_advice(row.pk, view["revision"], algorithm="mcts", seconds=4, simulations=10_000)
    wait_until(lambda: cache.get(_advice_key(ticket)) == 1, 60, "the search starting")
    time.sleep(1.0)  # into the search
    assert PlayedGame.objects.get(pk=row.pk).advice is None
    assert w.kill9() >= 2

    served(worker(tmp_path, "worker2"))
    wait_until(lambda: cache.get(_advice_key(ticket)) in (2, "answered"), 60, "the message handed out again")
    runs = cache.get(_advice_key(ticket))
    stored = wait_until(lambda: PlayedGame.objects.get(pk=row.pk).advice, 60, "the advice after the restart")
    record("advice search: worker killed mid-search", queued=1, succeeded_after_retry=int(bool(stored.get("done"))),
           failed_with_reason=0, stuck=int(cache.get(_advice_key(ticket)) != "answered"), runs=runs)
    assert runs == 2  # searched again once
    assert stored["done"] and stored["revision"] == view["revision"]
    assert stored["recommendation"]["action"]["key"] in {a["key"] for a in view["actions"]}
    assert wait_until(lambda: cache.get(_advice_key(ticket)) == "answered", 10, "the request answered")
