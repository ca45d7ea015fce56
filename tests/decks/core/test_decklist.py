"""Tests for decks.core.decklist (pure, no Django)."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decks.core.decklist import MAX_COUNT, Entry, LineError, ParsedDeck, ParseResult, parse_decklist
from decks.core.names import CardIndex

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
    "Duress",
    "Lurrus of the Dream-Den",
    "Kenrith, the Returned King",
    "1996 World Champion",
    "Erase (Not the Urza's Legacy One)",
]
INDEX = CardIndex(CARD_NAMES)


def parse(text: str, **kwargs) -> ParseResult:
    return parse_decklist(text, INDEX, **kwargs)


def ok_deck(text: str) -> ParsedDeck:
    result = parse(text)
    assert result.ok, result.errors
    assert result.deck is not None
    return result.deck


def main_of(text: str) -> list[tuple[str, int]]:
    return [(e.name, e.count) for e in ok_deck(text).main]


def side_of(text: str) -> list[tuple[str, int]]:
    return [(e.name, e.count) for e in ok_deck(text).side]


# -- data classes -------------------------------------------------------------


def test_parsed_deck_counts() -> None:
    deck = ParsedDeck(
        main=[Entry("Lightning Bolt", 3), Entry("Island", 20)],
        side=[Entry("Lightning Bolt", 1), Entry("Duress", 2)],
    )
    assert deck.main_count == 23
    assert deck.side_count == 3
    assert deck.counts() == {"Lightning Bolt": 4, "Island": 20, "Duress": 2}
    assert deck.name == "" and deck.commander == []


def test_parse_result_ok() -> None:
    assert ParseResult(ParsedDeck([], []), []).ok
    assert not ParseResult(ParsedDeck([], []), [LineError(1, "x", "bad", [])]).ok


def test_empty_input() -> None:
    for text in ("", "\n\n", "   \n\t\n"):
        deck = ok_deck(text)
        assert deck.main == [] and deck.side == [] and deck.commander == []


# -- counts -------------------------------------------------------------------


def test_count_styles() -> None:
    text = "4 Lightning Bolt\n4x Counterspell\n2X Duress\n3 x Island\n  1\tMountain  \nÆther Vial\n+2 Urza's Saga"
    assert main_of(text) == [
        ("Lightning Bolt", 4),
        ("Counterspell", 4),
        ("Duress", 2),
        ("Island", 3),
        ("Mountain", 1),
        ("Æther Vial", 1),
        ("Urza's Saga", 2),
    ]


def test_tabs_and_crlf() -> None:
    assert main_of("4\tLightning Bolt\r\n2\t\tIsland\r\n") == [("Lightning Bolt", 4), ("Island", 2)]
    assert main_of("1 Island\r2 Mountain") == [("Island", 1), ("Mountain", 2)]


def test_large_counts_allowed_up_to_limit() -> None:
    assert main_of(f"{MAX_COUNT} Relentless Rats\n7 Seven Dwarves") == [("Relentless Rats", MAX_COUNT), ("Seven Dwarves", 7)]


def test_duplicate_lines_are_summed_per_board() -> None:
    deck = ok_deck("2 Lightning Bolt\n1 Island\n2 lightning bolt\n\n1 Duress\n1 Lightning Bolt\n2 Duress")
    assert [(e.name, e.count) for e in deck.main] == [("Lightning Bolt", 4), ("Island", 1)]
    assert [(e.name, e.count) for e in deck.side] == [("Duress", 3), ("Lightning Bolt", 1)]


def test_name_starting_with_digits_is_not_a_count() -> None:
    assert main_of("1996 World Champion") == [("1996 World Champion", 1)]
    assert main_of("1 1996 World Champion") == [("1996 World Champion", 1)]


# -- names --------------------------------------------------------------------


def test_name_variants_resolve_to_canonical() -> None:
    text = (
        "1 lightning BOLT\n1 Lim-Dul's Vault\n1 Lim-Dûl’s Vault\n1 AEther Vial\n1 Aether Vial\n"
        "1 jace the mind sculptor\n1 Brazen Borrower\n1 Petty Theft\n1 Fire/Ice\n1 fire // ice\n1 Urza`s Saga"
    )
    assert main_of(text) == [
        ("Lightning Bolt", 1),
        ("Lim-Dûl's Vault", 2),
        ("Æther Vial", 2),
        ("Jace, the Mind Sculptor", 1),
        ("Brazen Borrower // Petty Theft", 2),
        ("Fire // Ice", 2),
        ("Urza's Saga", 1),
    ]


def test_name_with_parentheses_is_not_a_set_code() -> None:
    assert main_of("1 Erase (Not the Urza's Legacy One)") == [("Erase (Not the Urza's Legacy One)", 1)]


# -- comments -----------------------------------------------------------------


def test_full_line_comments() -> None:
    text = "// Creatures\n4 Thalia's Lieutenant\n# Spells\n4 Lightning Bolt\n//Lands\n20 Mountain"
    assert main_of(text) == [("Thalia's Lieutenant", 4), ("Lightning Bolt", 4), ("Mountain", 20)]


def test_split_card_is_not_a_comment() -> None:
    assert main_of("4 Fire // Ice") == [("Fire // Ice", 4)]
    assert main_of("Fire // Ice") == [("Fire // Ice", 1)]
    assert main_of("2 Brazen Borrower // Petty Theft") == [("Brazen Borrower // Petty Theft", 2)]


def test_trailing_comment() -> None:
    assert main_of("4 Lightning Bolt // burn") == [("Lightning Bolt", 4)]
    assert main_of("4 Lightning Bolt //burn it all") == [("Lightning Bolt", 4)]
    assert main_of("4 Fire // Ice // cheap interaction") == [("Fire // Ice", 4)]
    assert main_of("2 Brazen Borrower // tempo") == [("Brazen Borrower // Petty Theft", 2)]
    assert main_of("4 Lightning Bolt (M11) 146 // burn") == [("Lightning Bolt", 4)]


# -- Arena --------------------------------------------------------------------


def test_arena_export() -> None:
    text = """About
Name Izzet Tempo

Deck
4 Lightning Bolt (M11) 146
1 Fire // Ice (MH2) 290
2 Brazen Borrower (ELD) 39
4 Counterspell (2X2) 45a
1 Urza's Saga (MH2) ★
20 Island (UST) 213 *F*
1 Mountain [M21]

Sideboard
2 Duress (XLN) 105
"""
    deck = ok_deck(text)
    assert deck.name == "Izzet Tempo"
    assert [(e.name, e.count) for e in deck.main] == [
        ("Lightning Bolt", 4),
        ("Fire // Ice", 1),
        ("Brazen Borrower // Petty Theft", 2),
        ("Counterspell", 4),
        ("Urza's Saga", 1),
        ("Island", 20),
        ("Mountain", 1),
    ]
    assert [(e.name, e.count) for e in deck.side] == [("Duress", 2)]


def test_arena_set_code_without_number() -> None:
    assert main_of("4 Lightning Bolt (M11)") == [("Lightning Bolt", 4)]


def test_arena_commander_and_companion() -> None:
    text = """Commander
1 Kenrith, the Returned King (ELD) 303

Companion
1 Lurrus of the Dream-Den (IKO) 226

Deck
1 Lightning Bolt (M11) 146
"""
    deck = ok_deck(text)
    assert deck.commander == [Entry("Kenrith, the Returned King", 1)]
    assert deck.main == [Entry("Lightning Bolt", 1)]
    assert deck.side == [Entry("Lurrus of the Dream-Den", 1)]


def test_arena_companion_also_listed_in_sideboard_counts_once() -> None:
    text = "Companion\n1 Lurrus of the Dream-Den\n\nDeck\n4 Lightning Bolt\n\nSideboard\n1 Lurrus of the Dream-Den\n2 Duress"
    assert side_of(text) == [("Lurrus of the Dream-Den", 1), ("Duress", 2)]


def test_maybeboard_is_ignored() -> None:
    text = "Deck\n4 Lightning Bolt\n\nMaybeboard\n2 Duress\n3 Not A Real Card\n\nSideboard\n1 Island"
    deck = ok_deck(text)
    assert deck.main == [Entry("Lightning Bolt", 4)]
    assert deck.side == [Entry("Island", 1)]


def test_about_section_ends_at_first_card_line() -> None:
    deck = ok_deck("About\nName Burn\n4 Lightning Bolt")
    assert deck.name == "Burn"
    assert deck.main == [Entry("Lightning Bolt", 4)]


def test_name_colon_line() -> None:
    deck = ok_deck("Name: Mono Red\n4 Lightning Bolt")
    assert deck.name == "Mono Red"


# -- MTGO / blank-line sideboard ----------------------------------------------


def test_mtgo_blank_line_splits_sideboard() -> None:
    text = "4 Lightning Bolt\n20 Mountain\n\n2 Duress\n1 Island\n"
    deck = ok_deck(text)
    assert [(e.name, e.count) for e in deck.main] == [("Lightning Bolt", 4), ("Mountain", 20)]
    assert [(e.name, e.count) for e in deck.side] == [("Duress", 2), ("Island", 1)]


def test_only_first_blank_line_after_main_cards_counts() -> None:
    text = "\n\n// main\n4 Lightning Bolt\n\n\n2 Duress\n\n1 Island\n\n\n"
    deck = ok_deck(text)
    assert deck.main == [Entry("Lightning Bolt", 4)]
    assert deck.side == [Entry("Duress", 2), Entry("Island", 1)]


def test_trailing_blank_lines_do_not_create_sideboard() -> None:
    deck = ok_deck("4 Lightning Bolt\n20 Mountain\n\n\n   \n")
    assert deck.main_count == 24 and deck.side == []


def test_blank_lines_ignored_when_sideboard_header_present() -> None:
    text = "4 Lightning Bolt\n\n20 Mountain\n\nSideboard\n2 Duress"
    deck = ok_deck(text)
    assert [(e.name, e.count) for e in deck.main] == [("Lightning Bolt", 4), ("Mountain", 20)]
    assert deck.side == [Entry("Duress", 2)]


def test_sb_prefix_lines() -> None:
    text = "4 Lightning Bolt\n\n20 Mountain\nSB: 2 Duress\nsb:1 Island\nSB:  Counterspell"
    deck = ok_deck(text)
    assert [(e.name, e.count) for e in deck.main] == [("Lightning Bolt", 4), ("Mountain", 20)]
    assert [(e.name, e.count) for e in deck.side] == [("Duress", 2), ("Island", 1), ("Counterspell", 1)]


# -- headers ------------------------------------------------------------------


def test_header_variants() -> None:
    for header in ("Sideboard", "Sideboard:", "SIDEBOARD", "sideboard", "Sideboard (15)", "Sideboard: (15)",
                   "Side board", "// Sideboard", "# Sideboard", "SB:", "Sideboard [3]"):
        text = f"Main\n4 Lightning Bolt\n{header}\n3 Duress"
        deck = ok_deck(text)
        assert deck.main == [Entry("Lightning Bolt", 4)], header
        assert deck.side == [Entry("Duress", 3)], header


def test_main_header_variants() -> None:
    for header in ("Main", "Maindeck", "Main Deck", "Mainboard", "Deck", "Deck:", "DECK", "Main deck (60)"):
        text = f"Sideboard\n1 Duress\n{header}\n4 Lightning Bolt"
        deck = ok_deck(text)
        assert deck.main == [Entry("Lightning Bolt", 4)], header
        assert deck.side == [Entry("Duress", 1)], header


# -- errors -------------------------------------------------------------------


def test_unknown_card_with_suggestions() -> None:
    result = parse("4 Lightning Bolt\n4 Lightnig Bolt\n20 Mountain")
    assert not result.ok
    assert len(result.errors) == 1
    err = result.errors[0]
    assert err.line_no == 2
    assert err.line == "4 Lightnig Bolt"
    assert err.message == 'Unknown card "Lightnig Bolt"'
    assert err.suggestions[0] == "Lightning Bolt"
    # The rest of the deck is still there.
    assert result.deck is not None
    assert result.deck.main == [Entry("Lightning Bolt", 4), Entry("Mountain", 20)]


def test_unknown_card_reports_name_without_set_or_comment() -> None:
    errors = parse("4 Lightnig Bolt (M11) 146\n4 Lightnig Bolt // burn\n  2x  Counterspel  ").errors
    assert [e.message for e in errors] == ['Unknown card "Lightnig Bolt"'] * 2 + ['Unknown card "Counterspel"']
    assert [e.line_no for e in errors] == [1, 2, 3]
    assert errors[2].line == "  2x  Counterspel  "
    assert all(e.suggestions for e in errors)


def test_unknown_split_card_reports_whole_name() -> None:
    (err,) = parse("1 Fier // Ice").errors
    assert err.message == 'Unknown card "Fier // Ice"'
    assert err.suggestions[0] == "Fire // Ice"


def test_unknown_card_without_suggestions() -> None:
    (err,) = parse("1 Qqqzzxx").errors
    assert err.message == 'Unknown card "Qqqzzxx"'
    assert err.suggestions == []


def test_bad_counts() -> None:
    text = "0 Lightning Bolt\n-2 Island\n251 Mountain\n99999999999999999999999999 Island\n00 Duress"
    errors = parse(text).errors
    assert [e.line_no for e in errors] == [1, 2, 3, 4, 5]
    assert "at least 1" in errors[0].message and "0" in errors[0].message
    assert "at least 1" in errors[1].message and "-2" in errors[1].message
    assert "too large" in errors[2].message and "250" in errors[2].message
    assert "too large" in errors[3].message
    assert "at least 1" in errors[4].message


def test_number_only_lines() -> None:
    errors = parse("4\n4 Lightning Bolt\n  12  \n3x\n2 // comment\nSB: 3x").errors
    assert [e.line_no for e in errors] == [1, 3, 4, 5, 6]
    assert all("no card name" in e.message for e in errors)
    assert "(4)" in errors[0].message


def test_errors_do_not_stop_parsing_and_keep_raw_line() -> None:
    result = parse("Deck\n4 Bolt of Lightning\n4 Lightning Bolt\n\nSideboard\n0 Duress\n2 Duress\n4")
    assert [e.line_no for e in result.errors] == [2, 6, 8]
    assert [e.line for e in result.errors] == ["4 Bolt of Lightning", "0 Duress", "4"]
    assert result.deck is not None
    assert result.deck.main == [Entry("Lightning Bolt", 4)]
    assert result.deck.side == [Entry("Duress", 2)]


def test_too_many_lines() -> None:
    text = "\n".join(["1 Island"] * 11)
    result = parse(text, max_lines=10)
    assert not result.ok
    assert len(result.errors) == 1
    assert result.errors[0].line_no == 11
    assert "too long" in result.errors[0].message
    assert result.deck is None
    # Exactly at the limit, and trailing blank lines do not count.
    assert parse("\n".join(["1 Island"] * 10) + "\n\n\n", max_lines=10).ok


def test_too_long_line() -> None:
    result = parse("4 Lightning Bolt\n1 " + "a" * 2000 + "\n// " + "comment " * 200)
    assert [e.line_no for e in result.errors] == [2]
    assert "too long" in result.errors[0].message
    assert result.deck is not None and result.deck.main == [Entry("Lightning Bolt", 4)]


def test_invisible_characters_and_bom() -> None:
    assert main_of("\ufeff4 Lightning Bolt\n2 Island\u200b") == [("Lightning Bolt", 4), ("Island", 2)]


# -- properties ---------------------------------------------------------------

FRAGMENTS = [
    "4", "1", "0", "-1", "251", "99999999999999999999", "x", "X", "4x", "(M11)", "(2X2)", "146", "146a", "★", "*F*",
    "//", "/", "///", "#", "SB:", "Sideboard", "Sideboard (15)", "Deck", "Main", "Commander", "Companion",
    "About", "Name", "Maybeboard", ":", "[", "]", "(", ")", "\t", " ", "Lightning", "Bolt", "Fire", "Ice",
    "Lim-Dûl's", "Æther", "\u200b", "\ufeff", "\r", "\x00", "é", "𝔘", "\u2028",
] + CARD_NAMES

line_strategy = st.lists(st.sampled_from(FRAGMENTS), max_size=6).map(" ".join) | st.just("") | st.text(max_size=30)
assembled_text = st.lists(line_strategy, max_size=25).map("\n".join)


def _check_invariants(text: str, result: ParseResult, max_lines: int = 1000) -> None:
    assert isinstance(result, ParseResult)
    if result.ok:
        assert result.deck is not None
        assert all(1 <= e.count <= MAX_COUNT * 1000 for e in (*result.deck.main, *result.deck.side))
        assert all(e.name in CARD_NAMES for e in (*result.deck.main, *result.deck.side, *result.deck.commander))
    else:
        n_lines = len(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        for err in result.errors:
            assert 1 <= err.line_no <= max(n_lines, max_lines + 1)
            assert isinstance(err.message, str) and err.message
            assert all(s in CARD_NAMES for s in err.suggestions)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_never_raises_on_arbitrary_text(text: str) -> None:
    _check_invariants(text, parse(text))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(assembled_text)
def test_never_raises_on_decklist_like_text(text: str) -> None:
    _check_invariants(text, parse(text))


@settings(max_examples=100, deadline=None)
@given(assembled_text, st.integers(min_value=-2, max_value=5))
def test_never_raises_with_small_max_lines(text: str, max_lines: int) -> None:
    result = parse(text, max_lines=max_lines)
    assert isinstance(result, ParseResult)
    assert result.ok or result.errors


def test_a_page_shows_the_first_errors_and_says_how_many_more_and_where():
    from decks.core.decklist import SHOWN_ERRORS, shown_errors

    errors = [{"line": n, "message": f"Unknown card on {n}"} for n in range(1, 501)]
    shown = shown_errors(errors)
    assert shown["errors"] == errors[:SHOWN_ERRORS] and SHOWN_ERRORS == 10
    assert (shown["more"], shown["more_where"], shown["total"]) == (490, "on lines 11–500", 500)
    gaps = [{"line": n} for n in (*range(1, 11), 12, 13, 14, 20, 31)] + [{"line": None}]
    assert shown_errors(gaps)["more_where"] == "on lines 12–14, 20, 31" and shown_errors(gaps)["more"] == 6
    assert shown_errors(errors[:10])["more"] == 0 and shown_errors(errors[:11])["more_where"] == "on line 11"
    scattered = [{"line": n} for n in range(1, 60, 2)]  # 20 lines left, each its own range: the first few, then …
    assert shown_errors(scattered)["more_where"] == "on lines 21, 23, 25, 27, 29, 31, …"
    assert shown_errors([{"line": None, "message": "too long"}] * 12)["more_where"] == ""
