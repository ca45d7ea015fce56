"""Online pods (drafts.pods.service): lobby, seats bound to people, validated idempotent picks, timers."""
from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from drafts.pods import service
from drafts.core.protocol import PROTOCOL_VERSION
from drafts.models import Draft, DraftPick, DraftSeat

pytestmark = pytest.mark.django_db


def _pod(draft_set, seats=8, timer=0, humans=2, bot="draftsim"):
    host = User.objects.create_user("host", password="pw-123456")
    draft, row = service.create_pod("TST", seats, bot, timer, "Host", user=host)
    people = [(host, None)]
    for i in range(1, humans):
        seat, _ = service.join_pod(draft.pk, f"Guest {i}", session_key=f"session-{i}", consent=True)
        assert seat.seat == i
        people.append((None, f"session-{i}"))
    return draft, people


def _pick_first(draft_id, seat, view, cid=None):
    card = view["pack"][0]["name"]
    return service.make_pick(draft_id, seat, card, view["pack_number"], view["pick_number"],
                            cid or f"s{seat}-{view['pack_number']}-{view['pick_number']}")


def _views(draft_id, seats):
    return {s: service.snapshot(draft_id, s)[1] for s in seats}


def test_lobby_join_start_and_bots_fill_empty_seats(draft_set):
    draft, people = _pod(draft_set, humans=2)
    again, _ = service.join_pod(draft.pk, "Guest 1", session_key="session-1")
    assert again.seat == 1  # joining twice keeps the same seat
    status, view = service.snapshot(draft.pk, 0)
    assert status["status"] == "open" and [s["kind"] for s in status["seats"]][:3] == ["human", "human", "open"]
    with pytest.raises(service.PodError) as exc:
        service.start_pod(draft.pk, None, "session-1")
    assert exc.value.code == 403  # only the host starts
    out = service.start_pod(draft.pk, people[0][0], None)
    draft.refresh_from_db()
    assert draft.status == "drafting" and draft.seat_set.count() == 8
    assert set(out.views) == {0, 1}
    assert all(v["type"] == "seat" and v["v"] == PROTOCOL_VERSION for v in out.views.values())
    # the bots picked at once, running ahead until packs wait on people: seat 2 gets its second pack
    # from seat 1 (a person), seat 7 has had six packs pass through bots
    counts = {s.seat: s.picks.count() for s in draft.seat_set.filter(drafter="draftsim")}
    assert counts == {2: 1, 3: 2, 4: 3, 5: 4, 6: 5, 7: 6}
    assert out.status["picking"] and 0 in out.status["picking"]
    with pytest.raises(service.PodError):
        service.join_pod(draft.pk, "Late", session_key="late")


def test_whole_pod_two_people_six_bots(draft_set):
    draft, people = _pod(draft_set, humans=2)
    service.start_pod(draft.pk, people[0][0], None)
    for _ in range(500):
        views = _views(draft.pk, [0, 1])
        if all(v["complete"] for v in views.values()):
            break
        for seat, view in views.items():
            if view["pack"]:
                _pick_first(draft.pk, seat, view)
    draft.refresh_from_db()
    assert draft.status == "complete"
    per_seat = {s.seat: s.picks.count() for s in draft.seat_set.all()}
    assert per_seat == {n: draft.packs * draft.picks_per_pack for n in range(8)}
    human = DraftPick.objects.filter(seat__drafter="human", seat__draft=draft)
    assert human.exclude(client_pick_id=None).count() == human.count()
    assert all(p.elapsed_ms is not None for p in human)
    assert DraftSeat.objects.filter(draft=draft, drafter="draftsim", deck__isnull=False).count() == 6


def test_bad_stale_and_duplicate_picks(draft_set):
    draft, people = _pod(draft_set, humans=2)
    service.start_pod(draft.pk, people[0][0], None)
    view = service.snapshot(draft.pk, 0)[1]
    before = DraftPick.objects.count()
    with pytest.raises(service.PodError) as exc:
        service.make_pick(draft.pk, 0, "Not A Card", 0, 0, "x1")
    assert exc.value.code == 409 and "not in the pack" in str(exc.value)
    with pytest.raises(service.PodError) as exc:
        service.make_pick(draft.pk, 0, view["pack"][0]["name"], 0, 3, "x2")
    assert "stale" in str(exc.value)
    with pytest.raises(service.PodError) as exc:
        service.make_pick(draft.pk, 2, view["pack"][0]["name"], 0, 0, "x3")
    assert exc.value.code == 403  # a bot's seat
    assert DraftPick.objects.count() == before
    first = _pick_first(draft.pk, 0, view, cid="click-1")
    assert first.ack["duplicate"] is False
    n = DraftPick.objects.count()
    again = _pick_first(draft.pk, 0, view, cid="click-1")  # double click / resend after reconnect
    assert again.ack["duplicate"] is True and again.ack["card"] == first.ack["card"]
    assert DraftPick.objects.count() == n


def test_timer_takes_the_suggested_pick(draft_set):
    draft, people = _pod(draft_set, humans=2, timer=30)
    out = service.start_pod(draft.pk, people[0][0], None)
    assert {seat for seat, _ in out.timers} == {0, 1}
    assert service.expire_overdue(draft.pk) is None  # nothing due yet
    view = service.snapshot(draft.pk, 0)[1]
    late = service.expire_overdue(draft.pk, now=timezone.now() + timedelta(seconds=31))
    assert late is not None
    auto = DraftPick.objects.get(seat__draft=draft, seat__seat=0, pack_number=0, pick_number=0)
    assert auto.timed_out and auto.pick == view["suggestions"][0][0]
    assert auto.scores and auto.scores[0][0] == auto.pick


def test_consent_follows_the_profile(draft_set):
    draft, people = _pod(draft_set, humans=2)
    host = people[0][0]
    assert DraftSeat.objects.get(draft=draft, seat=0).consent is None
    service.set_consent(host, True)
    assert DraftSeat.objects.get(draft=draft, seat=0).consent is True
    assert service.consent_of(host) is True
    assert DraftSeat.objects.get(draft=draft, seat=1).consent is True  # the guest chose at join


def test_create_refuses_bad_settings(draft_set):
    user = User.objects.create_user("u", password="pw-123456")
    for args, text in [(("TST", 9, "draftsim", 0, "A"), "2 to 8"), (("TST", 8, "nope", 0, "A"), "unknown bot"),
                       (("TST", 8, "draftsim", 17, "A"), "timer"), (("TST", 8, "draftsim", 0, "<b>"), "display name"),
                       (("ZZZ", 8, "draftsim", 0, "A"), "unknown set")]:
        with pytest.raises(Exception) as exc:
            service.create_pod(*args, user=user)
        assert text in str(exc.value)
    assert not Draft.objects.filter(kind="online").exists()
    with pytest.raises(service.PodError):
        service.create_pod("TST", 8, "draftsim", 0, "Guest")  # a guest without a session


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_concurrent_picks_are_serialised_by_the_row_lock(draft_set):
    """Eight threads send the same pick at once, with different client ids: exactly one lands."""
    from django.db import connection

    draft, people = _pod(draft_set, humans=2)
    service.start_pod(draft.pk, people[0][0], None)
    view = service.snapshot(draft.pk, 0)[1]
    results, barrier = [], threading.Barrier(8)

    def worker(i):
        barrier.wait()
        try:
            results.append(_pick_first(draft.pk, 0, view, cid=f"c{i}").ack)
        except service.PodError as exc:
            results.append(str(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert sum(isinstance(r, dict) for r in results) == 1
    assert all("stale" in r or "not in the pack" in r for r in results if isinstance(r, str))
    assert DraftPick.objects.filter(seat__draft=draft, seat__seat=0).count() == 1


def test_an_old_socket_closing_does_not_mark_a_reconnected_seat_away(draft_set):
    draft, _ = _pod(draft_set, humans=2)
    service.mark_present(draft.pk, 0, True, "old-socket")
    service.mark_present(draft.pk, 0, True, "new-socket")  # the client reconnected first...
    service.mark_present(draft.pk, 0, False, "old-socket")  # ...then the old socket's disconnect ran
    assert service.connected_seats(draft.pk) == {0}
    service.mark_present(draft.pk, 0, False, "new-socket")
    assert service.connected_seats(draft.pk) == set()
