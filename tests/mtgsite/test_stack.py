"""The shell with real services: a Celery worker writes to the database, a websocket round trip
goes through Daphne and the channel layer. Run on both stacks by `make test`: on `services` the
worker, Daphne and Redis are real processes; on `embedded` the same code path runs eagerly."""
from __future__ import annotations

import asyncio
import json
import time
import urllib.request

import pytest
import websockets
from django.conf import settings
from django.db import connection

from decks.core.decklist import parse_decklist
from decks.models import Deck
from decks.services import card_index, save_parsed_deck

BURN = """4 Goblin Guide
4 Monastery Swiftspear
4 Eidolon of the Great Revel
4 Lightning Bolt
4 Lava Spike
4 Rift Bolt
4 Skewer the Critics
4 Searing Blaze
4 Skullcrack
4 Light Up the Stage
4 Inspiring Vantage
4 Sacred Foundry
12 Mountain

Sideboard
3 Path to Exile
4 Relentless Rats
"""


def make_deck() -> Deck:
    result = parse_decklist(BURN, card_index())
    assert result.ok, result.errors
    return save_parsed_deck(result.deck, "modern", "Burn")


def ws_url(base: str, deck_id: int) -> str:
    return base.replace("http://", "ws://") + f"/ws/decks/{deck_id}/"


async def exchange(url: str, messages: list, until: str, timeout: float = 30.0) -> list[dict]:
    """Send messages, collect replies until one of type `until` arrives."""
    received = []
    async with websockets.connect(url, origin="http://127.0.0.1", open_timeout=10) as ws:
        for m in messages:
            await ws.send(m if isinstance(m, str) else json.dumps(m))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reply = json.loads(await asyncio.wait_for(ws.recv(), timeout=deadline - time.monotonic()))
            received.append(reply)
            if reply["type"] == until:
                return received
    raise AssertionError(f"no {until!r} message; got {received}")


@pytest.mark.services
def test_stack_is_really_services(transactional_db):
    assert connection.vendor == "postgresql"
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == settings.CHANNEL_LAYER_BACKENDS[settings.MTG_CHANNEL_LAYER]
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"].endswith(("RedisChannelLayer", "RedisPubSubChannelLayer"))
    assert settings.CELERY_TASK_ALWAYS_EAGER is False


def test_embedded_stack_settings(db):
    if settings.STACK != "embedded":
        pytest.skip("embedded-stack check")
    assert connection.vendor == "sqlite"
    assert settings.CELERY_TASK_ALWAYS_EAGER is True


@pytest.mark.services
def test_real_celery_worker_writes_to_database(catalogue, celery_worker_process):
    from decks.tasks import analyze_deck

    deck = make_deck()
    result = analyze_deck.delay(deck.id).get(timeout=60)
    assert result["deck"] == deck.id
    deck.refresh_from_db()
    assert deck.analyzed_at is not None
    assert "modern" in deck.analysis["legal_in"]
    # Relentless Rats is not played in Pauper lists: the sample says it is not legal there.
    assert "pauper" not in deck.analysis["legal_in"]


def test_websocket_round_trip_through_daphne(catalogue, daphne_server, request):
    """Client -> Daphne -> (Celery worker via Redis | eager) -> channel layer -> Daphne -> client."""
    if settings.STACK == "services":
        request.getfixturevalue("celery_worker_process")
    deck = make_deck()
    replies = asyncio.run(exchange(ws_url(daphne_server, deck.id), [{"v": 1, "action": "analyze"}], "analysis"))
    assert replies[0] == {"v": 1, "type": "queued"}
    analysis = replies[-1]["analysis"]
    assert analysis["deck"] == deck.id and analysis["main_count"] == 60 and analysis["side_count"] == 7
    deck.refresh_from_db()
    assert deck.analysis == analysis  # the worker wrote what the socket delivered


def test_websocket_bad_messages_get_clear_errors(catalogue, daphne_server):
    deck = make_deck()
    url = ws_url(daphne_server, deck.id)
    for bad, fragment in [("not json", "JSON"), ("[1, 2]", "JSON objects"), ({"v": 99, "action": "analyze"}, "version"),
                          ({"v": 1, "action": "delete"}, "Unknown action")]:
        replies = asyncio.run(exchange(url, [bad], "error", timeout=10))
        assert fragment in replies[-1]["message"]
    # The socket survived the bad messages and nothing was written.
    deck.refresh_from_db()
    assert deck.analysis is None


def test_websocket_unknown_deck_is_refused(catalogue, daphne_server):
    async def attempt():
        with pytest.raises(websockets.exceptions.WebSocketException):
            async with websockets.connect(ws_url(daphne_server, 999999), origin="http://127.0.0.1") as ws:
                await asyncio.wait_for(ws.recv(), timeout=10)
    asyncio.run(attempt())


def test_daphne_serves_pages_and_static(catalogue, daphne_server):
    with urllib.request.urlopen(daphne_server + "/cards/?q=bolt", timeout=10) as resp:
        assert resp.status == 200
        assert "Lightning Bolt" in resp.read().decode()
    with urllib.request.urlopen(daphne_server + "/static/css/site.css", timeout=10) as resp:
        assert resp.status == 200
