"""Abuse limits on the game socket: advice over the client's rate is refused with an error message (429, when to
retry), no search starts, and the socket stays open."""
from __future__ import annotations

import asyncio

import pytest

from plumbing import limits
from tests.gameplay import play_fixtures
from tests.limits import turn_on
from tests.ws import connect_path, guest_session, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]
game_env = play_fixtures.game_env


@pytest.fixture
def limits_on(settings, monkeypatch):
    return turn_on(settings, monkeypatch)


def test_advice_over_the_rate_is_refused_on_the_socket_which_stays_open(game_env, limits_on, monkeypatch):
    from gameplay import tasks
    from gameplay.play import session

    set_limits, _ = limits_on
    set_limits(advice="1/min")
    started = []
    monkeypatch.setattr(tasks, "enqueue_advice", lambda *args, **kwargs: started.append(args) or "ticket")
    owner = guest_session()
    row, _ = session.create_game("sample:mono_white_weenie", "sample:mono_blue_faeries", "engine:VeryEasy",
                                 first="you", session_key=owner, seed=3)

    async def scenario():
        ws, ok, _ = await connect_path(f"/ws/games/{row.pk}/", owner, timeout=20)
        assert ok
        view = await receive_until(ws, lambda m: m["type"] == "game", timeout=30)
        await ws.send_json_to({"v": 1, "action": "advise", "revision": view["revision"], "level": "fast"})
        await asyncio.sleep(0.5)
        assert len(started) == 1  # within the quota: the advice was queued
        log = []
        for _ in range(2):
            await ws.send_json_to({"v": 1, "action": "advise", "revision": view["revision"], "level": "fast"})
            error = await receive_until(ws, lambda m: m["type"] == "error", timeout=30, log=log)
            assert error["code"] == 429 and error["context"] == "advice" and error["limit"] == "advice"
            assert error["retry_after"] >= 1 and f"Try again in {error['retry_after']} s" in error["message"]
        await ws.send_json_to({"v": 1, "action": "ping"})
        await receive_until(ws, lambda m: m["type"] == "pong", timeout=30, log=log)  # still open
        await ws.disconnect()

    asyncio.run(scenario())
    assert len(started) == 1  # nothing started for the refused requests
    with pytest.raises(limits.Refused):  # the socket and the API share the client's quota
        limits.check("advice", limits.Client(f"guest:{owner}"))
