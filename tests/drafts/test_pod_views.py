"""Pages and API of online pods: create, join, consent, deck building, my drafts, privacy, bad input."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from drafts.pods import service
from decks.models import Deck
from drafts.models import Draft, DraftPick, DraftSeat, DrafterProfile
from tests.drafts.conftest import card_names, seat_secrets
from tests.leaks import assert_no_leak, expect_leak, find_leaks

pytestmark = pytest.mark.django_db


def finish(draft):
    """Draft to the end for every person (first card of each pack)."""
    for _ in range(500):
        people = DraftSeat.objects.filter(draft=draft, drafter="human")
        views = [service.snapshot(draft.pk, s.seat)[1] for s in people]
        if all(v["complete"] for v in views):
            return
        for v in views:
            if v["pack"]:
                service.make_pick(draft.pk, v["seat"], v["pack"][0]["name"], v["pack_number"], v["pick_number"],
                                 f"{v['seat']}-{v['pack_number']}-{v['pick_number']}")


def create_via_page(client, name="Ana", consent="yes", seats=4, timer=0):
    return client.post("/drafts/play/", {"set_code": "TST", "seats": seats, "bot": "draftsim", "pick_timer": timer,
                                         "display_name": name, "consent": consent})


def test_guest_creates_and_friend_joins_through_the_pages(draft_set):
    host, friend = Client(), Client()
    page = host.get("/drafts/play/")
    assert page.status_code == 200 and b"Share my drafts" in page.content
    r = create_via_page(host)
    assert r.status_code == 302
    draft = Draft.objects.get(kind="online")
    pod = host.get(r["Location"])
    assert pod.status_code == 200 and b"Start the draft" in pod.content
    assert DraftSeat.objects.get(draft=draft, seat=0).consent is True
    assert b"Share my drafts" not in host.get("/drafts/play/").content  # the choice was remembered

    assert b"Take a seat" in friend.get(r["Location"]).content
    bad = friend.post(f"/drafts/pods/{draft.pk}/join/", {"display_name": "", "consent": "no"})
    assert bad.status_code == 302 and DraftSeat.objects.filter(draft=draft).count() == 1
    friend.post(f"/drafts/pods/{draft.pk}/join/", {"display_name": "Ben", "consent": "no"})
    seat = DraftSeat.objects.get(draft=draft, seat=1)
    assert seat.display_name == "Ben" and seat.consent is False and seat.session_key
    assert friend.post(f"/drafts/pods/{draft.pk}/start/").status_code == 302
    assert Draft.objects.get(pk=draft.pk).status == "open"  # only the host starts
    host.post(f"/drafts/pods/{draft.pk}/start/")
    assert Draft.objects.get(pk=draft.pk).status == "drafting"
    assert b"watching" in Client().get(r["Location"]).content


def test_bad_pod_settings_are_explained(draft_set):
    c = Client()
    r = c.post("/drafts/play/", {"set_code": "TST", "seats": 12, "bot": "draftsim", "pick_timer": 0,
                                 "display_name": "A", "consent": "yes"})
    assert r.status_code == 200 and b"less than or equal to 8" in r.content
    r = create_via_page(c, name="<script>")
    assert r.status_code == 200 and b"display name" in r.content
    assert not Draft.objects.exists()
    assert c.get("/drafts/pods/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_online_seats_are_private(draft_set):
    host, other = Client(), Client()
    create_via_page(host)
    draft = Draft.objects.get(kind="online")
    host.post(f"/drafts/pods/{draft.pk}/start/")
    view = service.snapshot(draft.pk, 0)[1]
    service.make_pick(draft.pk, 0, view["pack"][0]["name"], 0, 0, "a")
    assert host.get(f"/drafts/{draft.pk}/seats/0/").status_code == 200
    assert other.get(f"/drafts/{draft.pk}/seats/0/").status_code == 404
    assert other.get(f"/drafts/{draft.pk}/seats/0/history.svg").status_code == 404
    body = other.get(f"/api/drafts/{draft.pk}").json()
    assert all(not s["picks"] for s in body["seats"])
    assert other.get(f"/drafts/{draft.pk}/export.csv").status_code == 404  # nothing they may read
    assert other.get(f"/api/drafts/{draft.pk}/export").status_code == 404
    pod = other.get(f"/api/pods/{draft.pk}").json()
    assert pod["you"] is None and not any(name in json.dumps(pod) for name in draft_set)


@pytest.mark.parametrize("leak", [False, True], ids=["as-served", "planted-leak"])
def test_a_seated_player_is_sent_only_their_own_pack_and_pool(draft_set, leak, request):
    """What each seated person gets from /api/pods/<id> and the pod page, a few picks in, is scanned for
    every card they may not see (the other seats' packs and pools); a planted leak makes the scan fail."""
    host, friend = Client(), Client()
    create_via_page(host)
    draft = Draft.objects.get(kind="online")
    friend.post(f"/drafts/pods/{draft.pk}/join/", {"display_name": "Ben", "consent": "no"})
    host.post(f"/drafts/pods/{draft.pk}/start/")
    for _ in range(3):
        for seat in (0, 1):
            v = service.snapshot(draft.pk, seat)[1]
            if v["pack"]:
                service.make_pick(draft.pk, seat, v["pack"][0]["name"], v["pack_number"], v["pick_number"],
                                 f"{seat}-{v['pick_number']}")
    if leak:
        request.getfixturevalue("planted_leak")
    draft.refresh_from_db()
    pod = service.load_pod(draft)
    for seat, client in ((0, host), (1, friend)):
        forbidden = seat_secrets(pod, seat, draft_set)
        others = {n for s in range(pod.seats) if s != seat for n in (pod.current_pack(s) or []) + pod.pool(s)}
        assert others & forbidden  # the other seats hold cards this seat has not got
        own = set(pod.current_pack(seat) or []) | set(pod.pool(seat))
        api = client.get(f"/api/pods/{draft.pk}")
        assert api.status_code == 200 and api.json()["you"]["seat"] == seat
        assert card_names(api.json()["you"]["pack"]) == (pod.current_pack(seat) or [])
        assert card_names(api.json()["you"]["pool"]) == pod.pool(seat)
        page = client.get(f"/drafts/pods/{draft.pk}/")
        assert page.status_code == 200
        for what, body in (("/api/pods/<id>", api.content), ("the pod page", page.content)):
            assert find_leaks(body, own) == own  # the scan reads the seat's own cards where they are
            with expect_leak(leak):
                assert_no_leak(body, forbidden, what=f"{what} for seat {seat}")


def test_deck_builder_saves_exports_and_refuses_cards_not_in_the_pool(draft_set):
    host = Client()
    create_via_page(host, seats=2)
    draft = Draft.objects.get(kind="online")
    host.post(f"/drafts/pods/{draft.pk}/start/")
    assert host.get(f"/drafts/{draft.pk}/seats/0/build/").status_code == 302  # not finished yet
    finish(draft)
    url = f"/drafts/{draft.pk}/seats/0/build/"
    page = host.get(url)
    assert page.status_code == 200
    state = json.loads(page.content.split(b'id="builder-state" type="application/json">')[1].split(b"</script>")[0])
    auto = state["auto"]
    assert sum(state["auto"]["lands"].values()) >= 15
    pool = [p.pick for p in DraftPick.objects.filter(seat__draft=draft, seat__seat=0)]
    # move one main-deck card to the sideboard, like a click in the page
    name, count = auto["main"][0]
    main = [[n, c - 1 if n == name else c] for n, c in auto["main"]]
    side = auto["side"] + [[name, 1]]
    body = {"main": main, "side": side, "lands": auto["lands"]}
    arena = host.post(url, json.dumps({**body, "format": "arena"}), content_type="application/json").json()
    assert arena["text"].startswith("About") and "Sideboard" in arena["text"]
    mtgo = host.post(url, json.dumps({**body, "format": "mtgo"}), content_type="application/json").json()
    assert "\n\n" in mtgo["text"]
    saved = host.post(url, json.dumps(body), content_type="application/json")
    assert saved.status_code == 200
    seat = DraftSeat.objects.get(draft=draft, seat=0)
    assert seat.deck_id == saved.json()["deck"] and seat.deck.side_count == len(pool) - sum(c for _, c in main)
    for bad, text in [({"main": [["TST nothing", 1]], "side": []}, "not in your pool"),
                      ({"main": [[pool[0], 5]], "side": []}, "you drafted"),
                      ({"main": "x"}, "pairs"), ({"main": [], "lands": {"Forest": -2}}, "whole number")]:
        r = host.post(url, json.dumps(bad), content_type="application/json")
        assert r.status_code == 400 and text in r.json()["error"], (bad, r.content)
    assert host.post(url, "{not json", content_type="application/json").status_code == 400
    assert DraftSeat.objects.get(pk=seat.pk).deck_id == saved.json()["deck"]  # nothing lost
    assert Client().get(url).status_code == 404  # someone else's seat


def test_my_drafts_download_consent_and_delete(draft_set):
    user = User.objects.create_user("ana", password="pw-123456")
    c = Client()
    c.force_login(user)
    assert b"have not chosen yet" in c.get("/drafts/mine/").content
    create_via_page(c, seats=2, consent="yes")
    draft = Draft.objects.get(kind="online")
    assert DrafterProfile.objects.get(user=user).consent is True
    c.post(f"/drafts/pods/{draft.pk}/start/")
    finish(draft)
    csv_text = c.get("/drafts/mine/export.csv").content.decode()
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert len(rows) == 42 and rows[0]["expansion"] == "TST"
    c.post("/drafts/consent/", {"consent": "no"})
    assert DraftSeat.objects.get(draft=draft, seat=0).consent is False
    c.post("/drafts/consent/", {"consent": "maybe"})
    assert DraftSeat.objects.get(draft=draft, seat=0).consent is False
    seat = DraftSeat.objects.get(draft=draft, seat=0)
    assert Client().post(f"/drafts/mine/{seat.pk}/delete/").status_code == 404  # not theirs
    c.post(f"/drafts/mine/{seat.pk}/delete/")
    assert not Draft.objects.filter(pk=draft.pk).exists()  # no other person in it: gone whole



def test_a_saved_deck_is_private_like_the_picks_and_goes_with_a_deleted_draft(draft_set):
    """Found by the authorization matrix (tests/mtgsite/test_authorization.py): the pod's page and API
    linked a person's saved deck (their pool) for anyone, and deleting a draft whose seat had a saved
    deck, with another person left in the pod, failed with a 500."""
    host, friend, other = Client(), Client(), Client()
    create_via_page(host, seats=2)
    draft = Draft.objects.get(kind="online")
    friend.post(f"/drafts/pods/{draft.pk}/join/", {"display_name": "Ben", "consent": "no"})
    host.post(f"/drafts/pods/{draft.pk}/start/")
    finish(draft)
    pool = [p.pick for p in DraftPick.objects.filter(seat__draft=draft, seat__seat=0)]
    saved = host.post(f"/drafts/{draft.pk}/seats/0/build/", json.dumps({"main": [[n, 1] for n in pool]}),
                      content_type="application/json")
    link = f"/decks/{saved.json()['deck']}/"
    assert link in host.get(f"/drafts/{draft.pk}/").content.decode()
    assert link in host.get(f"/api/drafts/{draft.pk}").content.decode()
    for c in (friend, other):
        assert link not in c.get(f"/drafts/{draft.pk}/").content.decode()
        assert link not in c.get(f"/api/drafts/{draft.pk}").content.decode()
    seat = DraftSeat.objects.get(draft=draft, seat=0)
    assert host.post(f"/drafts/mine/{seat.pk}/delete/").status_code == 302
    seat.refresh_from_db()
    assert seat.drafter == "deleted" and seat.deck_id is None and not seat.picks.exists()
    assert not Deck.objects.filter(pk=saved.json()["deck"]).exists()

def test_admin_exports_only_consented_picks(draft_set):
    yes, no = Client(), Client()
    create_via_page(yes, consent="yes", seats=3)
    draft = Draft.objects.get(kind="online")
    no.post(f"/drafts/pods/{draft.pk}/join/", {"display_name": "Ben", "consent": "no"})
    yes.post(f"/drafts/pods/{draft.pk}/start/")
    finish(draft)
    assert yes.get("/drafts/data/consented.csv?set=TST").status_code == 302  # staff only
    staff = User.objects.create_user("admin", password="pw-123456", is_staff=True)
    admin = Client()
    admin.force_login(staff)
    rows = list(csv.DictReader(io.StringIO(admin.get("/drafts/data/consented.csv?set=TST").content.decode())))
    ids = {r["draft_id"] for r in rows}
    assert len(rows) == 42 and ids == {DraftSeat.objects.get(draft=draft, seat=0).log_id}


def test_forms_go_back_to_pages_of_this_site_only(draft_set):
    """The consent and sign-up forms' ``next`` redirected anywhere (an open redirect)."""
    c = Client()
    assert c.post("/drafts/consent/", {"consent": "yes", "next": "/drafts/play/"})["Location"] == "/drafts/play/"
    for elsewhere in ("https://evil.example/", "//evil.example/x", "javascript:alert(1)"):
        assert c.post("/drafts/consent/", {"consent": "yes", "next": elsewhere})["Location"] == "/drafts/mine/"
    r = c.post("/accounts/signup/", {"username": "new", "password1": "a-Long-pass-9", "password2": "a-Long-pass-9",
                                     "consent": "no", "next": "https://evil.example/"})
    assert r.status_code == 302 and r["Location"] == "/drafts/play/"


def test_signup_asks_for_consent(db):
    c = Client()
    r = c.post("/accounts/signup/", {"username": "new", "password1": "a-Long-pass-9", "password2": "a-Long-pass-9"})
    assert r.status_code == 200 and not User.objects.filter(username="new").exists()
    r = c.post("/accounts/signup/", {"username": "new", "password1": "a-Long-pass-9", "password2": "a-Long-pass-9",
                                     "consent": "no"})
    assert r.status_code == 302
    assert DrafterProfile.objects.get(user__username="new").consent is False


def test_pod_api_flow_and_bad_input(draft_set):
    host, friend = Client(), Client()
    r = host.post("/api/pods", {"set": "TST", "seats": 3, "bot": "draftsim", "display_name": "Ana", "consent": True},
                  content_type="application/json")
    assert r.status_code == 201, r.content
    pod = r.json()
    assert pod["you"]["seat"] == 0 and pod["status"]["status"] == "open"
    for bad in [{"set": "TST", "seats": 30, "display_name": "A"}, {"set": "TST", "display_name": ""},
                {"set": "NOPE", "display_name": "A"}, {"set": "TST", "display_name": "A", "consent": "yes"}]:
        assert host.post("/api/pods", bad, content_type="application/json").status_code == 400
    assert host.post("/api/pods", "[1]", content_type="application/json").status_code == 400
    url = f"/api/pods/{pod['id']}"
    assert friend.post(url + "/join", {"display_name": "Ben"}, content_type="application/json").status_code == 200
    assert friend.post(url + "/start").status_code == 403
    assert host.post(url + "/start").status_code == 200
    me = host.get(url).json()["you"]
    assert me["pack"] and me["pack_number"] == 0
    pick = {"card": me["pack"][0]["name"], "pack_number": 0, "pick_number": 0, "client_pick_id": "api-1"}
    assert host.post(url + "/picks", {**pick, "pick_number": 4}, content_type="application/json").status_code == 409
    assert host.post(url + "/picks", {**pick, "client_pick_id": "bad id!"},
                     content_type="application/json").status_code == 400
    assert Client().post(url + "/picks", pick, content_type="application/json").status_code == 403
    done = host.post(url + "/picks", pick, content_type="application/json")
    assert done.status_code == 200 and done.json()["picked"]["card"] == pick["card"]
    again = host.post(url + "/picks", pick, content_type="application/json").json()
    assert again["picked"]["duplicate"] is True
    assert DraftPick.objects.filter(seat__draft_id=pod["id"], seat__seat=0).count() == 1
    assert host.get("/api/pods/00000000-0000-0000-0000-000000000000").status_code == 404


def test_admin_retrains_from_the_consented_drafts(draft_set, tmp_path):
    """export_drafts --consented and models train draft_bot with stored=true consented=true use only opted-in seats."""
    from django.core.management import CommandError, call_command

    from ml.models import ModelVersion

    with pytest.raises(CommandError):
        call_command("models", "train", "draft_bot", "--scope", "archetype:TST", "--param", "stored=true",
                     "--param", "consented=true", stdout=io.StringIO(), stderr=io.StringIO())
    for consent in ("yes", "yes", "no"):
        c = Client()
        create_via_page(c, consent=consent, seats=2)
        draft = Draft.objects.filter(kind="online").order_by("-created").first()
        c.post(f"/drafts/pods/{draft.pk}/start/")
        finish(draft)
    out = tmp_path / "consented.csv"
    call_command("export_drafts", "--out", str(out), "--set", "TST", "--consented", stdout=io.StringIO())
    assert len(out.read_text().strip().splitlines()) == 1 + 2 * 42
    call_command("models", "train", "draft_bot", "--scope", "archetype:TST", "--param", "stored=true",
                 "--param", "consented=true", "--param", "epochs=1", "--activate-if-better", stdout=io.StringIO(),
                 stderr=io.StringIO())
    version = ModelVersion.objects.get(kind="draft_bot", scope="archetype:TST")
    assert version.data_snapshot["rows"] == 2 * 42 and "consented" in version.data_snapshot["logs"]
