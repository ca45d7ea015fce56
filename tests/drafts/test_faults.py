"""A draft pod while its Redis (channel layer, cache, Celery broker) is killed and comes back empty, and while
PostgreSQL drops every connection (services stack, a private Redis: tests/faults.py).

The clients behave like the pod page (static/js/live.js): they reconnect with backoff when their socket closes
and resend the pick they have no answer to, with the same client_pick_id. They also count the times they heard
nothing for STALL seconds while the draft went on (a socket the server no longer sends to); such a client asks
for a sync, as the bench's clients do, so a stall shows in the counts instead of hanging the test."""
from __future__ import annotations

import asyncio
import json

import psycopg
import pytest
import websockets
from django.db import connection

from decks.models import Deck
from decks.tasks import analyze_deck
from drafts.models import DraftPick
from tests.drafts.test_pod_live import check_complete, two_guest_pod
from tests.faults import daphne, record, wait_until, worker

pytestmark = [pytest.mark.faults, pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]
STALL = 5.0


class Seat:
    """One person's pod page: picks the last card of each pack; reconnects and resends like live.js."""

    def __init__(self, base: str, draft_id, session_key: str, seat: int):
        self.url = base.replace("http://", "ws://") + f"/ws/pods/{draft_id}/"
        self.headers = {"Cookie": f"sessionid={session_key}"}
        self.seat, self.log, self.pending, self.acked = seat, [], None, {}
        self.reconnects = self.stalls = self.resent = 0
        self.complete = False

    async def run(self, start: bool = False, stop_after: int | None = None) -> None:
        retry = 0
        while not self.complete:
            try:
                async with websockets.connect(self.url, origin="http://127.0.0.1", additional_headers=self.headers,
                                              open_timeout=10) as ws:
                    retry = 0
                    if start:
                        await ws.send(json.dumps({"v": 1, "action": "start"}))
                        start = False
                    if self.pending:  # the unanswered pick, same id
                        self.resent += 1
                        await ws.send(json.dumps(self.pending))
                    if await self._listen(ws, stop_after):
                        return
            except (OSError, websockets.exceptions.WebSocketException, asyncio.TimeoutError):
                pass
            self.reconnects += 1
            assert self.reconnects < 60, "the pod never came back"
            await asyncio.sleep(min(5.0, 0.25 * 2 ** retry))
            retry += 1

    async def _listen(self, ws, stop_after) -> bool:
        while True:
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout=STALL)
            except asyncio.TimeoutError:
                self.stalls += 1
                assert self.stalls <= 6, f"seat {self.seat} hears nothing (its pick {self.pending} unanswered)"
                await ws.send(json.dumps({"v": 1, "action": "sync"}))
                continue
            msg = json.loads(raw)
            self.log.append(msg)
            if msg["type"] == "picked":
                self.acked[msg["client_pick_id"]] = msg["card"]
                if self.pending and self.pending["client_pick_id"] == msg["client_pick_id"]:
                    self.pending = None
            if msg["type"] != "seat":
                continue
            if msg["complete"]:
                self.complete = True
                return True
            if stop_after is not None and len(msg["pool"]) >= stop_after:
                return True
            slot = (msg["pack_number"], msg["pick_number"]) if msg["pack"] else None
            if slot and not (self.pending and (self.pending["pack_number"], self.pending["pick_number"]) == slot):
                self.pending = {"v": 1, "action": "pick", "card": msg["pack"][-1]["name"], "pack_number": slot[0],
                                "pick_number": slot[1], "client_pick_id": f"{self.seat}-{slot[0]}-{slot[1]}"}
                await ws.send(json.dumps(self.pending))


def counts(draft, seats: list[Seat]) -> dict:
    """Lost: a pick acknowledged to a client that is not in the database; duplicated: a client pick id stored
    twice, or a seat with more than its 42 picks."""
    rows = DraftPick.objects.filter(seat__draft=draft)
    stored = {}
    for cid, card in rows.exclude(client_pick_id=None).values_list("client_pick_id", "pick"):
        stored.setdefault(cid, []).append(card)
    lost = sum(1 for s in seats for cid, card in s.acked.items() if card not in stored.get(cid, []))
    per_seat = {n: rows.filter(seat__seat=n).count() for n in range(8)}
    duplicated = sum(len(v) - 1 for v in stored.values()) + sum(max(0, c - 42) for c in per_seat.values())
    return {"lost_picks": lost, "duplicated_picks": duplicated, "picks": rows.count(),
            "reconnects": sum(s.reconnects for s in seats), "stalls": sum(s.stalls for s in seats),
            "resent_picks": sum(s.resent for s in seats)}


def draft_through(base: str, fault) -> tuple:
    """Two people (and six bots) draft a pod through Daphne; ``fault()`` runs ten picks in (on this thread: the
    clients wait for it, as their sockets do for the server)."""
    draft, a, b = two_guest_pod()
    ana, ben = Seat(base, draft.pk, a, 0), Seat(base, draft.pk, b, 1)

    async def scenario():
        await asyncio.gather(ana.run(start=True, stop_after=10), ben.run(stop_after=10))
        rest = asyncio.gather(ana.run(), ben.run())
        await asyncio.sleep(0.3)  # picks in flight
        fault()
        await rest

    asyncio.run(scenario())
    return draft, [ana, ben]


def test_redis_killed_and_back_empty_mid_draft_loses_and_duplicates_no_pick(draft_set, private_services, served,
                                                                          tmp_path):
    redis = private_services
    web = served(daphne(tmp_path))
    w = served(worker(tmp_path))
    base = f"http://127.0.0.1:{web.port}"
    draft, seats = draft_through(base, lambda: redis.restart(down_for=1.0))
    out = counts(draft, seats)
    # the worker is back on the new Redis too: it takes the next task
    deck = Deck.objects.create(name="after the restart", list_hash="x")
    analyze_deck.delay(deck.pk)
    analysed = wait_until(lambda: Deck.objects.filter(pk=deck.pk, analyzed_at__isnull=False).exists(), 60,
                          "the worker taking a task after the restart")
    record("pod: Redis killed and restarted empty mid-draft", **out, worker_recovered=int(bool(analysed)))
    check_complete(draft, seats)
    assert out["lost_picks"] == 0 and out["duplicated_picks"] == 0 and out["picks"] == 8 * 42
    assert out["reconnects"] >= 1 and out["stalls"] == 0, out
    assert w.proc.poll() is None and web.proc.poll() is None


def harness_pid() -> int:
    """The backend of this test's own Django connection."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        return cur.fetchone()[0]


def terminate_backends(spare: int) -> int:
    """What a PostgreSQL restart or an operator does to the site: every session of the test database ends,
    but the harness's own (``spare``, and the one that asks). Returns how many ended."""
    with psycopg.connect(**pg_params(), autocommit=True) as conn:
        return conn.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
                            "current_database() AND pid <> pg_backend_pid() AND pid <> %s", [spare]).fetchone()[0]


def test_postgresql_connections_terminated_mid_draft_lose_and_duplicate_no_pick(draft_set, private_services, served,
                                                                              tmp_path):
    """The pod sockets' database thread keeps its connection (POD_DB_CONN_MAX_AGE): PostgreSQL ends it, and the
    picks of that moment fail as a whole (one transaction each); the socket closes, the client resends."""
    web = served(daphne(tmp_path))
    base = f"http://127.0.0.1:{web.port}"
    terminated, spare = [], harness_pid()
    draft, seats = draft_through(base, lambda: terminated.append(terminate_backends(spare)))
    out = counts(draft, seats)
    record("pod: PostgreSQL connections terminated mid-draft", **out, sessions_terminated=terminated[0])
    check_complete(draft, seats)
    assert terminated[0] >= 1  # Daphne's kept connection at least
    assert out["lost_picks"] == 0 and out["duplicated_picks"] == 0 and out["picks"] == 8 * 42
    with psycopg.connect(**pg_params()) as conn:  # nothing of the dead sessions is left holding a lock
        assert conn.execute("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
                            "WHERE a.datname = current_database() AND NOT l.granted").fetchone()[0] == 0


def pg_params() -> dict:
    s = connection.settings_dict
    return {"host": s["HOST"], "port": s["PORT"], "user": s["USER"], "password": s["PASSWORD"], "dbname": s["NAME"]}
