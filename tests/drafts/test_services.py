"""The drafts shell on a real database: set lists, simulated pods stored with decks, 17Lands import/export."""
from __future__ import annotations

import gzip
import io

import numpy as np
import pytest

from decks.core.catalogue import DataError
from drafts.core.cards import DraftError


def test_set_list_from_catalogue_keeps_list_order_and_drops_guests(draft_set):
    from drafts.services import log_columns, set_list

    s = set_list("tst")
    assert s.code == "TST" and s.booster == "play"
    assert s.names == [n for n in draft_set if n != "TST guest"]
    assert "TST guest" not in s.names
    assert log_columns("TST") == draft_set  # the file layout keeps the guest's column
    assert s.card("TST R common 0").colors == "R"


def test_set_pickers_order_sets_as_released_and_name_bonus_sheets_from_the_printings(db):
    """As import_sets stores them: 17Lands sets with Arena ids and no release date, a draft list (positions) for the
    premier sets that holds their bonus sheet's cards too, an Arena-only set with a list and no ids, MTGJSON's M19."""
    from decks.models import Card, CardSet, Printing
    from drafts.services import draftable_sets, set_choices

    def card_set(code, name="", first_id=None, cards=None, listed=False, also_listed=(), release=None):
        row = CardSet.objects.create(code=code, name=name, release_date=release)
        names = cards or [f"{code} card {i}" for i in range(24)]
        for i, n in enumerate([*names, *also_listed]):
            card = Card.objects.get_or_create(name=n, defaults={"name_key": n.lower(), "front_name": n})[0]
            own = i < len(names)
            Printing.objects.create(card=card, card_set=row, rarity="common", is_booster=own,
                                    arena_id=first_id + i if own and first_id else None,
                                    position=i if listed else None)
        return names

    mar = card_set("MAR", "", 105205, cards=[f"Reprint {i}" for i in range(20)])  # a bonus sheet: no list of its own
    card_set("MSH", "Marvel Super Heroes", 104892, listed=True, also_listed=mar)
    card_set("DOM", "Dominaria", 67106)
    card_set("GRN", "Guilds of Ravnica", 68462)
    card_set("M19", "Core Set 2019", 67682, release="2018-07-13")
    omb = card_set("OMB", "", 98013, cards=[f"Omen reprint {i}" for i in range(20)])
    card_set("OM1", "Through the Omenpaths", None, listed=True, also_listed=omb)  # no Arena ids: dated by its sheet
    card_set("SPM", "Marvel's Spider-Man", 97814)
    labels = [label for _, options in set_choices() for _, label in options]
    assert labels == ["Marvel Super Heroes (MSH)", "Marvel Super Heroes bonus sheet (MAR)",
                      "Through the Omenpaths (OM1)", "Through the Omenpaths bonus sheet (OMB)",
                      "Marvel's Spider-Man (SPM)", "Guilds of Ravnica (GRN)", "Core Set 2019 (M19)", "Dominaria (DOM)"]
    assert {s["code"]: s["part_of"] for s in draftable_sets()} == {
        "MAR": "MSH", "OMB": "OM1", "MSH": "", "DOM": "", "GRN": "", "M19": "", "OM1": "", "SPM": ""}


def test_unknown_set_is_a_clear_error(db):
    from drafts.services import set_list

    with pytest.raises(DraftError, match="unknown set 'NOPE'"):
        set_list("NOPE")


def test_simulated_pod_is_stored_with_every_pick_and_a_deck_per_seat(draft_set):
    from decks.models import Deck
    from drafts.models import DraftPick
    from drafts.services import simulate_draft

    draft = simulate_draft("TST", ["draftsim", "archetype", "rating", "random"] * 2, seed=11)
    seats = list(draft.seat_set.all())
    assert [s.seat for s in seats] == list(range(8))
    assert DraftPick.objects.filter(seat__draft=draft).count() == 8 * 42
    first = DraftPick.objects.get(seat=seats[0], pack_number=0, pick_number=0)
    assert len(first.pack) == 14 and first.pool == [] and first.pick in first.pack
    assert first.scores[0][0] == first.pick  # a bot takes its top-ranked card, scores are logged
    last = DraftPick.objects.get(seat=seats[0], pack_number=2, pick_number=13)
    assert len(last.pool) == 41 and len(last.pack) == 1
    for s in seats:
        assert len(s.log_id) == 32 and s.deck_id
        deck = Deck.objects.get(pk=s.deck_id)
        assert deck.main_count == 40 and deck.source == "draft"
        assert deck.main_count + deck.side_count == 42 + sum(
            c.count for c in deck.cards.filter(board="main", card__types="Land"))


def test_same_seed_same_draft(draft_set):
    from drafts.models import DraftPick
    from drafts.services import simulate_draft

    picks = []
    for _ in range(2):
        draft = simulate_draft("TST", ["draftsim"] * 4, seed=3, build_decks=False)
        picks.append(list(DraftPick.objects.filter(seat__draft=draft).order_by("seat__seat", "pack_number", "pick_number")
                          .values_list("pick", flat=True)))
    assert picks[0] == picks[1]


def test_bad_pods_are_refused_and_nothing_is_stored(draft_set):
    from drafts.models import Draft
    from drafts.services import simulate_draft

    with pytest.raises(DraftError, match="unknown bot"):
        simulate_draft("TST", ["draftsim", "magic8ball"])
    with pytest.raises(DraftError, match="2 to 8 seats"):
        simulate_draft("TST", ["draftsim"] * 9)
    with pytest.raises(DraftError, match="no trained neural bot"):
        simulate_draft("TST", ["neural"] * 2)
    assert not Draft.objects.exists()


def export_text(draft) -> str:
    from drafts.logstore import export_logs

    buffer = io.StringIO()
    export_logs(draft.seat_set.select_related("draft"), buffer)
    return buffer.getvalue()


def test_export_then_import_round_trips_exactly(draft_set, tmp_path):
    from drafts.core.logs import read_17lands_csv
    from drafts.logstore import import_logs
    from drafts.models import Draft, DraftPick
    from drafts.services import simulate_draft

    draft = simulate_draft("TST", ["draftsim"] * 8, seed=5, build_decks=False)
    text = export_text(draft)
    path = tmp_path / "draft_data.TST.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(text)
    logs = read_17lands_csv(path)
    assert len(logs) == 336 and logs.set_code == "TST" and logs.cards == draft_set
    # the file layout: first columns, then pack_card_ and pool_ columns over the set list
    header = text.splitlines()[0].split(",")
    assert header[:3] == ["expansion", "event_type", "draft_id"]
    assert header[12] == f"pack_card_{draft_set[0]}" and header[-1] == f"pool_{draft_set[-1]}"

    assert import_logs(path)["seats"] == 0  # every draft_id is already stored: idempotent
    log_ids = set(draft.seat_set.values_list("log_id", flat=True))
    draft.delete()
    added = import_logs(path)
    assert added == {"pods": 8, "seats": 8, "picks": 336, "skipped_seats": 0, "set": "TST"}  # no seats file: a pod per draft_id
    imported = Draft.objects.filter(kind="imported")
    assert set(imported.values_list("seat_set__log_id", flat=True)) == log_ids
    again = io.StringIO()
    from drafts.logstore import export_logs
    from drafts.models import DraftSeat

    export_logs(DraftSeat.objects.filter(draft__in=imported).order_by("log_id"), again)
    assert sorted(again.getvalue().splitlines()) == sorted(text.splitlines())
    assert DraftPick.objects.count() == 336


def test_seats_file_links_seats_into_pods(draft_set, tmp_path):
    from drafts.logstore import import_logs
    from drafts.models import Draft
    from drafts.services import simulate_draft

    draft = simulate_draft("TST", ["draftsim"] * 3, seed=2, build_decks=False)
    text = export_text(draft)
    seats = [(s.log_id, s.seat) for s in draft.seat_set.all()]
    draft.delete()
    path = tmp_path / "logs.csv"
    path.write_text(text)
    seats_path = tmp_path / "logs.seats.csv"
    seats_path.write_text("draft_id,pod_id,seat,pod_seed\n" + "".join(f"{d},TST-0,{n},2\n" for d, n in seats))
    assert import_logs(path)["pods"] == 1
    pod = Draft.objects.get()
    assert pod.external_id == "TST-0" and sorted(pod.seat_set.values_list("seat", flat=True)) == [0, 1, 2]


@pytest.mark.parametrize("damage, message", [
    ("truncate", "corrupt or truncated"),
    ("pick-not-in-pack", "is not in the pack shown"),
    ("unknown-set", "unknown set 'ZZZ'"),
    ("duplicate", "same pack and pick number twice"),
    ("not-a-draft-file", "missing columns"),
    ("bad-number", "corrupt or truncated|card counts"),
])
def test_bad_files_are_refused_whole(draft_set, tmp_path, damage, message):
    from drafts.logstore import import_logs
    from drafts.models import Draft, DraftPick
    from drafts.services import simulate_draft

    draft = simulate_draft("TST", ["draftsim"] * 2, seed=9, build_decks=False)
    text = export_text(draft)
    draft.delete()
    lines = text.splitlines()
    path = tmp_path / "bad.csv"
    if damage == "truncate":
        raw = gzip.compress(text.encode())
        path = tmp_path / "bad.csv.gz"
        path.write_bytes(raw[: len(raw) // 2])
    else:
        if damage == "pick-not-in-pack":
            cells = lines[5].split(",")
            cells[9] = next(n for n in draft_set if f"pack_card_{n}" in lines[0] and
                            cells[lines[0].split(",").index(f"pack_card_{n}")] == "0")
            lines[5] = ",".join(cells)
        elif damage == "unknown-set":
            lines = [lines[0]] + [line.replace("TST,", "ZZZ,", 1) for line in lines[1:]]
        elif damage == "duplicate":
            lines.append(lines[3])
        elif damage == "not-a-draft-file":
            lines = ["name,count", "Island,3"]
        elif damage == "bad-number":
            cells = lines[7].split(",")
            cells[20] = "x"
            lines[7] = ",".join(cells)
        path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=message):
        import_logs(path)
    assert not Draft.objects.exists() and not DraftPick.objects.exists()


def test_suggest_ranks_a_pack_and_checks_cards(draft_set):
    from drafts.services import suggest

    pack = ["TST R common 0", "TST W rare 0", "TST golem"]
    body = suggest("TST", "draftsim", pack, ["TST W common 1"] * 3)
    assert sorted(r["card"] for r in body["ranking"]) == sorted(pack)
    with pytest.raises(DraftError, match="not in TST"):
        suggest("TST", "draftsim", ["Black Lotus"], [])
    with pytest.raises(DraftError, match="empty"):
        suggest("TST", "draftsim", [], [])


def test_stored_picks_come_back_as_arrays(draft_set):
    from drafts.core.evaluate import agreement, ranks_from_scores, score_matrix
    from drafts.logstore import seat_logs
    from drafts.models import DraftPick
    from drafts.services import get_bot, set_list, simulate_draft

    draft = simulate_draft("TST", ["draftsim"] * 8, seed=4, build_decks=False)
    logs = seat_logs(draft.seat_set.select_related("draft"))
    assert len(logs) == 336 and logs.pack.sum(axis=1).max() == 14
    s = set_list("TST")
    bot, _ = get_bot("draftsim", s)
    scores = score_matrix(bot, logs, s)
    # the vectorised scores reproduce what pick() logged, pick by pick
    stored = [p.scores for p in DraftPick.objects.filter(seat__draft=draft).order_by("seat__seat", "pack_number", "pick_number")]
    column = {n: i for i, n in enumerate(logs.cards)}
    order = np.lexsort((logs.pick_number, logs.pack_number, [draft.seat_set.get(log_id=d).seat for d in logs.draft_id]))
    for row, logged in zip(order, stored):
        for name, value in logged:
            assert scores[row, column[name]] == pytest.approx(value, abs=1e-4)
    result = agreement(logs, ranks_from_scores(logs, scores))
    assert result["all"]["picks"] == 336 and result["all"]["top3"] >= result["all"]["top1"] > 0.3
