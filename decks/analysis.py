"""Deck analysis shared by the deck page, the API and the analyze_deck task."""
from __future__ import annotations

from collections import Counter, defaultdict

from decks.core.cards import COLOR_ORDER, mana_symbols
from decks.core.rules import FORMATS, validate_deck
from decks.models import Deck
from decks.services import card_rules, parsed_from_deck

TYPE_ORDER = ["Creature", "Planeswalker", "Battle", "Instant", "Sorcery", "Artifact", "Enchantment", "Land", "Other"]


def deck_groups(deck: Deck) -> dict:
    """Cards grouped by board and type, the mana curve (non-lands, main deck) and colour pips."""
    boards: dict[str, dict[str, list]] = {"main": defaultdict(list), "side": defaultdict(list)}
    curve: Counter = Counter()
    pips: Counter = Counter()
    for dc in deck.cards.select_related("card").order_by("card__mana_value", "card__name"):
        card = dc.card
        boards[dc.board][card.primary_type].append({"card": card, "count": dc.count})
        if dc.board == "main" and card.primary_type != "Land":
            curve[min(int(card.mana_value), 7)] += dc.count
            for sym in mana_symbols(card.mana_cost):
                for part in sym.split("/"):
                    if part in COLOR_ORDER:
                        pips[part] += dc.count
    grouped = {
        board: [{"type": t, "cards": groups[t], "count": sum(e["count"] for e in groups[t])}
                for t in TYPE_ORDER if t in groups]
        for board, groups in boards.items()
    }
    top = max(curve.values(), default=0)
    curve_rows = [{"mv": mv, "label": "7+" if mv == 7 else str(mv), "count": curve.get(mv, 0),
                   "pct": round(100 * curve.get(mv, 0) / top) if top else 0} for mv in range(8)]
    return {"boards": grouped, "curve": curve_rows, "pips": {c: pips[c] for c in COLOR_ORDER if pips[c]}}


def analyze(deck: Deck) -> dict:
    """Rule problems in every format (empty list = legal there), plus counts. JSON-ready."""
    parsed = parsed_from_deck(deck)
    rules = card_rules(parsed.counts().keys())
    formats = {}
    for fmt in FORMATS:
        formats[fmt] = [{"code": v.code, "message": v.message, "card": v.card}
                        for v in validate_deck(parsed, rules, fmt)]
    groups = deck_groups(deck)
    return {
        "v": 1,
        "deck": deck.pk,
        "main_count": parsed.main_count,
        "side_count": parsed.side_count,
        "legal_in": [f for f, problems in formats.items() if not problems],
        "formats": formats,
        "curve": [{"mv": r["label"], "count": r["count"]} for r in groups["curve"]],
        "pips": groups["pips"],
        "unresolved": deck.unresolved,
    }
