"""The one bot interface: ``pick(pack, pool, context)`` returns the pack ranked with scores.

Bots are pure (no Django): they hold their weights/ratings and card facts and are a function of
(pack, pool, context). The shell chooses which trained version backs each name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence, runtime_checkable

from drafts.core.cards import DraftCard, SetList


@dataclass(frozen=True)
class PickContext:
    """Where a pick happens. Numbers are 0-based, as in the 17Lands logs."""

    set_list: SetList
    pack_number: int = 0
    pick_number: int = 0
    packs: int = 3
    picks_per_pack: int = 14
    seat: int = 0
    seats: int = 8
    extra: dict = field(default_factory=dict, compare=False)

    def card(self, name: str) -> DraftCard:
        return self.set_list.card(name)

    @property
    def overall_pick(self) -> int:
        return self.pack_number * self.picks_per_pack + self.pick_number


Ranking = list[tuple[str, float]]


@runtime_checkable
class DraftBot(Protocol):
    name: str

    def pick(self, pack: Sequence[str], pool: Sequence[str], context: PickContext) -> Ranking:
        """Every card of ``pack`` (repeats kept), best first, with the bot's score."""
        ...


def rank(pack: Sequence[str], scores: Sequence[float]) -> Ranking:
    """Sort a pack by score, best first; ties keep pack order (deterministic)."""
    order = sorted(range(len(pack)), key=lambda i: (-float(scores[i]), i))
    return [(pack[i], float(scores[i])) for i in order]
