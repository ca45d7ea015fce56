"""Root parallelism across Celery workers: a long advice search sends a part of itself to a real worker
(services stack) and sums that worker's root statistics with its own; the embedded stack searches alone."""
from __future__ import annotations

import pytest

from gameplay.play import advice
from gameplay.tasks import advice_spread
from tests.gameplay.play_fixtures import advice_worker, game_env, play_to_a_choice  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]


def test_a_long_search_spreads_over_a_worker(game_env, advice_worker, settings):  # noqa: F811
    from gameplay.core.search.base import Budget

    settings.GAME_ADVICE_SPREAD_PARTS = 1
    settings.GAME_ADVICE_SPREAD_MIN_SECONDS = 2
    assert advice_spread(Budget(seconds=1)) == (1, None)  # too short to pay for a part
    row, view = play_to_a_choice("s" * 32)
    row.refresh_from_db()
    out = advice.advise_state(row.state, row.human_seat, seconds=30, simulations=8, cap=30, spread_for=advice_spread)
    assert out["action"]["key"] in {a["key"] for a in view["actions"]} and out["playable"]
    if settings.CELERY_TASK_ALWAYS_EAGER:  # eager tasks would run one after the other: no spread
        assert advice_spread(Budget(seconds=60)) == (1, None) and out["workers"] == 1
    else:
        assert advice_spread(Budget(seconds=60))[0] == 2
        assert out["workers"] == 2, out  # the worker's part was merged
        assert out["simulations"] == 8 and sum(a["visits"] or 0 for a in out["alternatives"]) == 8
