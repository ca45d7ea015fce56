"""The yardstick's Celery task ``gameplay.strength_game``: a game played on a worker (the services stack's real worker;
eager on the embedded stack) is the game the bench's local processes play for the same job."""
from __future__ import annotations

import pytest

from gameplay.core.matches import yardstick as strength
from tests.gameplay.conftest import sample_deck_lists
from tests.gameplay.play_fixtures import advice_worker, game_env  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_worker_plays_the_same_game_as_a_local_process(game_env, advice_worker):  # noqa: F811
    from gameplay import carddb
    from gameplay.tasks import strength_game

    cards = {name: deck["main"] for name, deck in sample_deck_lists().items()}
    job = strength.jobs([("mono_red_aggro", "dimir_terror")], seeds=1, seed=77, opponent="engine:Easy",
                        max_decisions=80)[2]
    # the test waits like the bench does, outside any task; an eager task run earlier in the suite may leave
    # Celery believing this thread is inside one
    remote = strength_game.apply_async(args=[job, "engine:Easy", cards]).get(timeout=120, disable_sync_subtasks=False)
    local = strength.play(carddb.get_engine(), job, "engine:Easy", cards)
    assert not remote.get("error") and remote["decisions"] == 80  # cut at the cap: a draw, scored half
    for field in ("decks", "seed", "ours_seat", "player", "winner", "score", "turns", "decisions", "ours_decisions"):
        assert remote[field] == local[field], field
