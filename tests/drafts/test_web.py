"""Draft pages and API on the test client: simulate, read, rank a pack, export; bad input gets a 400."""
from __future__ import annotations

import csv
import io
import json

import pytest


def post_json(client, url, body):
    return client.post(url, data=json.dumps(body) if not isinstance(body, str) else body,
                       content_type="application/json")


def test_simulate_through_the_api_then_read_and_export(client, draft_set):
    response = post_json(client, "/api/drafts/simulate", {"set": "TST", "bots": ["draftsim", "rating", "random"], "seed": 1})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["set"] == "TST" and [s["drafter"] for s in body["seats"]] == ["draftsim", "rating", "random"]
    assert all(len(s["picks"]) == 42 and s["deck"] for s in body["seats"])
    detail = client.get(response["Location"]).json()
    assert detail["id"] == body["id"]
    export = client.get(f"/api/drafts/{body['id']}/export")
    assert export.status_code == 200 and export["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(export.content.decode())))
    assert len(rows) == 3 * 42 and rows[0]["expansion"] == "TST"


@pytest.mark.parametrize("body, field", [
    ({"set": "TST", "bots": ["draftsim", "nobot"]}, None),
    ({"set": "NOPE", "bot": "draftsim"}, None),
    ({"set": "TST", "bot": "draftsim", "seats": 12}, "seats"),
    ({"set": "TST", "bots": "draftsim"}, "bots"),
    ({"set": "TST", "bot": "draftsim", "seed": -4}, "seed"),
    ("{not json", None),
    ([1, 2], None),
])
def test_simulate_rejects_bad_requests(client, draft_set, body, field):
    from drafts.models import Draft

    response = post_json(client, "/api/drafts/simulate", body)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors and errors[0]["message"]
    if field:
        assert errors[0]["field"] == field
    assert not Draft.objects.exists()


def test_suggest_api(client, draft_set):
    response = post_json(client, "/api/drafts/suggest", {"set": "TST", "bot": "draftsim",
                                                         "pack": ["TST R common 0", "TST golem"], "pool": []})
    assert response.status_code == 200
    assert {r["card"] for r in response.json()["ranking"]} == {"TST R common 0", "TST golem"}
    bad = post_json(client, "/api/drafts/suggest", {"set": "TST", "pack": ["Nope"], "bot": "draftsim"})
    assert bad.status_code == 400 and "not in TST" in bad.json()["errors"][0]["message"]
    bad = post_json(client, "/api/drafts/suggest", {"set": "TST", "pack": "TST golem"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "pack"
    assert client.get("/api/drafts/sets").status_code == 200


def test_pages(client, draft_set):
    from drafts.models import Draft

    page = client.get("/drafts/")
    assert page.status_code == 200 and b"Simulate a pod" in page.content and b"TST" in page.content
    response = client.post("/drafts/", {"set_code": "TST", "bots": "draftsim", "seats": 4, "seed": 3})
    assert response.status_code == 302
    draft = Draft.objects.get()
    assert response["Location"] == f"/drafts/{draft.pk}/"
    detail = client.get(response["Location"])
    assert detail.status_code == 200 and detail.content.count(b"Seat ") >= 4
    seat = client.get(f"/drafts/{draft.pk}/seats/1/")
    assert seat.status_code == 200 and b"P1p1" in seat.content and b"history.svg" in seat.content
    svg = client.get(f"/drafts/{draft.pk}/seats/1/history.svg")
    assert svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content[:400]
    png = client.get(f"/drafts/{draft.pk}/seats/1/history.png")
    assert png.content[:8] == b"\x89PNG\r\n\x1a\n"
    export = client.get(f"/drafts/{draft.pk}/export.csv?seat=2")
    assert export.status_code == 200 and len(export.content.decode().strip().splitlines()) == 43
    for seat in ("x", "²", "9" * 5000):  # "²".isdigit(), and too many digits for int(): were 500s
        assert client.get(f"/drafts/{draft.pk}/export.csv?seat={seat}").status_code == 400
    assert client.get(f"/drafts/{draft.pk}/seats/7/").status_code == 404
    assert client.get("/drafts/bots/").status_code == 200
    heat = client.get("/drafts/bots/TST/archetype.svg")
    assert heat.status_code == 200 and b"<svg" in heat.content[:400]
    assert client.get("/drafts/bots/ZZZ/archetype.svg").status_code == 404
    for top in ("x", "²", "-1"):  # were 500s (int() of the raw parameter)
        assert client.get(f"/drafts/bots/TST/archetype.svg?top={top}").status_code == 400


def test_page_form_errors_do_not_store(client, draft_set):
    from drafts.models import Draft

    response = client.post("/drafts/", {"set_code": "TST", "bots": "neural", "seats": 4})
    assert response.status_code == 200 and b"no trained neural bot" in response.content
    response = client.post("/drafts/", {"set_code": "TST", "bots": "draftsim", "seats": 1})
    assert response.status_code == 200 and b"greater than or equal to 2" in response.content
    assert not Draft.objects.exists()
