"""The decks and opponents a person may choose for a game against the AI, and the search levels there are.

A deck is a sample deck (every card supported), a saved deck or a posted list; :func:`check_deck` turns
it into the engine's card names, or into the problems (unknown or unsupported cards) that stop it.
"""
from __future__ import annotations

import re
from typing import Any

from django.conf import settings

from decks.models import Deck
from gameplay import carddb
from gameplay.core.matches.players import describe_player
from gameplay.core.search.advisor import LEVELS
from gameplay.core.search.advisor import advice_levels as advisor_levels
from gameplay.core.engine.adapter import DIFFICULTIES
from gameplay.core.engine.decks import sample_decks
from gameplay.core.search.algorithms import ALGORITHMS
from gameplay.play import PlayError

MIN_DECK, MAX_DECK = 40, 250
OPPONENTS = [(spec, describe_player(spec)) for spec in (
    "engine:VeryEasy", "engine:Easy", "engine:Medium", "engine:Hard", "engine:VeryHard",
    "search:fast", "search:default", "search:strong", "search:learned", "random")]


class DeckProblem(PlayError):
    """One or both decks cannot be played: ``problems`` lists, per deck, the unknown and unsupported cards."""

    def __init__(self, problems: list[dict]):
        parts = []
        for p in problems:
            bits = []
            if p.get("unknown"):
                bits.append("unknown cards: " + ", ".join(p["unknown"]))
            if p.get("unsupported"):
                bits.append("cards the rules engine does not fully support: " + ", ".join(p["unsupported"]))
            if p.get("message"):
                bits.append(p["message"])
            parts.append(f"{p['deck']}: " + "; ".join(bits))
        super().__init__(" · ".join(parts), 400, problems=problems)
        self.problems = problems


# --- decks -------------------------------------------------------------------------------------------

def sample_label(key: str) -> str:
    deck = sample_decks(settings.MTG_DATA_DIR).get(key) or {}
    words = key.replace("_", " ")
    return f"{words[:1].upper()}{words[1:]} ({deck['format']})" if deck.get("format") else words


def deck_choices(user=None) -> list[tuple[str, str]]:
    """(spec, label) for the new-game form: the sample decks, then the person's saved decks."""
    out = [(f"sample:{k}", f"Sample · {sample_label(k)}") for k in sample_decks(settings.MTG_DATA_DIR)]
    if user is not None and user.is_authenticated:
        for deck in Deck.objects.filter(owner=user).order_by("-id")[:50]:
            out.append((f"deck:{deck.pk}", f"Saved · {deck}"))
    return out


def resolve_deck(spec: Any, which: str) -> tuple[str, list[list]]:
    """A deck choice -> (name, [[card, count], ...] main deck).

    ``spec`` is ``"sample:<name>"``, ``"deck:<id>"`` (a saved deck's main cards), or an object
    ``{"name": str, "main": [[card, count], ...]}``."""
    if isinstance(spec, dict):
        main = spec.get("main")
        if not isinstance(main, list) or not main or not all(
                isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], int)
                and not isinstance(p[1], bool) and 0 < p[1] <= 250 for p in main):
            raise PlayError(f"{which}: 'main' must be a list of [card name, count] pairs", 400)
        name = str(spec.get("name") or "Custom deck")[:200]
        return name, [[n, c] for n, c in main]
    if not isinstance(spec, str) or ":" not in spec:
        raise PlayError(f"{which}: choose a deck as 'sample:<name>', 'deck:<id>' or {{\"main\": [[card, count], ...]}}")
    kind, _, arg = spec.partition(":")
    if kind == "sample":
        deck = sample_decks(settings.MTG_DATA_DIR).get(arg)
        if deck is None:
            raise PlayError(f"{which}: no sample deck {arg!r}; choose one of {', '.join(sample_decks(settings.MTG_DATA_DIR)) or '(none found)'}")
        return sample_label(arg), [[n, c] for n, c in deck["main"]]
    if kind == "deck":
        if not re.fullmatch(r"[0-9]{1,18}", arg):
            raise PlayError(f"{which}: a saved deck is 'deck:<number>'")
        deck = Deck.objects.filter(pk=int(arg)).first()
        if deck is None:
            raise PlayError(f"{which}: there is no saved deck {arg}", 400)
        main = [[name, count] for name, count in deck.cards.filter(board="main").order_by("card__name")
                .values_list("card__name", "count")]
        if not main:
            raise PlayError(f"{which}: deck {arg} has no main-deck cards", 400)
        return str(deck)[:200], main
    raise PlayError(f"{which}: unknown deck kind {kind!r}; use 'sample:' or 'deck:'")


def check_deck(main: list[list], which: str) -> tuple[list[str], dict | None]:
    """The engine's card names for a deck (one entry per copy), or the problems that stop it."""
    total = sum(c for _, c in main)
    names = [n for n, _ in main]
    if not MIN_DECK <= total <= MAX_DECK:
        return [], {"deck": which, "unknown": [], "unsupported": {},
                    "message": f"a deck needs {MIN_DECK} to {MAX_DECK} main-deck cards (this one has {total})"}
    support = carddb.deck_support(names)
    if not support["supported"]:
        return [], {"deck": which, "unknown": support["unknown"], "unsupported": support["unsupported"]}
    engine = carddb.get_engine()
    resolved, _ = carddb.resolve_names(names)
    out = []
    for name, count in main:
        engine_name = name
        if engine.unknown([name]):
            card = resolved.get(name)
            candidates = [c for c in (card and card.name, card and card.front_name) if c]
            engine_name = next((c for c in candidates if not engine.unknown([c])), None)
            if engine_name is None:
                return [], {"deck": which, "unknown": [name], "unsupported": {}}
        out += [engine_name] * count
    return out, None


def check_opponent(spec: Any) -> str:
    """A valid opponent spec: ``engine:<difficulty>``, ``random`` or ``search:<level>``."""
    if not isinstance(spec, str):
        raise PlayError("opponent must be a string such as 'engine:Medium' or 'search:fast'")
    kind, _, arg = spec.partition(":")
    if kind == "engine" and arg in DIFFICULTIES:
        return spec
    if kind == "random" and not arg:
        return spec
    if kind == "search" and arg in search_levels():
        return spec
    raise PlayError(f"unknown opponent {spec!r}; choose one of {', '.join(s for s, _ in opponent_choices())}")


def opponent_choices() -> list[tuple[str, str]]:
    levels = search_levels()
    return [(s, label) for s, label in OPPONENTS if not s.startswith("search:") or s.split(":", 1)[1] in levels]


def opponent_label(spec: str) -> str:
    """An opponent's spec as a person reads it ("Engine AI, Very Hard")."""
    return describe_player(spec)


def search_levels() -> tuple[str, ...]:
    """The search levels (``search:<level>`` opponents; the advisor's ``search:`` levels)."""
    return tuple(LEVELS)


def advice_levels() -> tuple[str, ...]:
    """The advisor's levels, its default first: ``vote``, ``vote+search``, then ``search:<level>``."""
    return advisor_levels()


def search_algorithms() -> tuple[str, ...]:
    return tuple(ALGORITHMS)
