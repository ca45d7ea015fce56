"""ws/pods/<id>/ with channels.testing: seats bound to sessions, picks, bad messages, hidden information."""
from __future__ import annotations

import asyncio

import pytest

from drafts.pods import service
from drafts.models import DraftPick
from tests.drafts.conftest import PickLog
from tests.leaks import expect_leak
from tests.ws import connect_path, guest_session, receive_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]


def pod_with_two_guests(timer=0):
    a, b = guest_session(), guest_session()
    draft, _ = service.create_pod("TST", 8, "draftsim", timer, "Ana", session_key=a, consent=True)
    service.join_pod(draft.pk, "Ben", session_key=b, consent=False)
    return draft, a, b


async def connect(draft_id, session_key=None, path=None):
    return await connect_path(path or f"/ws/pods/{draft_id}/", session_key)


async def drain(comm, log, timeout=0.3):
    """Collect what is still queued (a timeout in receive_json_from would cancel the consumer)."""
    while not await comm.receive_nothing(timeout=timeout):
        log.append(await comm.receive_json_from())


def test_seat_binding_start_pick_and_bad_messages(draft_set):
    draft, a, b = pod_with_two_guests()

    async def scenario():
        ana, ok, _ = await connect(draft.pk, a)
        assert ok
        first = await receive_until(ana, lambda m: m["type"] == "status")
        assert first["status"] == "open" and [s["kind"] for s in first["seats"][:3]] == ["human", "human", "open"]
        lobby = await receive_until(ana, lambda m: m["type"] == "seat")
        assert lobby["seat"] == 0 and lobby["pack"] is None

        watcher, ok, _ = await connect(draft.pk, None)  # no seat: status only
        assert ok
        await receive_until(watcher, lambda m: m["type"] == "status")
        await watcher.send_json_to({"v": 1, "action": "start"})
        refused = await receive_until(watcher, lambda m: m["type"] == "error")
        assert refused["code"] == 403

        ben, ok, _ = await connect(draft.pk, b)
        await receive_until(ben, lambda m: m["type"] == "seat")
        await ben.send_json_to({"v": 1, "action": "start"})  # not the host
        assert (await receive_until(ben, lambda m: m["type"] == "error"))["code"] == 403

        await ana.send_json_to({"v": 1, "action": "start"})
        view = await receive_until(ana, lambda m: m["type"] == "seat" and m["pack"])
        assert view["pack_number"] == 0 and view["pick_number"] == 0 and view["suggestions"]

        for bad, text in [("not json", "JSON"), ('{"v": 2, "action": "pick"}', "version"),
                          ('{"v": 1, "action": "dance"}', "unknown action"),
                          ('{"v": 1, "action": "pick", "card": "X", "pack_number": 0, "pick_number": 0}', "client_pick_id"),
                          ('[1, 2]', "JSON objects")]:
            await ana.send_to(text_data=bad)
            err = await receive_until(ana, lambda m: m["type"] == "error")
            assert text in err["message"]
        await ana.send_json_to({"v": 1, "action": "pick", "card": "TST nothing", "pack_number": 0, "pick_number": 0,
                                "client_pick_id": "p1"})
        err = await receive_until(ana, lambda m: m["type"] == "error")
        assert "not in the pack" in err["message"] and err["client_pick_id"] == "p1"

        card = view["pack"][0]["name"]
        pick = {"v": 1, "action": "pick", "card": card, "pack_number": 0, "pick_number": 0, "client_pick_id": "p2"}
        await ana.send_json_to(pick)
        ack = await receive_until(ana, lambda m: m["type"] == "picked")
        assert ack["card"] == card and ack["duplicate"] is False
        await ana.send_json_to(pick)  # a double click
        again = await receive_until(ana, lambda m: m["type"] == "picked")
        assert again["duplicate"] is True
        for comm in (ana, ben, watcher):
            await comm.disconnect()

    asyncio.run(scenario())
    assert DraftPick.objects.filter(seat__draft=draft, seat__seat=0).count() == 1


def test_unknown_pod_is_refused(draft_set):
    async def scenario():
        comm, ok, code = await connect(None, path="/ws/pods/00000000-0000-0000-0000-000000000000/")
        assert not ok and code == 4404

    asyncio.run(scenario())


def test_whole_pod_over_sockets_never_leaks_another_seats_pack_or_pool(draft_set):
    """Two people and six bots draft to the end over sockets. Every message each person's socket receives
    is checked against the pod's pick log (tests.drafts.conftest.PickLog): a seat view is its own (the
    pack it was shown, its own pool), and no message names a card of another seat's pack or pool."""
    draft, a, b = pod_with_two_guests()
    logs = {0: [], 1: []}

    async def drafter(comm, seat, done):
        while True:
            msg = await comm.receive_json_from(timeout=20)
            logs[seat].append(msg)
            if msg["type"] == "seat":
                if msg["complete"]:
                    done.set()
                    return
                if msg["pack"]:
                    await comm.send_json_to({"v": 1, "action": "pick", "card": msg["pack"][-1]["name"],
                                             "pack_number": msg["pack_number"], "pick_number": msg["pick_number"],
                                             "client_pick_id": f"{seat}-{msg['pack_number']}-{msg['pick_number']}"})

    async def scenario():
        ana, _, _ = await connect(draft.pk, a)
        ben, _, _ = await connect(draft.pk, b)
        await ana.send_json_to({"v": 1, "action": "start"})
        done = [asyncio.Event(), asyncio.Event()]
        await asyncio.gather(drafter(ana, 0, done[0]), drafter(ben, 1, done[1]))
        await drain(ana, logs[0])
        await drain(ben, logs[1])
        await ana.disconnect()
        await ben.disconnect()

    asyncio.run(scenario())
    draft.refresh_from_db()
    assert draft.status == "complete"
    picks = PickLog(draft)
    assert len(picks.picks[0]) == len(picks.picks[1]) == draft.packs * draft.picks_per_pack
    for seat, log in logs.items():
        shown = {(m["pack_number"], m["pick_number"]) for m in log if m["type"] == "seat" and m["pack"]}
        assert len(shown) == draft.packs * draft.picks_per_pack  # every pack the seat picked from was scanned
        for msg in log:
            picks.check(seat, msg)


@pytest.mark.parametrize("leak", [False, True], ids=["as-served", "planted-leak"])
def test_the_scan_of_every_message_fails_on_a_planted_leak(draft_set, leak, request):
    """The first picks of two people over sockets, every message scanned; with a leak planted (each seat
    view also carries the next seat's pack and pool) the same scan fails."""
    if leak:
        request.getfixturevalue("planted_leak")
    draft, a, b = pod_with_two_guests()
    logs = {0: [], 1: []}

    async def picks(comm, seat, n):
        while n:
            msg = await receive_until(comm, lambda m: m["type"] == "seat" and m["pack"], log=logs[seat])
            await comm.send_json_to({"v": 1, "action": "pick", "card": msg["pack"][0]["name"],
                                     "pack_number": msg["pack_number"], "pick_number": msg["pick_number"],
                                     "client_pick_id": f"{seat}-{msg['pick_number']}"})
            await receive_until(comm, lambda m: m["type"] == "picked", log=logs[seat])
            n -= 1

    async def scenario():
        ana, _, _ = await connect(draft.pk, a)
        ben, _, _ = await connect(draft.pk, b)
        await receive_until(ana, lambda m: m["type"] == "seat", log=logs[0])
        await ana.send_json_to({"v": 1, "action": "start"})
        await asyncio.gather(picks(ana, 0, 3), picks(ben, 1, 3))
        await drain(ana, logs[0])
        await drain(ben, logs[1])
        await ana.disconnect()
        await ben.disconnect()

    asyncio.run(scenario())
    log = PickLog(draft)
    assert all(len(log.picks[seat]) == 3 for seat in (0, 1))

    def scan():
        for seat, received in logs.items():
            assert any(m["type"] == "seat" and m["pack"] for m in received)
            for msg in received:
                log.check(seat, msg)

    with expect_leak(leak):
        scan()


def test_timer_runs_out_over_the_socket(draft_set, settings):
    """A 30 s timer; the deadline is moved into the past and the seat's socket settles the pick."""
    from datetime import timedelta

    from django.utils import timezone

    from drafts.models import DraftSeat

    draft, a, b = pod_with_two_guests(timer=30)
    service.start_pod(draft.pk, None, a)
    DraftSeat.objects.filter(draft=draft, seat=0).update(deadline=timezone.now() - timedelta(seconds=1))

    async def scenario():
        ana, _, _ = await connect(draft.pk, a)  # connecting settles what fell due while away
        view = await receive_until(ana, lambda m: m["type"] == "seat" and m["pick_number"] == 1 or
                                   (m["type"] == "seat" and m["pack"] is None and m["pool"]))
        assert len(view["pool"]) == 1
        await ana.disconnect()

    asyncio.run(scenario())
    auto = DraftPick.objects.get(seat__draft=draft, seat__seat=0, pack_number=0, pick_number=0)
    assert auto.timed_out


def test_a_lost_view_heals_itself(draft_set, monkeypatch):
    """A seat view that never reaches its socket (the channel layer dropped it) is sent again once the
    statuses that keep coming show the seat has moved on: the person is never left waiting."""
    from drafts.pods.consumers import PodConsumer

    monkeypatch.setattr(PodConsumer, "HEAL_AFTER", 0.2)
    draft, a, b = pod_with_two_guests()
    service.start_pod(draft.pk, None, a)
    real = service.publish
    dropped = []

    async def lossy(layer, outcome):
        view = outcome.views.get(1) if outcome is not None else None
        if view and view.get("pick_number") == 1 and not dropped:
            dropped.append(outcome.views.pop(1))  # Ben's view after his first pick is lost
        await real(layer, outcome)

    monkeypatch.setattr(service, "publish", lossy)

    async def scenario():
        ben, ok, _ = await connect(draft.pk, b)
        view = await receive_until(ben, lambda m: m["type"] == "seat" and m["pack"])
        await ben.send_json_to({"v": 1, "action": "pick", "card": view["pack"][0]["name"], "pack_number": 0,
                                "pick_number": 0, "client_pick_id": "b1"})
        # The ack and the healed view may come in either order (the pick is written in the background).
        seen = {"picked": False, "healed": None}

        def done(m):
            if m["type"] == "picked":
                seen["picked"] = True
            if m["type"] == "seat" and m.get("pick_number") == 1:
                seen["healed"] = m
            return seen["picked"] and seen["healed"] is not None

        await receive_until(ben, done, timeout=5)
        await ben.disconnect()
        return seen["healed"]

    healed = asyncio.run(scenario())
    assert dropped and healed["pick_number"] == dropped[0]["pick_number"] == 1
    assert [c["name"] for c in healed["pool"]] == [c["name"] for c in dropped[0]["pool"]]
