"""Real processes: two websocket clients draft a whole pod with six bots through Daphne, the Redis
channel layer and PostgreSQL; a Celery worker takes the timed-out pick of a seat nobody watches,
and a Daphne restart mid-draft loses and duplicates nothing."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import timedelta

import pytest
import websockets
from django.contrib.sessions.backends.db import SessionStore
from django.utils import timezone

from drafts.pods import service
from drafts.models import DraftPick, DraftSeat
from tests.conftest import ROOT, _stop, service_env, wait_for_port
from tests.drafts.conftest import PickLog

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]


def guest() -> str:
    s = SessionStore()
    s["guest"] = True
    s.create()
    return s.session_key


class Drafter:
    """One person's socket: picks the last card of each pack, resends an unanswered pick after a
    reconnect (same client_pick_id), and keeps every message it was sent."""

    def __init__(self, base, draft_id, session_key, seat):
        self.url = base.replace("http://", "ws://") + f"/ws/pods/{draft_id}/"
        self.headers = {"Cookie": f"sessionid={session_key}"}
        self.seat, self.log, self.pending, self.acked, self.reconnects = seat, [], None, {}, 0

    async def run(self, start=False, stop_after=None):
        while True:
            try:
                async with websockets.connect(self.url, origin="http://127.0.0.1", additional_headers=self.headers,
                                              open_timeout=10) as ws:
                    if start:
                        await ws.send(json.dumps({"v": 1, "action": "start"}))
                        start = False
                    if self.pending:
                        await ws.send(json.dumps(self.pending))
                    while True:
                        msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=30))
                        self.log.append(msg)
                        if msg["type"] == "picked":
                            self.acked[msg["client_pick_id"]] = msg["card"]
                            self.pending = None
                        if msg["type"] != "seat":
                            continue
                        if msg["complete"]:
                            return
                        if stop_after is not None and len(msg["pool"]) >= stop_after:
                            return
                        if msg["pack"] and not (self.pending and self.pending["pick_number"] == msg["pick_number"]
                                                and self.pending["pack_number"] == msg["pack_number"]):
                            self.pending = {"v": 1, "action": "pick", "card": msg["pack"][-1]["name"],
                                            "pack_number": msg["pack_number"], "pick_number": msg["pick_number"],
                                            "client_pick_id": f"{self.seat}-{msg['pack_number']}-{msg['pick_number']}"}
                            await ws.send(json.dumps(self.pending))
            except (OSError, websockets.exceptions.WebSocketException, asyncio.TimeoutError):
                self.reconnects += 1
                if self.reconnects > 50:
                    raise
                await asyncio.sleep(0.3)


def two_guest_pod(timer=0):
    a, b = guest(), guest()
    draft, _ = service.create_pod("TST", 8, "draftsim", timer, "Ana", session_key=a, consent=True)
    service.join_pod(draft.pk, "Ben", session_key=b, consent=True)
    return draft, a, b


def check_complete(draft, drafters):
    draft.refresh_from_db()
    assert draft.status == "complete"
    per_seat = {s.seat: s.picks.count() for s in draft.seat_set.all()}
    assert per_seat == {n: 42 for n in range(8)}
    for d in drafters:
        rows = DraftPick.objects.filter(seat__draft=draft, seat__seat=d.seat)
        stored = dict(rows.exclude(client_pick_id=None).values_list("client_pick_id", "pick"))
        assert all(stored.get(cid) == card for cid, card in d.acked.items())  # nothing acknowledged was lost
    picks = PickLog(draft)
    for d in drafters:  # and nothing of another seat was ever sent to this one: every message is scanned
        assert any(m["type"] == "seat" and m["pack"] for m in d.log)
        for msg in d.log:
            picks.check(d.seat, msg)


def test_two_people_and_six_bots_finish_a_pod_through_daphne(draft_set, daphne_server):
    draft, a, b = two_guest_pod()
    ana, ben = Drafter(daphne_server, draft.pk, a, 0), Drafter(daphne_server, draft.pk, b, 1)

    async def both():
        await asyncio.gather(ana.run(start=True), ben.run())

    asyncio.run(both())
    check_complete(draft, [ana, ben])
    assert DraftSeat.objects.filter(draft=draft, drafter="draftsim", deck__isnull=False).count() == 6


def test_daphne_restart_mid_draft_loses_and_duplicates_nothing(draft_set, tmp_path):
    from tests.conftest import free_port

    port = free_port()
    base = f"http://127.0.0.1:{port}"

    def daphne():
        with open(tmp_path / "daphne.log", "a") as log:  # the child keeps its own copy of the file
            proc = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                                     "mtgsite.asgi:application"], cwd=ROOT, env=service_env(),
                                    stdout=log, stderr=subprocess.STDOUT)
        wait_for_port(port, proc)
        return proc

    draft, a, b = two_guest_pod()
    ana, ben = Drafter(base, draft.pk, a, 0), Drafter(base, draft.pk, b, 1)
    proc = daphne()
    try:
        async def scenario():
            nonlocal proc
            await asyncio.gather(ana.run(start=True, stop_after=10), ben.run(stop_after=10))
            runs = asyncio.gather(ana.run(), ben.run())
            await asyncio.sleep(0.5)
            proc.kill()  # mid-draft, picks in flight
            proc.wait()
            await asyncio.sleep(0.5)
            proc = await asyncio.to_thread(daphne)
            await runs

        asyncio.run(scenario())
    finally:
        _stop(proc)
    assert ana.reconnects + ben.reconnects >= 1
    check_complete(draft, [ana, ben])
    cids = list(DraftPick.objects.filter(seat__draft=draft).exclude(client_pick_id=None)
                .values_list("client_pick_id", flat=True))
    assert len(cids) == len(set(cids)) == 84


def test_celery_worker_takes_the_timed_out_pick(draft_set, celery_worker_process):
    """Nobody has the pod open: the worker's timer task (or its start-up sweep) takes the suggested card."""
    import time

    draft, a, b = two_guest_pod(timer=30)
    service.start_pod(draft.pk, None, a)
    DraftSeat.objects.filter(draft=draft, seat__in=[0, 1]).update(deadline=timezone.now() - timedelta(seconds=1))
    from drafts.pods.tasks import expire_picks

    expire_picks.delay(str(draft.pk))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if DraftPick.objects.filter(seat__draft=draft, seat__seat__in=[0, 1], timed_out=True).count() == 2:
            break
        time.sleep(0.2)
    picks = DraftPick.objects.filter(seat__draft=draft, seat__seat__in=[0, 1], pack_number=0, pick_number=0)
    assert picks.count() == 2 and all(p.timed_out and p.scores[0][0] == p.pick for p in picks)
