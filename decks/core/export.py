"""Decklist text export (pure: no Django).

Both formats use canonical names (split cards as ``Fire // Ice``) and read back
through ``parse_decklist`` to the same deck.
"""
from __future__ import annotations

from collections.abc import Iterable

from .decklist import Entry, ParsedDeck

__all__ = ["to_arena", "to_mtgo"]


def _lines(entries: Iterable[Entry]) -> list[str]:
    return [f"{e.count} {e.name}" for e in entries]


def to_arena(deck: ParsedDeck) -> str:
    """MTG Arena import text: optional ``About``/``Commander`` sections, ``Deck``, then ``Sideboard``."""
    blocks: list[list[str]] = []
    name = " ".join(deck.name.split())
    if name:
        blocks.append(["About", f"Name {name}"])
    if deck.commander:
        blocks.append(["Commander", *_lines(deck.commander)])
    blocks.append(["Deck", *_lines(deck.main)])
    if deck.side:
        blocks.append(["Sideboard", *_lines(deck.side)])
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"


def to_mtgo(deck: ParsedDeck) -> str:
    """MTGO ``.txt``: main deck lines, a blank line, sideboard lines.

    MTGO has no commander section, so commanders are listed first in the
    sideboard (its convention). The deck name is not part of the format.
    When the main deck is empty a ``Sideboard`` header keeps the sideboard from
    being read back as main deck.
    """
    main = _lines(deck.main)
    side = _lines([*deck.commander, *deck.side])
    if not side:
        return "\n".join(main) + "\n" if main else ""
    if not main:
        return "\n".join(["Sideboard", *side]) + "\n"
    return "\n".join([*main, "", *side]) + "\n"
