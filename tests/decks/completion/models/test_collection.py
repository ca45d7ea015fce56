"""Completing from a collection (pure): lands in the archetype's range, no basics in the sideboard, the open
slots marked not owned, the 'missing' counts with owned copies subtracted (issue 36's Burn-core case)."""
from __future__ import annotations

from collections import Counter

import numpy as np

from decks.completion.models.collection import SIDE_SIZE, land_range, playable_deck

NAMES = ["Lightning Bolt", "Goblin Guide", "Monastery Swiftspear", "Lava Spike", "Rift Bolt", "Skewer the Critics",
         "Boros Charm", "Lightning Helix", "Eidolon of the Great Revel", "Searing Blaze", "Mountain",
         "Snow-Covered Mountain", "Sacred Foundry", "Inspiring Vantage", "Skullcrack", "Path to Exile", "Plains",
         "Forest", "Island", "Swamp", "Wastes", "Snow-Covered Plains", "Snow-Covered Island", "Snow-Covered Swamp",
         "Snow-Covered Forest", "Snow-Covered Wastes", "Smash to Smithereens"]
IX = {n: i for i, n in enumerate(NAMES)}
V = len(NAMES)
BASICS = ["Mountain", "Snow-Covered Mountain", "Plains", "Forest", "Island", "Swamp", "Wastes", "Snow-Covered Plains",
          "Snow-Covered Island", "Snow-Covered Swamp", "Snow-Covered Forest", "Snow-Covered Wastes"]
LANDS = BASICS + ["Sacred Foundry", "Inspiring Vantage"]


def named(**counts) -> Counter:
    return Counter({IX[k.replace("_", " ")]: v for k, v in counts.items()})


def c(*pairs) -> Counter:
    return Counter({IX[n]: k for n, k in pairs})


# the nearest real decks: Boros Burn with 18-20 lands
SPELLS = [("Lightning Bolt", 4), ("Goblin Guide", 4), ("Monastery Swiftspear", 4), ("Lava Spike", 4), ("Rift Bolt", 4),
          ("Skewer the Critics", 4), ("Boros Charm", 4), ("Lightning Helix", 4), ("Eidolon of the Great Revel", 4),
          ("Searing Blaze", 4)]
NEAREST = [c(*SPELLS, ("Mountain", 10 + k % 3), ("Sacred Foundry", 4), ("Inspiring Vantage", 4)) for k in range(10)]
NEAREST_SIDE = [c(("Skullcrack", 3), ("Path to Exile", 4), ("Smash to Smithereens", 2)) for _ in range(10)]


def vote(decks):
    def of(card: int, n: int) -> float:
        return sum(d[card] >= n for d in decks) / len(decks)
    return of


def arrays():
    land = np.zeros(V, bool)
    basic = np.zeros(V, bool)
    land[[IX[n] for n in LANDS]] = True
    basic[[IX[n] for n in BASICS]] = True
    limit = np.where(basic, 0, 4)
    return land, basic, limit


def owned_of(collection: Counter) -> np.ndarray:
    _, basic, _ = arrays()
    owned = np.zeros(V, np.int64)
    for card, n in collection.items():
        owned[card] = n
    owned[basic] = -1
    return owned


CORE = c(("Lightning Bolt", 4), ("Goblin Guide", 4), ("Monastery Swiftspear", 4))
BURN_COLLECTION = CORE + c(("Mountain", 20), ("Lava Spike", 4), ("Rift Bolt", 4), ("Skewer the Critics", 2))
# what the owned-only sampler gave before (issue 36): 22 spells, 30 Mountain + 8 Snow-Covered Mountain, a sideboard of
# basics at 0%
BUILT_MAIN = CORE + c(("Lava Spike", 4), ("Rift Bolt", 4), ("Skewer the Critics", 2), ("Mountain", 30),
                      ("Snow-Covered Mountain", 8))
BUILT_SIDE = c(("Forest", 1), ("Island", 1), ("Plains", 4), ("Swamp", 1), ("Wastes", 1), ("Snow-Covered Plains", 2),
               ("Snow-Covered Island", 1), ("Snow-Covered Swamp", 1), ("Snow-Covered Forest", 1),
               ("Snow-Covered Wastes", 2))
WANT_MAIN = [(IX[n], k) for n, k in SPELLS] + [(IX["Mountain"], 12), (IX["Sacred Foundry"], 4),
                                              (IX["Inspiring Vantage"], 4)]
WANT_SIDE = c(("Skullcrack", 3), ("Path to Exile", 4), ("Smash to Smithereens", 2))


def burn_case(**overrides):
    land, basic, limit = arrays()
    args = dict(given_main=CORE, given_side=Counter(), built_main=BUILT_MAIN, built_side=BUILT_SIDE,
                want_main=WANT_MAIN, want_side=WANT_SIDE, owned=owned_of(BURN_COLLECTION), limit=limit, land=land,
                basic=basic, main_vote=vote(NEAREST), side_vote=vote(NEAREST_SIDE),
                land_counts=[sum(n for k, n in d.items() if land[k]) for d in NEAREST])
    args.update(overrides)
    return playable_deck(**args)


def test_burn_core_lands_stay_in_the_nearest_decks_range():
    deck = burn_case()
    land, _, _ = arrays()
    lands = sum(n for k, n in deck.main.items() if land[k])
    assert sum(deck.main.values()) == 60
    assert 17 <= lands <= 24 and deck.lands == lands
    assert deck.land_range == (18, 20) and 18 <= lands <= 20
    assert deck.main[IX["Snow-Covered Mountain"]] == 0  # no neighbour plays it: not playable


def test_burn_core_every_given_and_owned_playable_card_is_kept():
    deck = burn_case()
    for card, n in (BURN_COLLECTION - c(("Mountain", 20))).items():
        assert deck.main[card] >= n, NAMES[card]


def test_burn_core_open_slots_are_the_cards_you_would_need_marked_not_owned():
    deck = burn_case()
    owned = owned_of(BURN_COLLECTION)
    assert sum(deck.not_owned.values()) > 0 and any("not owned" in note for note in deck.notes)
    for card, n in deck.main.items():
        beyond = n - owned[card] if owned[card] >= 0 else 0
        assert deck.not_owned[card] == max(beyond, 0), NAMES[card]
    # the open spell slots are the wanted deck's: Boros Charm, Lightning Helix, Eidolon, 2 more Skewer
    assert deck.not_owned[IX["Skewer the Critics"]] == 2 and deck.not_owned[IX["Boros Charm"]] == 4
    assert deck.main[IX["Mountain"]] >= 10  # owned basics stand in for the lands the collection lacks


def test_burn_core_sideboard_holds_no_basic_land():
    deck = burn_case()
    _, basic, _ = arrays()
    assert not any(basic[k] for k in deck.side)
    assert sum(deck.side.values()) < SIDE_SIZE and any("sideboard holds 0 of 15" in note for note in deck.notes)


def test_basics_are_sided_only_when_the_format_sides_them():
    side = c(("Island", 2))
    deck = burn_case(built_side=side, side_vote=vote([c(("Island", 2))] * 10), side_basics_ok=True)
    assert deck.side[IX["Island"]] == 2
    deck = burn_case(built_side=side, side_vote=vote([c(("Island", 2))] * 10), side_basics_ok=False)
    assert deck.side[IX["Island"]] == 0


def test_missing_is_a_table_with_owned_copies_subtracted():
    deck = burn_case()
    rows = {NAMES[card]: (wanted, owned, missing) for card, wanted, owned, missing in deck.missing}
    assert rows["Skewer the Critics"] == (4, 2, 2)   # both owned copies count: 2 missing, not 4
    assert rows["Boros Charm"] == (4, 0, 4)
    assert rows["Path to Exile"] == (4, 0, 4)         # the sideboard counts too
    assert "Lightning Bolt" not in rows and "Lava Spike" not in rows and "Mountain" not in rows
    assert all(missing == wanted - owned > 0 for wanted, owned, missing in rows.values())


def test_a_large_collection_needs_no_open_slot_and_sides_its_cards():
    everything = Counter({i: 4 for i in range(V)})
    built_main = Counter(dict(WANT_MAIN))
    built_side = WANT_SIDE + c(("Plains", 2))
    deck = burn_case(owned=owned_of(everything), built_main=built_main, built_side=+built_side)
    assert not deck.not_owned and deck.main == built_main
    assert deck.side == WANT_SIDE and any("sideboard holds 9 of 15" in note for note in deck.notes)


def test_a_collection_too_small_for_a_deck_shows_not_owned_slots():
    deck = burn_case(built_main=CORE + c(("Mountain", 48)), owned=owned_of(CORE))
    assert sum(deck.main.values()) == 60
    assert sum(deck.not_owned.values()) >= 20
    assert 18 <= deck.lands <= 20


def test_land_range_is_the_nearest_decks():
    assert land_range([20, 18, 19, 40] + [19] * 6 + [50], 22) == (18, 40)
    assert land_range([], 22) == (22, 22)
