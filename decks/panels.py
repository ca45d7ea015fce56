"""Panels the products built on the catalogue add to the card and deck pages.

`decks` is the base the other apps build on and imports none of them: an app that has something to say about
some cards (gameplay: whether the rules engine supports them) registers a panel from its ``AppConfig.ready``
with :func:`register`, and the card and deck pages render every registered panel (its template, given the
value as ``value``). A panel's ``compute(cards)`` gets the catalogue cards of the page (one
card, or a deck's distinct main-deck cards) and returns what its template shows.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Panel:
    name: str
    template: str
    compute: Callable[[Iterable], object]


_PANELS: dict[str, Panel] = {}


def register(name: str, template: str, compute: Callable[[Iterable], object]) -> None:
    _PANELS[name] = Panel(name, template, compute)


def render(cards) -> list[dict]:
    """[{"name": ..., "template": ..., "value": ...}] for every registered panel, in registration order."""
    cards = list(cards)
    return [{"name": p.name, "template": p.template, "value": p.compute(cards)} for p in _PANELS.values()]
