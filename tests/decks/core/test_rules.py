"""Tests for decks.core.rules (pure, no Django)."""
import pytest

from decks.core.decklist import Entry, ParsedDeck
from decks.core.rules import FORMATS, CardRules, Violation, normalize_format, validate_deck

LEGAL_EVERYWHERE = {f: "legal" for f in FORMATS}

CARDS = {
    "Lightning Bolt": CardRules("Lightning Bolt", 4, {**LEGAL_EVERYWHERE, "standard": "not_legal"}),
    "Counterspell": CardRules("Counterspell", 4, {"pauper": "legal", "legacy": "legal", "vintage": "legal"}),
    "Relentless Rats": CardRules("Relentless Rats", 0, LEGAL_EVERYWHERE),
    "Seven Dwarves": CardRules("Seven Dwarves", 7, LEGAL_EVERYWHERE),
    "Jace, the Mind Sculptor": CardRules(
        "Jace, the Mind Sculptor", 4, {"modern": "legal", "legacy": "legal", "vintage": "legal", "pauper": "not_legal"}
    ),
    "Ancestral Recall": CardRules("Ancestral Recall", 4, {"vintage": "restricted", "legacy": "banned"}),
    "Urza's Saga": CardRules("Urza's Saga", 4, {"modern": "legal", "legacy": "legal", "vintage": "legal"},
                             {"modern": "mtgjson"}),
    "Fire // Ice": CardRules("Fire // Ice", 4, {"modern": "legal", "pauper": "legal", "legacy": "weird"}),
    "Island": CardRules("Island", 0, {}),
}


def deck(main: dict[str, int], side: dict[str, int] | None = None, commander: dict[str, int] | None = None) -> ParsedDeck:
    return ParsedDeck(
        main=[Entry(n, c) for n, c in main.items()],
        side=[Entry(n, c) for n, c in (side or {}).items()],
        commander=[Entry(n, c) for n, c in (commander or {}).items()],
    )


def codes(violations: list[Violation]) -> list[str]:
    return [v.code for v in violations]


def test_formats_and_normalize_format() -> None:
    assert FORMATS == ["standard", "pioneer", "modern", "legacy", "vintage", "pauper", "premodern"]
    assert normalize_format("Modern") == "modern"
    assert normalize_format("  PAUPER ") == "pauper"
    assert normalize_format("Pre-Modern") == "premodern"
    for fmt in FORMATS:
        assert normalize_format(fmt.upper()) == fmt
    assert normalize_format("commander") is None
    assert normalize_format("") is None
    assert normalize_format(None) is None  # type: ignore[arg-type]


def test_card_rules_defaults() -> None:
    rules = CardRules("Lightning Bolt")
    assert rules.copy_limit == 4 and dict(rules.legality) == {} and dict(rules.legality_source) == {}


def test_legal_deck_has_no_violations() -> None:
    d = deck({"Lightning Bolt": 4, "Island": 56}, {"Counterspell": 4})
    assert validate_deck(d, CARDS) == []
    assert validate_deck(d, CARDS, "legacy") == []
    assert validate_deck(d, CARDS, "Pauper") == []


def test_main_size() -> None:
    (v,) = validate_deck(deck({"Island": 58}), CARDS)
    assert v == Violation("main_size", "Main deck has 58 cards; it needs at least 60.")
    (v,) = validate_deck(deck({"Island": 1}), CARDS)
    assert v.message == "Main deck has 1 card; it needs at least 60."
    assert validate_deck(deck({"Island": 40}), CARDS, min_main=40) == []
    assert codes(validate_deck(deck({}), CARDS)) == ["main_size"]


def test_side_size() -> None:
    (v,) = validate_deck(deck({"Island": 60}, {"Island": 16}), CARDS)
    assert v == Violation("side_size", "Sideboard has 16 cards; it can have at most 15.")
    assert validate_deck(deck({"Island": 60}, {"Island": 15}), CARDS) == []
    assert codes(validate_deck(deck({"Island": 60}, {"Island": 2}), CARDS, max_side=0)) == ["side_size"]


def test_copies_count_main_and_side_together() -> None:
    d = deck({"Lightning Bolt": 4, "Island": 56}, {"Lightning Bolt": 1})
    (v,) = validate_deck(d, CARDS)
    assert v == Violation(
        "copies", "5 copies of Lightning Bolt across main and sideboard; at most 4 are allowed.", "Lightning Bolt"
    )


def test_copy_limit_exemptions_and_custom_limits() -> None:
    assert validate_deck(deck({"Relentless Rats": 60}), CARDS) == []
    assert validate_deck(deck({"Island": 200}, {"Island": 15}), CARDS) == []
    assert validate_deck(deck({"Seven Dwarves": 7, "Island": 53}), CARDS) == []
    (v,) = validate_deck(deck({"Seven Dwarves": 8, "Island": 52}), CARDS)
    assert v.code == "copies" and v.card == "Seven Dwarves" and "at most 7 are allowed" in v.message


def test_basic_lands_exempt_even_without_rules() -> None:
    # Not in CARDS at all, yet a basic land: any number, always legal.
    assert validate_deck(deck({"Mountain": 30, "Snow-Covered Island": 30}), CARDS, "standard") == []


def test_card_missing_from_rules_uses_default_limit() -> None:
    (v,) = validate_deck(deck({"Mystery Card": 5, "Island": 55}), CARDS)
    assert v.code == "copies" and v.card == "Mystery Card"
    vs = validate_deck(deck({"Mystery Card": 4, "Island": 56}), CARDS, "modern")
    assert codes(vs) == ["unknown_legality"]


def test_copy_limit_one() -> None:
    cards = {"Highlander": CardRules("Highlander", 1, {})}
    (v,) = validate_deck(deck({"Highlander": 2, "Island": 58}), cards)
    assert v.message == "2 copies of Highlander across main and sideboard; at most 1 is allowed."


def test_banned() -> None:
    (v,) = validate_deck(deck({"Ancestral Recall": 1, "Island": 59}), CARDS, "legacy")
    assert v == Violation("banned", "Ancestral Recall is banned in Legacy.", "Ancestral Recall")


def test_banned_card_in_sideboard_and_with_too_many_copies() -> None:
    d = deck({"Island": 60}, {"Ancestral Recall": 5})
    assert codes(validate_deck(d, CARDS, "legacy")) == ["copies", "banned"]


def test_restricted() -> None:
    assert validate_deck(deck({"Ancestral Recall": 1, "Island": 59}), CARDS, "vintage") == []
    (v,) = validate_deck(deck({"Ancestral Recall": 1, "Island": 59}, {"Ancestral Recall": 1}), CARDS, "vintage")
    assert v.code == "restricted" and v.card == "Ancestral Recall"
    assert v.message == "Ancestral Recall is restricted in Vintage; at most 1 copy is allowed, but the deck has 2."
    # Restricted replaces the generic copy-limit message.
    assert codes(validate_deck(deck({"Ancestral Recall": 5, "Island": 55}), CARDS, "vintage")) == ["restricted"]


def test_not_legal() -> None:
    (v,) = validate_deck(deck({"Lightning Bolt": 4, "Island": 56}), CARDS, "standard")
    assert v == Violation("not_legal", "Lightning Bolt is not legal in Standard.", "Lightning Bolt")
    (v,) = validate_deck(deck({"Jace, the Mind Sculptor": 1, "Island": 59}), CARDS, "PAUPER")
    assert v.message == "Jace, the Mind Sculptor is not legal in Pauper."


def test_unknown_legality() -> None:
    (v,) = validate_deck(deck({"Counterspell": 4, "Island": 56}), CARDS, "premodern")
    assert v.code == "unknown_legality" and v.card == "Counterspell"
    assert "has not been seen legal in Premodern" in v.message
    # An unrecognised status string counts as unknown too.
    (v,) = validate_deck(deck({"Fire // Ice": 4, "Island": 56}), CARDS, "legacy")
    assert v.code == "unknown_legality"


def test_no_format_means_no_legality_checks() -> None:
    assert validate_deck(deck({"Ancestral Recall": 1, "Mystery Card": 1, "Island": 58}), CARDS) == []
    assert validate_deck(deck({"Ancestral Recall": 1, "Island": 59}), CARDS, "") == []


def test_other_format_names_are_looked_up_as_given() -> None:
    cards = {"Sol Ring": CardRules("Sol Ring", 1, {"commander": "legal", "duel": "banned"})}
    assert validate_deck(deck({"Sol Ring": 1}), cards, "Commander", min_main=1) == []
    assert codes(validate_deck(deck({"Sol Ring": 1}), cards, "duel", min_main=1)) == ["banned"]


def test_commander_cards_are_checked() -> None:
    d = deck({"Island": 60}, commander={"Jace, the Mind Sculptor": 1})
    assert codes(validate_deck(d, CARDS, "pauper")) == ["not_legal"]


def test_violation_order_sizes_first_then_deck_order() -> None:
    d = deck({"Lightning Bolt": 5, "Ancestral Recall": 1}, {"Island": 20, "Counterspell": 1})
    vs = validate_deck(d, CARDS, "standard")
    assert codes(vs) == ["main_size", "side_size", "copies", "not_legal", "unknown_legality", "unknown_legality"]
    assert [v.card for v in vs] == [None, None, "Lightning Bolt", "Lightning Bolt", "Ancestral Recall", "Counterspell"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_basics_legal_in_every_format(fmt: str) -> None:
    assert validate_deck(deck({"Island": 60}), CARDS, fmt) == []
