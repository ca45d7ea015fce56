"""Tests for decks.core.names (pure, no Django)."""
import random
import string

import pytest

from decks.core.names import CardIndex, loose_key, normalize_name

CARD_NAMES = [
    "Lightning Bolt",
    "Fire // Ice",
    "Brazen Borrower // Petty Theft",
    "Lim-Dûl's Vault",
    "Æther Vial",
    "Jace, the Mind Sculptor",
    "Mountain",
    "Island",
    "Counterspell",
    "Relentless Rats",
    "Seven Dwarves",
    "Urza's Saga",
    "Thalia's Lieutenant",
    "Thalia, Guardian of Thraben",
]


@pytest.fixture(scope="module")
def index() -> CardIndex:
    return CardIndex(CARD_NAMES)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Lightning Bolt", "lightning bolt"),
        ("  LIGHTNING   bolt\t", "lightning bolt"),
        ("Lim-Dûl's Vault", "lim-dul's vault"),
        ("Lim–Dul’s Vault", "lim-dul's vault"),
        ("Lim—Dul`s Vault", "lim-dul's vault"),
        ("Lim-Dul´s Vault", "lim-dul's vault"),
        ("Lim-Dul‘s Vault", "lim-dul's vault"),
        ("Lim-Dul′s Vault", "lim-dul's vault"),
        ("Æther Vial", "aether vial"),
        ("æther vial", "aether vial"),
        ("AEther Vial", "aether vial"),
        ("Aether Vial", "aether vial"),
        ("Fire // Ice", "fire // ice"),
        ("Fire/Ice", "fire // ice"),
        ("Fire / Ice", "fire // ice"),
        ("Fire///Ice", "fire // ice"),
        ("fire  //   ice", "fire // ice"),
        ("Jötun Grunt", "jotun grunt"),
        ("Séance", "seance"),
        ("\u00a0Island\u00a0", "island"),
        ("", ""),
        ("   ", ""),
    ],
)
def test_normalize_name(raw: str, expected: str) -> None:
    assert normalize_name(raw) == expected


def test_normalize_name_is_idempotent() -> None:
    for name in CARD_NAMES + ["Fire/Ice", "Lim–Dul’s  Vault", "ÆTHER"]:
        once = normalize_name(name)
        assert normalize_name(once) == once


def test_loose_key_ignores_punctuation() -> None:
    assert loose_key("Jace, the Mind-Sculptor") == loose_key("jace the mind sculptor")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Lightning Bolt", "Lightning Bolt"),
        ("lightning bolt", "Lightning Bolt"),
        ("LIGHTNING BOLT", "Lightning Bolt"),
        ("Fire // Ice", "Fire // Ice"),
        ("fire/ice", "Fire // Ice"),
        ("Fire", "Fire // Ice"),
        ("ice", "Fire // Ice"),
        ("Brazen Borrower", "Brazen Borrower // Petty Theft"),
        ("Petty Theft", "Brazen Borrower // Petty Theft"),
        ("Brazen Borrower / Petty Theft", "Brazen Borrower // Petty Theft"),
        ("Lim-Dul's Vault", "Lim-Dûl's Vault"),
        ("lim-dûl’s vault", "Lim-Dûl's Vault"),
        ("Aether Vial", "Æther Vial"),
        ("AEther Vial", "Æther Vial"),
        ("Jace, the Mind Sculptor", "Jace, the Mind Sculptor"),
        ("Jace the Mind Sculptor", "Jace, the Mind Sculptor"),
        ("Urza’s Saga", "Urza's Saga"),
        ("Thalia's Lieutenant", "Thalia's Lieutenant"),
    ],
)
def test_resolve(index: CardIndex, query: str, expected: str) -> None:
    assert index.resolve(query) == expected


@pytest.mark.parametrize("query", ["", "   ", "Lightnig Bolt", "Bolt", "//", "Fire // Ice // Water", "Thalia"])
def test_resolve_unknown(index: CardIndex, query: str) -> None:
    assert index.resolve(query) is None


def test_full_name_beats_face_name_regardless_of_order() -> None:
    for names in (["Fire // Ice", "Fire"], ["Fire", "Fire // Ice"]):
        idx = CardIndex(names)
        assert idx.resolve("fire") == "Fire"
        assert idx.resolve("Ice") == "Fire // Ice"
        assert idx.resolve("Fire // Ice") == "Fire // Ice"


def test_ambiguous_loose_key_does_not_resolve() -> None:
    idx = CardIndex(["Ab-C", "A bC"])
    assert idx.resolve("ab-c") == "Ab-C"
    assert idx.resolve("a bc") == "A bC"
    assert idx.resolve("abc") is None


def test_contains_len_iter(index: CardIndex) -> None:
    assert "lightning bolt" in index
    assert "Petty Theft" in index
    assert "Lightnig Bolt" not in index
    assert 42 not in index
    assert len(index) == len(CARD_NAMES)
    assert list(index) == CARD_NAMES
    assert len(CardIndex(["Island", "Island", ""])) == 1


def test_suggest_finds_typos(index: CardIndex) -> None:
    assert index.suggest("Lightnig Bolt")[0] == "Lightning Bolt"
    assert index.suggest("lighting bolt")[0] == "Lightning Bolt"
    assert index.suggest("Brazen Borower")[0] == "Brazen Borrower // Petty Theft"
    assert index.suggest("Counter spell")[0] == "Counterspell"
    assert index.suggest("Lim Dul Vault")[0] == "Lim-Dûl's Vault"
    assert index.suggest("Ather Vial")[0] == "Æther Vial"
    assert index.suggest("Relentles Rat")[0] == "Relentless Rats"


def test_suggest_dedupes_and_limits(index: CardIndex) -> None:
    # "fire // ice", "fire" and "ice" are all keys of the same card.
    found = index.suggest("Fire // Ic", limit=5)
    assert found.count("Fire // Ice") == 1
    assert len(index.suggest("Thalia", limit=1)) == 1
    assert set(index.suggest("Thalia", limit=2)) == {"Thalia's Lieutenant", "Thalia, Guardian of Thraben"}
    assert index.suggest("Lightning Bolt", limit=0) == []


def test_suggest_nothing_close(index: CardIndex) -> None:
    assert index.suggest("zzqxv wq") == []
    assert index.suggest("") == []
    assert index.suggest("   ") == []
    assert CardIndex([]).suggest("Lightning Bolt") == []


def test_suggest_with_scores_sorted(index: CardIndex) -> None:
    scored = index.suggest_with_scores("Thalias Lieutenant")
    assert scored[0][0] == "Thalia's Lieutenant"
    scores = [score for _, score in scored]
    assert scores == sorted(scores, reverse=True)
    assert all(70 <= s <= 100 for s in scores)


def test_large_index_resolves_and_suggests() -> None:
    rng = random.Random(7)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9))).title() for _ in range(2500)]
    names = {" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) for _ in range(36000)}
    names |= set(CARD_NAMES)
    idx = CardIndex(sorted(names))
    assert len(idx) == len(names)
    assert idx.resolve("lightning bolt") == "Lightning Bolt"
    assert idx.resolve("Petty Theft") == "Brazen Borrower // Petty Theft"
    assert idx.suggest("Lightnig Bolt")[0] == "Lightning Bolt"
    assert idx.suggest("Brazen Borower")[0] == "Brazen Borrower // Petty Theft"


def test_look_alike_names_each_resolve_to_themselves():
    """Names equal up to spaces and punctuation (the catalogue has 9 such pairs) are two cards: the exact name wins,
    and the loose key is used only when one card has it."""
    names = ["Wasteland", "Waste Land", "Glimpse the Unthinkable", "Glimpse, the Unthinkable", "Monster Mash-Up",
             "Monster Mashup", "Brazen Borrower // Petty Theft"]
    index = CardIndex(names)
    for i, name in enumerate(names):
        assert index.resolve(name) == name and index.position(name) == i
    assert index.resolve("wasteland") == "Wasteland" and index.resolve("WASTE LAND") == "Waste Land"
    assert index.resolve("Waste-Land!") is None  # the loose key is ambiguous: no guess
    assert index.position("Petty Theft") == 6 and index.position("Counterspell") is None
    assert CardIndex(["Jace, the Mind Sculptor"]).resolve("Jace the Mind-Sculptor") == "Jace, the Mind Sculptor"


def test_position_is_in_the_list_given_with_duplicates():
    assert CardIndex(["A", "B", "A", "C"]).position("C") == 3
