"""ws/games/<id>/ with channels.testing: the socket bound to the owner, actions, bad messages, live advice.

On the embedded stack the advice task runs eagerly in a background thread of the consumer's process;
on the services stack it runs in a real Celery worker and its progress comes back through Redis.
"""
from __future__ import annotations

import asyncio
import functools
import json

import pytest

from gameplay.play import session
from gameplay.models import PlayedGame
from tests.ws import connect_path, guest_session, recorded
from tests.ws import receive_until as _receive_until
from tests.gameplay.play_fixtures import (ThinkingPlayer, advice_worker, game_env, hidden_cards,  # noqa: F401
                                          play_to_a_choice)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]


receive_until = functools.partial(_receive_until, timeout=30)  # advice can take a while under load


async def connect(game_id, session_key=None, log=None):
    """A socket to the game; with ``log``, every message it receives is kept there (to be scanned)."""
    comm, ok, code = await connect_path(f"/ws/games/{game_id}/", session_key, timeout=20)
    return (recorded(comm, log) if log is not None else comm), ok, code


def test_owner_plays_over_the_socket_and_bad_messages_get_errors(game_env, hidden_cards):  # noqa: F811
    owner, other = guest_session(), guest_session()
    received = []
    row, _ = session.create_game("sample:mono_white_weenie", "sample:mono_blue_faeries", "engine:VeryEasy",
                                 first="you", session_key=owner, seed=3)

    async def scenario():
        comm, ok, code = await connect(row.pk, other)  # someone else's session
        assert not ok and code == 4403
        comm, ok, code = await connect(row.pk)  # no session at all
        assert not ok and code == 4403
        comm, ok, code = await connect("00000000-0000-0000-0000-000000000000", owner)
        assert not ok and code == 4404

        ws, ok, _ = await connect(row.pk, owner, received)
        assert ok
        view = await receive_until(ws, lambda m: m["type"] == "game")
        assert view["revision"] == 1 and view["your_decision"] and "hand" in view["board"]["players"][0]
        assert "hand" not in view["board"]["players"][1]

        for bad, text in [("not json", "JSON"), ('{"v": 2, "action": "act"}', "version"),
                          ('{"v": 1, "action": "dance"}', "unknown action"), ("[1]", "JSON objects"),
                          ('{"v": 1, "action": "act"}', "key"),
                          ('{"v": 1, "action": "act", "key": "x", "revision": "one"}', "revision"),
                          ('{"v": 1, "action": "act", "key": "x", "pass_until": "forever"}', "pass_until"),
                          ('{"v": 1, "action": "act", "key": "x", "pass_until": ["my_turn"]}', "pass_until"),
                          ('{"v": 1, "action": "advise", "seconds": -1}', "positive")]:
            await ws.send_to(text_data=bad)
            err = await receive_until(ws, lambda m: m["type"] == "error")
            assert text in err["message"] and err["code"] == 400
        await ws.send_to(bytes_data=b"\xff\xfe")
        assert "UTF-8" in (await receive_until(ws, lambda m: m["type"] == "error"))["message"]

        keep = next(a["key"] for a in view["actions"] if a["label"] == "Keep hand")
        await ws.send_json_to({"v": 1, "action": "act", "key": keep, "revision": 1, "client_action_id": "k1"})
        acted = await receive_until(ws, lambda m: m["type"] == "acted")
        assert acted == {"v": 1, "type": "acted", "client_action_id": "k1", "duplicate": False}
        after = await receive_until(ws, lambda m: m["type"] == "game")
        assert after["revision"] == 2

        await ws.send_json_to({"v": 1, "action": "act", "key": keep, "revision": 2, "client_action_id": "k2"})
        err = await receive_until(ws, lambda m: m["type"] == "error")
        assert err["code"] == 409 and err["client_action_id"] == "k2"
        resync = await receive_until(ws, lambda m: m["type"] == "game")  # the client is re-synced
        assert resync["revision"] == 2
        await ws.send_json_to({"v": 1, "action": "act", "key": keep, "revision": 1, "client_action_id": "k1"})
        assert (await receive_until(ws, lambda m: m["type"] == "acted"))["duplicate"] is True
        await ws.send_json_to({"v": 1, "action": "act", "key": after["actions"][0]["key"], "revision": 1})
        stale = await receive_until(ws, lambda m: m["type"] == "error")
        assert stale["code"] == 409 and "stale" in stale["message"]

        await ws.send_json_to({"v": 1, "action": "ping"})
        assert (await receive_until(ws, lambda m: m["type"] == "pong"))["t"] > 0
        await ws.disconnect()

    asyncio.run(scenario())
    assert PlayedGame.objects.get(pk=row.pk).revision == 2
    hidden_cards.check_log(received)  # nothing of the AI's hand or library in any message


def test_advice_streams_to_the_socket(game_env, advice_worker, hidden_cards):  # noqa: F811
    owner = guest_session()
    row, view = play_to_a_choice(owner)
    keys = {a["key"] for a in view["actions"]}
    received = []

    async def scenario():
        ws, ok, _ = await connect(row.pk, owner, received)
        assert ok
        await receive_until(ws, lambda m: m["type"] == "game")
        await ws.send_json_to({"v": 1, "action": "advise", "revision": view["revision"], "level": "nope"})
        err = await receive_until(ws, lambda m: m["type"] == "error", timeout=60)
        assert err["context"] == "advice" and "unknown level" in err["message"]

        # The default level: the engine's VeryHard AI on honest copies, streamed after each batch of copies.
        await ws.send_json_to({"v": 1, "action": "advise", "revision": view["revision"]})
        log = []
        voted = await receive_until(ws, lambda m: m["type"] == "advice" and m["done"], timeout=90, log=log)
        rec, vote = voted["recommendation"], voted["recommendation"]["vote"]
        assert voted["level"] == "vote" and vote["level"] == "vote" and vote["engine_level"] == "VeryHard"
        assert rec["action"]["key"] in keys and rec["playable"] and not vote["searched"] and not vote["fallback"]
        if not rec["forced"]:
            assert 0 < voted["position_estimate"] == rec["win_estimate"] < 1  # the value model, on the vote's copies
            # with its spread over those copies ("uncertain" on the page when they disagree)
            assert voted["position_low"] <= voted["position_estimate"] <= voted["position_high"]
            assert 1 <= voted["position_copies"] <= vote["copies_dealt"] and isinstance(voted["position_uncertain"], bool)
            assert 1 <= vote["copies"] <= vote["max_copies"] and vote["copies_dealt"] >= vote["copies"]
            assert sum(a["votes"] for a in rec["alternatives"]) == vote["copies"]
            assert rec["alternatives"][0]["key"] == rec["action"]["key"]
            assert rec["alternatives"][0]["share"] == max(a["share"] for a in rec["alternatives"]) > 0
            streamed = [m["recommendation"] for m in log if m["type"] == "advice" and not m["done"]
                        and m["recommendation"]]
            assert streamed and all(r["vote"]["copies"] <= vote["copies"] for r in streamed)

        await ws.send_json_to({"v": 1, "action": "advise", "revision": view["revision"], "seconds": 3,
                               "simulations": 4, "algorithm": "mcts"})
        log = []
        done = await receive_until(ws, lambda m: m["type"] == "advice" and m["done"], timeout=90, log=log)
        progress = [m for m in log if m["type"] == "advice" and not m["done"]]
        assert progress, "no progress before the final advice"
        rec = done["recommendation"]
        assert rec["action"]["key"] in keys and rec["playable"] and 0 <= rec["win_estimate"] <= 1
        assert rec["alternatives"] and all("visits" in a and "value" in a for a in rec["alternatives"])
        assert done["revision"] == view["revision"] and done["algorithm"] == "mcts"
        assert 0 < done["position_estimate"] < 1  # the shipped value model, on re-dealt copies
        assert done["position_low"] <= done["position_estimate"] <= done["position_high"]
        assert done["position_copies"] == 4 and done["position_uncertain"] == (
            done["position_high"] - done["position_low"] >= 0.25)
        assert done["position_source"].endswith(", calibrated")  # the page names what the estimate is made of
        if not rec["forced"]:  # the headline and the table on one scale (docs/game-advice.md)
            own = next(a for a in rec["alternatives"] if a["key"] == rec["action"]["key"])
            assert rec["win_estimate"] == done["position_estimate"] == own["value"]

        # Asking again and acting at once: the action wins, the stale search stops, nothing breaks.
        await ws.send_json_to({"v": 1, "action": "advise", "revision": view["revision"], "level": "fast"})
        await ws.send_json_to({"v": 1, "action": "act", "key": rec["action"]["key"], "revision": view["revision"],
                               "client_action_id": "best"})
        acted = await receive_until(ws, lambda m: m["type"] in ("acted", "error") and m.get("context") != "advice",
                                    timeout=60)
        assert acted["type"] == "acted", acted
        after = await receive_until(ws, lambda m: m["type"] == "game" and m["revision"] > view["revision"], timeout=60)
        await ws.disconnect()
        return done, after

    done, after = asyncio.run(scenario())
    stored = PlayedGame.objects.get(pk=row.pk)
    assert stored.revision == after["revision"] and any(e.get("id") == "best" for e in stored.log)
    assert json.dumps(done)  # plain JSON
    assert any(m["type"] == "advice" for m in received)
    hidden_cards.check_log(received)  # the advice names none of the AI's hidden cards either


def test_against_a_slow_ai_your_action_shows_before_its_reply(game_env, hidden_cards, monkeypatch):  # noqa: F811
    owner = guest_session()
    received = []
    row, _ = session.create_game("sample:mono_red_aggro", "sample:dimir_terror", "search:fast", first="you",
                                 session_key=owner, seed=5)
    thinker = ThinkingPlayer()
    monkeypatch.setattr(session, "_opponent", lambda _row: thinker)

    async def scenario():
        ws, ok, _ = await connect(row.pk, owner, received)
        assert ok
        view = await receive_until(ws, lambda m: m["type"] == "game")
        keep = next(a["key"] for a in view["actions"] if a["label"] == "Keep hand")
        await ws.send_json_to({"v": 1, "action": "act", "key": keep, "revision": 1, "client_action_id": "p1"})
        try:
            early = await receive_until(ws, lambda m: m["type"] == "game" and m.get("provisional"))
            assert not thinker.go.is_set()  # it came while the AI was still thinking
        finally:
            thinker.go.set()
        # The person's action, no decision for them, still the stored revision; nothing hidden.
        assert early["revision"] == 1 and early["actions"] == [] and not early["your_decision"]
        assert [e["text"] for e in early["log"] if e["who"] == "you"] == ["Keep hand"]
        assert "hand" not in early["board"]["players"][1]
        assert (await receive_until(ws, lambda m: m["type"] == "acted"))["client_action_id"] == "p1"
        final = await receive_until(ws, lambda m: m["type"] == "game")
        assert final["revision"] == 2 and not final.get("provisional") and final["your_decision"]
        await ws.disconnect()

    asyncio.run(scenario())
    assert thinker.started.is_set() and PlayedGame.objects.get(pk=row.pk).revision == 2
    assert any(m.get("provisional") for m in received)
    hidden_cards.check_log(received)
