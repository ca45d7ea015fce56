"""Constructed deck-construction rules (pure: no Django).

``validate_deck`` checks deck sizes, copy limits and format legality and
returns plain-English ``Violation``s; an empty list means the deck is fine.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .cards import BASIC_LAND_NAMES
from .decklist import ParsedDeck

__all__ = ["FORMATS", "LEGALITY_STATUSES", "CardRules", "Violation", "normalize_format", "validate_deck"]

FORMATS = ["standard", "pioneer", "modern", "legacy", "vintage", "pauper", "premodern"]
LEGALITY_STATUSES = frozenset({"legal", "restricted", "banned", "not_legal"})
DEFAULT_COPY_LIMIT = 4


@dataclass(frozen=True)
class CardRules:
    """What the rules need to know about one card.

    ``copy_limit`` 0 means any number. ``legality`` maps a lowercase format to
    one of ``LEGALITY_STATUSES``; a format missing from it is unknown.
    ``legality_source`` says where each status came from ("mtgjson" or "observed").
    """

    name: str
    copy_limit: int = DEFAULT_COPY_LIMIT
    legality: Mapping[str, str] = field(default_factory=dict)
    legality_source: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Violation:
    code: str  # main_size, side_size, copies, banned, restricted, not_legal, unknown_legality
    message: str
    card: str | None = None


def normalize_format(name: str) -> str | None:
    """``"Modern"``, ``" PAUPER "``, ``"Pre-Modern"`` -> the key in ``FORMATS``; None when unknown."""
    if not isinstance(name, str):
        return None
    key = "".join(ch for ch in name.casefold() if ch.isalnum())
    return key if key in FORMATS else None


def _format_label(fmt: str) -> str:
    return fmt.replace("_", " ").title()


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def validate_deck(
    deck: ParsedDeck,
    cards: Mapping[str, CardRules],
    format: str | None = None,
    min_main: int = 60,
    max_side: int = 15,
) -> list[Violation]:
    """Everything wrong with ``deck``, in a stable order (sizes first, then cards in deck order).

    Copy limits count main deck and sideboard together. Cards missing from
    ``cards`` get the default limit of 4 (basic lands: any number) and, when a
    format is given, unknown legality. Basic lands are always legal.
    """
    violations: list[Violation] = []

    main_count = deck.main_count
    if main_count < min_main:
        violations.append(Violation(
            "main_size", f"Main deck has {_plural(main_count, 'card', 'cards')}; "
                         f"it needs at least {min_main}."))
    side_count = deck.side_count
    if side_count > max_side:
        violations.append(Violation(
            "side_size", f"Sideboard has {_plural(side_count, 'card', 'cards')}; it can have at most {max_side}."))

    fmt: str | None = None
    if format and format.strip():
        # Known formats are canonicalised; any other name is looked up as given (lowercased).
        fmt = normalize_format(format) or format.strip().casefold()
    label = _format_label(fmt) if fmt else ""

    totals = deck.counts()
    for entry in deck.commander:
        totals.setdefault(entry.name, 0)
        totals[entry.name] += entry.count

    for name, count in totals.items():
        rules = cards.get(name)
        basic = name in BASIC_LAND_NAMES
        limit = 0 if basic else (rules.copy_limit if rules is not None else DEFAULT_COPY_LIMIT)
        status = None
        if fmt and not basic:
            status = rules.legality.get(fmt) if rules is not None else None
            if status not in LEGALITY_STATUSES:
                status = None

        if status == "restricted" and count > 1:
            violations.append(Violation(
                "restricted", f"{name} is restricted in {label}; at most 1 copy is allowed, but the deck has {count}.",
                name))
        elif limit and count > limit:
            allowed = "at most 1 is allowed" if limit == 1 else f"at most {limit} are allowed"
            violations.append(Violation(
                "copies", f"{_plural(count, 'copy', 'copies')} of {name} across main and sideboard; {allowed}.", name))

        if not fmt or basic:
            continue
        if status == "banned":
            violations.append(Violation("banned", f"{name} is banned in {label}.", name))
        elif status == "not_legal":
            violations.append(Violation("not_legal", f"{name} is not legal in {label}.", name))
        elif status is None:
            violations.append(Violation(
                "unknown_legality",
                f"{name} has not been seen legal in {label}; its legality there is unknown.", name))
    return violations
