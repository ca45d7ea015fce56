"""Decks another product keeps private: who may read them.

`decks` imports none of the apps built on it. A product that stores decks whose list is someone's hidden
information (drafts: a seat's auto-built deck shows its pool, private like its picks) registers a guard from its
``AppConfig.ready`` with :func:`register`; the deck page, its text export and the API's deck detail and export
answer 404 when any guard says no (the same answer as a deck that does not exist, so an id says nothing).
A guard is ``fn(deck, request) -> bool`` and must be cheap for decks it does not own (look at ``deck.source``
first).
"""
from __future__ import annotations

from collections.abc import Callable

_GUARDS: dict[str, Callable] = {}


def register(name: str, fn: Callable) -> None:
    _GUARDS[name] = fn


def may_read(deck, request) -> bool:
    return all(fn(deck, request) for fn in _GUARDS.values())
