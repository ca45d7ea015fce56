"""Shell helpers around decks.core: the card index, rules lookups, saving parsed decks."""
from __future__ import annotations

import threading

from django.core.cache import cache
from django.db import transaction

from decks.core.catalogue import list_hash
from decks.core.decklist import Entry, ParsedDeck
from decks.core.names import CardIndex
from decks.core.rules import CardRules
from decks.models import Card, Deck, DeckCard, Legality

_VERSION_KEY = "catalogue-version"
_lock = threading.Lock()
_index: tuple[object, CardIndex] | None = None


def bump_catalogue_version() -> None:
    """Called by importers so every process rebuilds its card index on next use."""
    try:
        cache.incr(_VERSION_KEY)
    except ValueError:
        cache.set(_VERSION_KEY, 1, None)


def catalogue_version() -> tuple[int, int]:
    """Changes whenever an import changes the catalogue: per-process caches key on it."""
    return cache.get(_VERSION_KEY, 0), Card.objects.count()


def card_index() -> CardIndex:
    """All catalogue names (and face names), cached per process until the catalogue changes."""
    global _index
    version = catalogue_version()
    with _lock:
        if _index is None or _index[0] != version:
            _index = (version, CardIndex(Card.objects.values_list("name", flat=True)))
        return _index[1]


def card_rules(names) -> dict[str, CardRules]:
    """Rules facts (copy limit, legality per format) for the given canonical names."""
    cards = {c.id: c for c in Card.objects.filter(name__in=list(names)).only("id", "name", "copy_limit")}
    legal: dict[int, dict[str, str]] = {cid: {} for cid in cards}
    source: dict[int, dict[str, str]] = {cid: {} for cid in cards}
    for cid, fmt, status, src in Legality.objects.filter(card_id__in=cards).values_list("card_id", "format", "status", "source"):
        legal[cid][fmt] = status
        source[cid][fmt] = src
    return {c.name: CardRules(c.name, c.copy_limit, legal[cid], source[cid]) for cid, c in cards.items()}


@transaction.atomic
def save_parsed_deck(parsed: ParsedDeck, fmt: str = "", name: str = "", owner=None, source: str = "user",
                     guest: str | None = None, public: bool = False) -> Deck:
    """Store a parsed deck (its cards must all be in the catalogue) in one transaction: a person's (the signed-in
    ``owner``'s, else the guest session ``guest``'s), unlisted unless ``public``."""
    main = [(e.name, e.count) for e in parsed.main]
    side = [(e.name, e.count) for e in parsed.side]
    key = list_hash(fmt or "", main, side)
    deck = Deck.objects.create(
        name=name or parsed.name, format=fmt or "", list_hash=key, source=source, owner=owner,
        guest="" if owner is not None else (guest or ""), public=public,
        main_count=parsed.main_count, side_count=parsed.side_count,
    )
    ids = dict(Card.objects.filter(name__in=[n for n, _ in main + side]).values_list("name", "id"))
    rows = []
    for board, entries in (("main", main), ("side", side)):
        totals: dict[str, int] = {}
        for n, c in entries:
            totals[n] = totals.get(n, 0) + c
        rows += [DeckCard(deck=deck, card_id=ids[n], board=board, count=c) for n, c in totals.items()]
    DeckCard.objects.bulk_create(rows)
    return deck


def parsed_from_deck(deck: Deck) -> ParsedDeck:
    main, side = [], []
    for dc in deck.cards.select_related("card").order_by("card__name"):
        (main if dc.board == "main" else side).append(Entry(dc.card.name, dc.count))
    return ParsedDeck(main=main, side=side, name=deck.name)
