"""Completing from a collection: a deck that can be played, its open slots, its sideboard and what is missing.

Pure (numpy only, no Django): ``MaskedCompleter.complete`` calls :func:`playable_deck` with two decks it built for
the same cards and neighbours: ``built`` (only owned cards, within their counts: the collection as a hard mask)
and ``want`` (the deck a tournament player would build, whatever the collection).

The owned-only deck alone is not playable when the collection is small: basic lands are owned in any number, so
it pads the deck with 30+ lands and fills the sideboard with basics at 0%. Here instead:

1. **Playable copies.** A generated copy n of card c is kept when the nearest decks vote for it (share holding at
   least n copies >= ``min_vote``); a basic land the nearest decks play counts as playable in any number of copies
   (it stands in for the lands the collection lacks).
2. **Lands in range.** The deck plays ``target`` lands: the wanted deck's land count clamped to the range of the
   nearest real decks of the archetype (``land_range``: the fewest and the most lands among them). Owned playable
   lands first (by vote), then the wanted deck's lands (marked not owned when the collection lacks them).
3. **Open slots.** The spell slots the collection cannot fill with playable cards take the wanted deck's cards,
   most confident first, marked *not owned*; never padding with basics.
4. **Sideboard.** Owned sideboard cards the decks side (no basic land unless the format's decks side them);
   fewer than 15 is allowed, with a note.
5. **Missing.** The wanted deck (main + sideboard) against the collection: per card wanted, owned, missing
   (owned copies subtracted; the cards the player gave count as owned).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

MAIN_SIZE, SIDE_SIZE = 60, 15
MIN_VOTE = 0.05          # a copy is playable when at least 5% of the nearest decks (weighted) hold that many
RANGE_DECKS = 10         # the nearest decks whose land counts bound the deck's
SIDE_BASICS_SHARE = 0.05  # basic lands may be sided when at least 5% of the format's sideboards hold one

Vote = Callable[[int, int], float]   # (card, copy n >= 1) -> weighted share of the nearest decks holding >= n


@dataclass
class CollectionDeck:
    """The deck built from a collection (card indices -> copies) and what the page and the API say about it."""

    main: Counter
    side: Counter
    not_owned: Counter                    # main-deck copies the collection lacks (the open slots, filled)
    missing: list[tuple[int, int, int, int]] = field(default_factory=list)  # (card, wanted, owned, missing)
    lands: int = 0
    land_range: tuple[int, int] = (0, 0)
    notes: list[str] = field(default_factory=list)


def land_range(land_counts, fallback: int) -> tuple[int, int]:
    """(fewest, most) lands among the nearest decks' land counts (best first; the first ``RANGE_DECKS``);
    ``fallback`` for both when there are none."""
    counts = np.asarray(land_counts, dtype=np.int64)[:RANGE_DECKS]
    if counts.size == 0:
        return fallback, fallback
    return int(counts.min()), int(counts.max())


def effective_owned(owned: np.ndarray, given: Counter) -> np.ndarray:
    """Copies owned per card (-1: any number), the cards the player gave counting as owned."""
    out = np.asarray(owned, dtype=np.int64).copy()
    for c, n in given.items():
        if out[c] >= 0:
            out[c] = max(out[c], n)
    return out


def missing_rows(want: Counter, owned: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(card, wanted, owned, missing) for each card the wanted deck holds more of than the collection; most missing
    first."""
    rows = [(c, n, int(owned[c]), n - int(owned[c])) for c, n in want.items() if 0 <= owned[c] < n]
    return sorted(rows, key=lambda r: (-r[3], r[0]))


def playable_deck(*, given_main: Counter, given_side: Counter, built_main: Counter, built_side: Counter,
                  want_main: list[tuple[int, int]], want_side: Counter, owned: np.ndarray, limit: np.ndarray,
                  land: np.ndarray, basic: np.ndarray, main_vote: Vote, side_vote: Vote, land_counts,
                  side_confidence: dict[int, float] | None = None, side_basics_ok: bool = False,
                  min_vote: float = MIN_VOTE) -> CollectionDeck:
    """The playable deck from a collection (see the module docstring).

    ``want_main``: the wanted deck's main cards as (card, copies), most confident first; ``owned``: copies per card
    (-1 any number); ``limit``: the format's copy limit per card (0 any number); ``land``/``basic``: bool per card;
    ``land_counts``: the land count of each nearest deck, best first; ``side_confidence``: the ranker's confidence
    per sideboard card (a copy it chose counts as sided when >= ``min_vote``)."""
    owned = effective_owned(owned, given_main + given_side)
    want = Counter(dict(want_main))
    want_lands = sum(n for c, n in want.items() if land[c])
    lo, hi = land_range(land_counts, want_lands)
    given_lands = sum(n for c, n in given_main.items() if land[c])
    target = max(min(max(want_lands, lo), hi), given_lands)
    target = min(target, MAIN_SIZE - sum(n for c, n in given_main.items() if not land[c]))

    main = Counter(given_main)
    side = Counter(given_side)

    def room(c: int) -> int:
        return MAIN_SIZE if limit[c] <= 0 else max(0, int(limit[c]) - main[c] - side[c])

    def plays(c: int, n: int) -> float:
        """How playable copy n of c is in the main deck (0: not)."""
        v = main_vote(c, n)
        if v >= min_vote:
            return v
        if basic[c] and main_vote(c, 1) >= min_vote:  # a basic the decks play stands in for the lands owned
            return min_vote * main_vote(c, 1)
        return 0.0

    # 1. owned playable copies of the owned-only deck, in order of vote
    copies = [(plays(c, n), c, n) for c, total in built_main.items() for n in range(given_main[c] + 1, total + 1)]
    copies = sorted((x for x in copies if x[0] > 0), key=lambda x: (-x[0], x[2], x[1]))
    lands = given_lands
    spells_room = MAIN_SIZE - target - sum(n for c, n in given_main.items() if not land[c])
    for _, c, n in copies:
        if main[c] != n - 1 or room(c) <= 0:
            continue
        if land[c] and lands < target:
            main[c] += 1
            lands += 1
        elif not land[c] and spells_room > 0:
            main[c] += 1
            spells_room -= 1
    # 2. basics the decks play, to the land count (owned in any number), in proportion to their first-copy vote
    basics = sorted((c for c in np.flatnonzero(basic) if owned[c] != 0 and main_vote(int(c), 1) >= min_vote),
                    key=lambda c: (-main_vote(int(c), 1), int(c)))
    want_basic = [c for c in basics if want[c] > 0] or basics
    while lands < target and want_basic:
        c = int(max(want_basic, key=lambda b: (want[b] - main[b], main_vote(int(b), 1), -int(b))))
        if room(c) <= 0:
            want_basic.remove(c)
            continue
        main[c] += 1
        lands += 1
    # 3. the open slots: the wanted deck's cards, most confident first (lands to the target, then spells)
    owned_left = {c: (owned[c] - main[c] - side[c]) if owned[c] >= 0 else MAIN_SIZE for c in want}
    not_owned: Counter = Counter()
    for is_land in (True, False):
        for c, n in want_main:
            if bool(land[c]) != is_land:
                continue
            while main[c] < n and room(c) > 0 and (lands < target if is_land else spells_room > 0):
                main[c] += 1
                if owned_left[c] > 0:
                    owned_left[c] -= 1
                else:
                    not_owned[c] += 1
                if is_land:
                    lands += 1
                else:
                    spells_room -= 1
    # 4. still short (the wanted deck is in already): the owned-only deck's other copies, then the best basic
    short = MAIN_SIZE - sum(main.values())
    if short > 0:
        for c, total in sorted(built_main.items(), key=lambda e: -main_vote(e[0], 1)):
            while short > 0 and main[c] < total and room(c) > 0:
                main[c] += 1
                short -= 1
                lands += int(land[c])
        fill = [int(c) for c in np.flatnonzero(basic)]
        fill.sort(key=lambda c: (-main_vote(c, 1), c))
        if short > 0 and fill:
            main[fill[0]] += short
            lands += short
            short = 0
    # 5. the sideboard: owned copies the decks side, no basic land unless the format's decks side them
    side_conf = side_confidence or {}
    for c, total in sorted(built_side.items(), key=lambda e: (-side_vote(e[0], 1), e[0])):
        if basic[c] and not side_basics_ok:
            continue
        for n in range(given_side[c] + 1, total + 1):
            if side_vote(c, n) < min_vote and side_conf.get(c, 0.0) < min_vote:
                break
            if room(c) <= 0 or sum(side.values()) >= SIDE_SIZE:
                break
            side[c] += 1

    notes = []
    open_slots = sum(not_owned.values())
    if open_slots:
        notes.append(f"Your collection cannot fill this deck with playable cards: {open_slots} main-deck "
                     f"slot{'s' if open_slots != 1 else ''} hold cards you would need (marked not owned).")
    notes.append(f"{lands} lands: the nearest decks of this archetype play {lo}" + (f"-{hi}." if hi != lo else "."))
    sided = sum(side.values())
    if sided < SIDE_SIZE:
        notes.append(f"Your collection has {sided} sideboard card{'s' if sided != 1 else ''} for this deck: the "
                     f"sideboard holds {sided} of 15.")
    return CollectionDeck(main=+main, side=+side, not_owned=+not_owned,
                          missing=missing_rows(want + want_side, owned), lands=lands, land_range=(lo, hi),
                          notes=notes)
