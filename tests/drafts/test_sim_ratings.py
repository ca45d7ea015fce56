"""Simulated pods' card ratings beside the pick suggestions (issue 38): read from the bench's results file, shown
from 30 seat games, only for the cards of the drafter's own pack (the suggest API and a pod seat's view)."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User

from drafts import services
from drafts.models import Draft
from drafts.pods import service

pytestmark = pytest.mark.django_db


def post_json(client, url, body):
    return client.post(url, data=json.dumps(body), content_type="application/json")


@pytest.fixture
def results(tmp_path, settings, draft_set):
    """A bench result where every TST card was drawn in 40 seat games (won 22) except the golem (29 games)."""
    from decks.models import Printing

    names = list(Printing.objects.filter(card_set__code="TST").values_list("card__name", flat=True))
    cards = {n: {"won": 22, "games": 40, "wr": 0.55, "low": 0.4, "high": 0.69} for n in names}
    cards["TST golem"] = {"won": 20, "games": 29, "wr": 0.6897, "low": 0.5, "high": 0.83}
    cards["TST R common 0"] = {"won": 23, "games": 41, "wr": 0.561, "low": 0.41, "high": 0.70}
    path = tmp_path / "draft_games.json"
    agreement = {"rho": 0.41, "cards": 15, "low": 0.12, "high": 0.63}  # with 17Lands, above zero
    path.write_text(json.dumps({"benchmark": "draft_games",
                                "sets": {"TST": {"games": 300, "card_table": cards, "spearman": agreement}}}))
    settings.MTG_SIM_RATINGS = path
    return path


def test_the_suggest_api_shows_sim_ratings_from_30_games(client, results):
    body = post_json(client, "/api/drafts/suggest", {"set": "TST", "bot": "draftsim",
                                                     "pack": ["TST R common 0", "TST golem"], "pool": []}).json()
    rows = {r["card"]: r for r in body["ranking"]}
    assert rows["TST R common 0"]["sim_label"] == "sim GIH 56% (n=41)"
    assert (rows["TST R common 0"]["sim_gih"], rows["TST R common 0"]["sim_games"]) == (0.561, 41)
    assert "sim_label" not in rows["TST golem"]  # 29 games: not enough to show


def test_no_results_file_no_sim_ratings(client, draft_set, settings, tmp_path):
    settings.MTG_SIM_RATINGS = tmp_path / "missing.json"
    body = post_json(client, "/api/drafts/suggest", {"set": "TST", "bot": "draftsim",
                                                     "pack": ["TST R common 0"], "pool": []}).json()
    assert "sim_label" not in body["ranking"][0]
    assert services.sim_ratings("TST") == {}


def test_a_new_results_file_is_read_again(results):
    assert services.sim_ratings("TST")["TST R common 0"] == {"wr": 0.561, "n": 41}
    doc = json.loads(results.read_text())
    doc["sets"]["TST"]["card_table"]["TST R common 0"]["games"] = 10
    results.write_text(json.dumps(doc))
    import os

    os.utime(results, ns=(1, 2))  # a different modification time, as a new run gives
    assert "TST R common 0" not in services.sim_ratings("TST")


def test_a_pod_seat_sees_sim_ratings_of_its_own_pack_only(results):
    host = User.objects.create_user("host", password="pw-123456")
    draft, _ = service.create_pod("TST", 2, "draftsim", 0, "Host", user=host, seed=11)
    service.start_pod(draft.pk, host, None)
    draft = Draft.objects.get(pk=draft.pk)
    pod = service.load_pod(draft)
    row = draft.seat_set.get(seat=0)
    view = service.view_of(draft, pod, row)
    pack = {c["name"] for c in view["pack"]}
    assert view["suggestions"] and set(view["sim"]) <= pack
    assert set(view["sim"]) == pack - {"TST golem"}  # every pack card with 30+ games, nothing else
    other = set(pod.pool(1)) - pack  # the bot seat's pick so far
    assert other and not other & set(view["sim"])  # what another seat holds stays hidden
    some = next(iter(view["sim"].values()))
    assert some["label"].startswith("sim GIH ") and some["n"] >= 30


def test_a_set_whose_ratings_do_not_agree_with_players_beyond_noise_shows_none(client, results):
    """The FDN case: 106 games, the simulated ratings' rank correlation with 17Lands' interval spans zero: no label
    is shown, even for the cards with 30+ games."""
    import os

    doc = json.loads(results.read_text())
    doc["sets"]["TST"]["spearman"] = {"rho": -0.04, "cards": 7, "low": -0.43, "high": 0.32}
    results.write_text(json.dumps(doc))
    os.utime(results, ns=(3, 4))
    assert services.sim_ratings("TST") == {}
    body = post_json(client, "/api/drafts/suggest", {"set": "TST", "bot": "draftsim",
                                                     "pack": ["TST R common 0"], "pool": []})
    assert body.status_code == 200 and "sim_label" not in body.json()["ranking"][0]
