"""What both completion models share (pure: numpy, no torch, no Django): the user-facing ``CompletionError``,
the deck sizes and the checks every completer runs on the user's cards (entries resolved to card indices, deck
sizes, copy limits across main deck and sideboard)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np

__all__ = ["CompletionError", "MAIN_SLOTS", "SIDE_SLOTS", "resolve_entries", "check_sizes", "check_limits"]

MAIN_SLOTS = 60
SIDE_SLOTS = 15


class CompletionError(ValueError):
    """The request cannot be completed; ``message`` is meant for the user."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message



def resolve_entries(entries: Iterable, part: str, lookup) -> dict[int, int]:
    """(name, count) pairs -> {card index: copies}; ``lookup(name)`` gives the index or None. Raises
    ``CompletionError`` for a malformed pair, a count that is not a whole number >= 1, an unknown card."""
    counts: dict[int, int] = {}
    for entry in entries or ():
        try:
            name, count = entry
        except (TypeError, ValueError):
            raise CompletionError(f"Each {part} entry must be a (card name, count) pair.") from None
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise CompletionError(f"Invalid count {count!r} for {name} in the {part}: give a whole number of at "
                                  f"least 1.")
        idx = lookup(name)
        if idx is None:
            raise CompletionError(f"Unknown card in the {part}: {name}.")
        counts[idx] = counts.get(idx, 0) + int(count)
    return counts


def check_sizes(main_c: dict, side_c: dict) -> None:
    """The deck-size rules every completer enforces on the user's cards (``CompletionError``)."""
    n_main, n_side = sum(main_c.values()), sum(side_c.values())
    if n_main == 0:
        raise CompletionError("Give at least one main-deck card to complete the deck from.")
    if n_main > MAIN_SLOTS:
        raise CompletionError(f"The main deck has {n_main} cards; at most {MAIN_SLOTS} can be given.")
    if n_side > SIDE_SLOTS:
        raise CompletionError(f"The sideboard has {n_side} cards; at most {SIDE_SLOTS} can be given.")


def check_limits(names, main_c: dict, side_c: dict, lim: np.ndarray, restricted_f: np.ndarray, label: str) -> None:
    """Copy limits across main deck and sideboard (restricted = 1, 0 = any number), by card name."""
    totals: Counter = Counter(main_c)
    totals.update(side_c)
    for idx, n in sorted(totals.items(), key=lambda e: names[e[0]]):
        if lim[idx] and n > lim[idx]:
            if restricted_f[idx]:
                raise CompletionError(f"{names[idx]} is restricted in {label}: at most 1 copy is allowed "
                                      f"across main deck and sideboard, but {n} were given.")
            raise CompletionError(f"Too many copies of {names[idx]}: {n} across main deck and sideboard; "
                                  f"at most {lim[idx]} are allowed.")
