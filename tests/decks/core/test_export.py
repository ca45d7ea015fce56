"""Tests for decks.core.export (pure, no Django)."""
from hypothesis import given, settings
from hypothesis import strategies as st

from decks.core.decklist import MAX_COUNT, Entry, ParsedDeck, parse_decklist
from decks.core.export import to_arena, to_mtgo

from .test_decklist import CARD_NAMES, INDEX

SAMPLE = ParsedDeck(
    main=[Entry("Lightning Bolt", 4), Entry("Fire // Ice", 2), Entry("Brazen Borrower // Petty Theft", 3),
          Entry("Lim-Dûl's Vault", 1), Entry("Island", 20)],
    side=[Entry("Duress", 2), Entry("Lightning Bolt", 1)],
    name="Izzet Tempo",
)


def roundtrip(text: str) -> ParsedDeck:
    result = parse_decklist(text, INDEX)
    assert result.ok, result.errors
    assert result.deck is not None
    return result.deck


def test_to_arena_layout() -> None:
    assert to_arena(SAMPLE) == (
        "About\nName Izzet Tempo\n\n"
        "Deck\n4 Lightning Bolt\n2 Fire // Ice\n3 Brazen Borrower // Petty Theft\n1 Lim-Dûl's Vault\n20 Island\n\n"
        "Sideboard\n2 Duress\n1 Lightning Bolt\n"
    )


def test_to_arena_without_name_or_sideboard() -> None:
    d = ParsedDeck(main=[Entry("Island", 60)], side=[])
    assert to_arena(d) == "Deck\n60 Island\n"


def test_to_arena_commander() -> None:
    d = ParsedDeck(main=[Entry("Island", 99)], side=[], commander=[Entry("Kenrith, the Returned King", 1)])
    assert to_arena(d) == "Commander\n1 Kenrith, the Returned King\n\nDeck\n99 Island\n"
    assert roundtrip(to_arena(d)) == d


def test_to_mtgo_layout() -> None:
    assert to_mtgo(SAMPLE) == (
        "4 Lightning Bolt\n2 Fire // Ice\n3 Brazen Borrower // Petty Theft\n1 Lim-Dûl's Vault\n20 Island\n\n"
        "2 Duress\n1 Lightning Bolt\n"
    )


def test_to_mtgo_edge_cases() -> None:
    assert to_mtgo(ParsedDeck([], [])) == ""
    assert to_mtgo(ParsedDeck([Entry("Island", 60)], [])) == "60 Island\n"
    only_side = ParsedDeck([], [Entry("Duress", 2)])
    assert roundtrip(to_mtgo(only_side)) == only_side
    with_commander = ParsedDeck([Entry("Island", 99)], [], commander=[Entry("Kenrith, the Returned King", 1)])
    assert to_mtgo(with_commander) == "99 Island\n\n1 Kenrith, the Returned King\n"


def test_sample_roundtrips() -> None:
    assert roundtrip(to_arena(SAMPLE)) == SAMPLE
    mtgo = roundtrip(to_mtgo(SAMPLE))
    assert (mtgo.main, mtgo.side) == (SAMPLE.main, SAMPLE.side)


def test_export_of_parsed_deck_roundtrips() -> None:
    text = "4 lightning bolt (M11) 146\n2 fire/ice\n1 Petty Theft // tempo\n\nSB: 2 duress"
    parsed = roundtrip(text)
    assert roundtrip(to_arena(parsed)) == parsed
    assert roundtrip(to_mtgo(parsed)) == parsed


# Any names from the index, each at most once per board (the parser merges repeats).
def boards(max_size: int) -> st.SearchStrategy[list[Entry]]:
    return st.lists(
        st.tuples(st.sampled_from(CARD_NAMES), st.integers(min_value=1, max_value=MAX_COUNT)),
        max_size=max_size,
        unique_by=lambda t: t[0],
    ).map(lambda pairs: [Entry(n, c) for n, c in pairs])


deck_names = st.text(alphabet=st.characters(whitelist_categories=("L", "N"), whitelist_characters=" -'"), max_size=30)
decks = st.builds(
    lambda main, side, name, commander: ParsedDeck(main, side, " ".join(name.split()), commander),
    boards(12), boards(8), deck_names, boards(2),
)


@settings(max_examples=300, deadline=None)
@given(decks)
def test_arena_roundtrip_property(deck: ParsedDeck) -> None:
    assert roundtrip(to_arena(deck)) == deck


@settings(max_examples=300, deadline=None)
@given(boards(12), boards(8))
def test_mtgo_roundtrip_property(main: list[Entry], side: list[Entry]) -> None:
    deck = ParsedDeck(main, side)
    assert roundtrip(to_mtgo(deck)) == deck
