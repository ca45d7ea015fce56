"""Build a 40-card limited deck from a draft pool (pure: no Django).

First Draftsim's published auto-build (the bots of draftsim.com): pick the two colours the pool is
most committed to, take the 23 best-rated on-colour playables and add 17 basics split by the
coloured pips of the chosen spells. Ratings are on Draftsim's 0-5 scale, where about 2 is "filler":
a card commits its drafter to its colours only by what it is rated above that floor, so a pile of
filler in a third colour does not outweigh a few strong cards.

Then a small improvement pass, because rating-only decks are often creature-light and top-heavy:
swap the lowest-rated marginal spells for the best on-colour cards left in the pool to reach about
15 creatures, at most 4 cards of mana value 6 or more and at least 4 two-drops, when the pool has
them. A swap never brings in a card rated below ``min_rating`` or more than ``max_loss`` below the
card it replaces, and never undoes an earlier goal. Every swap is written to ``notes``.

Everything is deterministic: ties go to the earlier card of the pool.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

from decks.core.cards import COLOR_ORDER
from drafts.core.cards import DraftCard, SetList

DEFAULT_RATING = 2.5  # a card without a rating (or every card when no ratings are given)
COMMITMENT_FLOOR = 2.0  # rating below which a card does not pull its drafter into its colours
BASIC_FOR_COLOR = {"W": "Plains", "U": "Island", "B": "Swamp", "R": "Mountain", "G": "Forest"}
COLORLESS_BASIC = "Wastes"


@dataclass
class BuiltDeck:
    """A built deck. ``main`` includes the basics (it adds up to the deck size); ``lands`` repeats
    the basics as basic -> count. ``score`` is the summed rating of the main deck's non-basic cards
    divided by the spell slots (23), so a deck short of playables scores lower."""

    main: list[tuple[str, int]]
    side: list[tuple[str, int]]
    colors: str
    lands: dict[str, int]
    notes: list[str] = field(default_factory=list)
    score: float = 0.0

    @property
    def size(self) -> int:
        return sum(n for _, n in self.main)

    def as_dict(self) -> dict:
        out = asdict(self)
        out["main"] = [[n, c] for n, c in self.main]
        out["side"] = [[n, c] for n, c in self.side]
        return out


def _rater(ratings: Mapping[str, float] | None):
    if not ratings:
        return lambda name: DEFAULT_RATING
    return lambda name: float(ratings.get(name, DEFAULT_RATING))


def commitment(pool: Sequence[str], set_list: SetList, ratings: Mapping[str, float] | None = None) -> dict[str, float]:
    """Per colour (WUBRG): the sum over the pool's cards of that colour of max(rating - 2, 0).

    A multicoloured card counts fully for each of its colours; colourless cards and basics count
    for none. Without ratings every card is rated 2.5, so commitment is half the card count.
    """
    rating = _rater(ratings)
    out = {c: 0.0 for c in COLOR_ORDER}
    for name in pool:
        card = set_list.card(name)
        if card.is_basic:
            continue
        weight = max(rating(name) - COMMITMENT_FLOOR, 0.0)
        for color in card.colors:
            if color in out:
                out[color] += weight
    return out


def _choose_colors(cards: list[DraftCard], commit: dict[str, float]) -> str:
    """The two colours with the highest commitment among those the pool has cards of.

    Ties go to the colour with more cards, then to WUBRG order. A pool with cards of one colour
    only gives a mono-coloured deck; a pool with no coloured card, a colourless one.
    """
    counts = Counter(col for c in cards if not c.is_basic for col in c.colors)
    present = [c for c in COLOR_ORDER if counts[c]]
    chosen = sorted(present, key=lambda c: (-commit[c], -counts[c], COLOR_ORDER.index(c)))[:2]
    return "".join(c for c in COLOR_ORDER if c in chosen)


def _pips(card: DraftCard, colors: str) -> dict[str, int]:
    """Coloured pips of a spell's cost in the deck's colours; the card's colours when the cost is
    unknown (the 17Lands set files carry no mana costs)."""
    pips = {c: n for c, n in card.color_pips().items() if c in colors}
    if not pips and not card.mana_cost:
        pips = {c: 1 for c in card.colors if c in colors}
    return pips


def split_basics(total: int, weights: Mapping[str, float], colors: str) -> dict[str, int]:
    """``total`` basics split over colours in proportion to ``weights`` (largest remainder).

    Every colour with a positive weight gets at least one basic when there are enough; with no
    weights at all the deck's colours share evenly. Keys are colour letters in WUBRG order.
    """
    cols = [c for c in COLOR_ORDER if weights.get(c, 0) > 0]
    if not cols:
        cols = [c for c in COLOR_ORDER if c in colors]
        weights = {c: 1.0 for c in cols}
    if not cols or total <= 0:
        return {}
    whole = sum(weights[c] for c in cols)
    exact = {c: total * weights[c] / whole for c in cols}
    counts = {c: int(exact[c]) for c in cols}
    by_remainder = sorted(cols, key=lambda c: (-(exact[c] - counts[c]), COLOR_ORDER.index(c)))
    for c in by_remainder[:total - sum(counts.values())]:
        counts[c] += 1
    for c in cols:  # at least one of each colour with pips, taken from the best-supplied colour
        if counts[c] == 0:
            donor = max(cols, key=lambda d: (counts[d], -COLOR_ORDER.index(d)))
            if counts[donor] > 1:
                counts[donor] -= 1
                counts[c] = 1
    return {c: n for c, n in counts.items() if n}


class _Builder:
    """The working state of one build: pool entries as (index, card), main deck and bench."""

    def __init__(self, pool, set_list, ratings, min_creatures, max_top, top_mv, min_two_drops,
                 min_rating, max_loss):
        self.rating = _rater(ratings)
        self.entries = [(i, set_list.card(name)) for i, name in enumerate(pool)]
        self.min_creatures, self.max_top, self.top_mv = min_creatures, max_top, top_mv
        self.min_two_drops, self.min_rating, self.max_loss = min_two_drops, min_rating, max_loss
        self.notes: list[str] = []

    def r(self, entry) -> float:
        return self.rating(entry[1].name)

    def best_first(self, entries):
        return sorted(entries, key=lambda e: (-self.r(e), e[0]))

    # counts over the main deck's spells (non-land cards)
    def creatures(self, main) -> int:
        return sum(1 for _, c in main if c.is_creature)

    def top(self, main) -> int:
        return sum(1 for _, c in main if not c.is_land and c.mana_value >= self.top_mv)

    def two_drops(self, main) -> int:
        return sum(1 for _, c in main if not c.is_land and c.mana_value == 2)

    def swap_once(self, main, bench, out_ok, in_ok, reason) -> bool:
        """Swap the worst acceptable main spell for the best acceptable bench card, if any pair is
        allowed by the rating rules. Removing a creature when the deck is at or below its creature
        target requires a creature in return, so later goals never undo the first one."""
        outs = sorted((e for e in main if not e[1].is_land and out_ok(e)),
                      key=lambda e: (self.r(e), -e[1].mana_value, -e[0]))
        for out in outs:
            keep_creature = out[1].is_creature and self.creatures(main) <= self.min_creatures
            ins = [e for e in bench if not e[1].is_land and in_ok(e)
                   and (e[1].is_creature or not keep_creature)
                   and self.r(e) >= self.min_rating and self.r(e) >= self.r(out) - self.max_loss]
            if ins:
                best = min(ins, key=lambda e: (-self.r(e), e[1].mana_value, e[0]))
                main.remove(out)
                bench.remove(best)
                main.append(best)
                bench.append(out)
                self.notes.append(f"swapped {out[1].name} (MV {out[1].mana_value:g}, rating {self.r(out):.2f}) for "
                                  f"{best[1].name} (MV {best[1].mana_value:g}, rating {self.r(best):.2f}): {reason}")
                return True
        return False

    def improve(self, main, bench) -> None:
        top_mv = self.top_mv
        while self.creatures(main) < self.min_creatures and self.swap_once(
                main, bench, out_ok=lambda e: not e[1].is_creature,
                in_ok=lambda e: e[1].is_creature and (e[1].mana_value < top_mv or self.top(main) < self.max_top),
                reason=f"{self.creatures(main)} creatures, aiming for {self.min_creatures}"):
            pass
        while self.top(main) > self.max_top and self.swap_once(
                main, bench, out_ok=lambda e: e[1].mana_value >= top_mv,
                in_ok=lambda e: e[1].mana_value < top_mv,
                reason=f"{self.top(main)} cards of mana value {top_mv}+, at most {self.max_top} wanted"):
            pass
        while self.two_drops(main) < self.min_two_drops and self.swap_once(
                main, bench, out_ok=lambda e: e[1].mana_value != 2,
                in_ok=lambda e: e[1].mana_value == 2,
                reason=f"{self.two_drops(main)} two-drops, aiming for {self.min_two_drops}"):
            pass


def build_deck(pool: Sequence[str], set_list: SetList, ratings: Mapping[str, float] | None = None,
               basics: Mapping[str, str] | None = None, *, deck_size: int = 40, land_count: int = 17,
               min_creatures: int = 15, max_top: int = 4, top_mv: float = 6, min_two_drops: int = 4,
               min_rating: float = COMMITMENT_FLOOR, max_loss: float = 1.0) -> BuiltDeck:
    """Build a deck from ``pool`` (card names, repeats kept); see the module docstring.

    ``ratings`` are Draftsim-scale (0-5) card ratings; unrated cards get 2.5. ``basics`` maps a
    colour letter to the basic land to add for it (default Plains/Island/Swamp/Mountain/Forest).
    Playables are the pool's non-basic cards whose colours are within the deck's colours
    (colourless cards and lands included on the same rule). With fewer than ``deck_size -
    land_count`` playables the deck takes them all and makes up the size with more basics.
    """
    basics = {**BASIC_FOR_COLOR, **(basics or {})}
    b = _Builder(pool, set_list, ratings, min_creatures, max_top, top_mv, min_two_drops, min_rating, max_loss)
    commit = commitment(pool, set_list, ratings)
    colors = _choose_colors([c for _, c in b.entries], commit)
    spell_slots = deck_size - land_count
    shown = ", ".join(f"{c} {commit[c]:.2f}" for c in COLOR_ORDER if commit[c] > 0) or "none"
    b.notes.append(f"colours {colors or 'colourless'} (commitment: {shown})")
    if len(colors) == 1:
        b.notes.append(f"the pool has playable colours only in {colors}: mono-coloured deck")

    playable = [e for e in b.entries if not e[1].is_basic and set(e[1].colors) <= set(colors)]
    ranked = b.best_first(playable)
    main, bench = ranked[:spell_slots], ranked[spell_slots:]
    if len(main) < spell_slots:
        b.notes.append(f"only {len(main)} playables in {colors or 'colourless'}: "
                       f"{spell_slots - len(main)} extra basics fill the deck")
    if bench:
        b.improve(main, bench)

    weights: Counter[str] = Counter()
    for _, card in main:
        if not card.is_land:
            weights.update(_pips(card, colors))
    n_basics = deck_size - len(main)
    split = split_basics(n_basics, weights, colors)
    lands: dict[str, int] = {}
    if split:
        for color, n in split.items():
            lands[basics[color]] = lands.get(basics[color], 0) + n
    elif n_basics > 0:
        lands[COLORLESS_BASIC] = n_basics
        b.notes.append(f"no coloured cards: {n_basics} {COLORLESS_BASIC}")

    main.sort(key=lambda e: (e[1].is_land, e[1].mana_value, e[1].name))
    in_main = {i for i, _ in main}
    main_counts = list(Counter(c.name for _, c in main).items()) + list(lands.items())
    side_counts = sorted(Counter(c.name for i, c in b.entries if i not in in_main).items())
    score = sum(b.r(e) for e in main) / spell_slots if spell_slots > 0 else 0.0
    return BuiltDeck(main=main_counts, side=side_counts, colors=colors, lands=lands, notes=b.notes,
                     score=round(score, 4))




def check_build(pool: Sequence[str], main: Sequence[tuple[str, int]], side: Sequence[tuple[str, int]],
                basics: Sequence[str] = tuple(BASIC_FOR_COLOR.values()) + (COLORLESS_BASIC,),
                max_basics: int = 60) -> list[str]:
    """Check a hand-built limited deck against the pool it comes from. Raises ``ValueError`` (with
    every problem) when a card is not in the pool or is used more often than it was drafted;
    basics are free. Returns warnings (a main deck under 40 cards) that do not stop a save."""
    problems, have = [], Counter(pool)
    used: Counter = Counter()
    lands = 0
    for board in (main, side):
        for name, count in board:
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                problems.append(f"{name}: the count must be a whole number, not {count!r}")
            elif name in basics:
                lands += count if board is main else 0
            else:
                used[name] += count
    for name, count in used.items():
        if name not in have:
            problems.append(f"{name} is not in your pool")
        elif count > have[name]:
            problems.append(f"{name}: you drafted {have[name]}, the deck uses {count}")
    if lands > max_basics:
        problems.append(f"{lands} basic lands is too many (at most {max_basics})")
    if problems:
        raise ValueError("; ".join(problems))
    size = sum(c for _, c in main)
    return [f"the main deck has {size} cards; limited decks need at least 40"] if size < 40 else []


__all__ = ["BASIC_FOR_COLOR", "BuiltDeck", "DEFAULT_RATING", "build_deck", "check_build", "commitment", "split_basics"]
