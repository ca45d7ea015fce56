"""Card facts derived from printed characteristics (pure: no Django).

Mana costs are MTGJSON strings such as ``{2}{W}{U/P}{X}``.
"""
from __future__ import annotations

import re

COLOR_ORDER = "WUBRG"
COLOR_NAMES = {"W": "White", "U": "Blue", "B": "Black", "R": "Red", "G": "Green"}
BASIC_LAND_NAMES = frozenset(
    {"Plains", "Island", "Swamp", "Mountain", "Forest", "Wastes",
     "Snow-Covered Plains", "Snow-Covered Island", "Snow-Covered Swamp",
     "Snow-Covered Mountain", "Snow-Covered Forest", "Snow-Covered Wastes"}
)
_SYMBOL = re.compile(r"\{([^{}]+)\}")
_WORD_NUMBERS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
}
_ANY_NUMBER = re.compile(r"a deck can have any number of cards named", re.I)
_UP_TO = re.compile(r"a deck can have up to (\w+) cards named", re.I)


def mana_symbols(mana_cost: str | None) -> list[str]:
    """``"{2}{W}{U/P}"`` -> ``["2", "W", "U/P"]``."""
    return _SYMBOL.findall(mana_cost or "")


def symbol_value(symbol: str) -> float:
    """Mana value of one symbol (CR 202.3): X is 0, hybrid {2/W} counts 2, half mana 0.5."""
    s = symbol.upper()
    if s.isdigit():
        return float(int(s))
    if s in {"X", "Y", "Z"}:
        return 0.0
    if s.startswith("H"):  # half mana, e.g. {HW}
        return 0.5
    if s == "½":
        return 0.5
    if "/" in s:
        parts = s.split("/")
        return max(float(p) if p.isdigit() else 1.0 for p in parts)
    if s == "∞":
        return 0.0
    return 1.0


def mana_value(mana_cost: str | None) -> float:
    return float(sum(symbol_value(s) for s in mana_symbols(mana_cost)))


def colors_from_cost(mana_cost: str | None) -> str:
    """The colours a cost shows (WUBRG order). Hybrid and Phyrexian symbols count for each colour."""
    found = set()
    for symbol in mana_symbols(mana_cost):
        for part in symbol.upper().split("/"):
            part = part.lstrip("H")
            if part in COLOR_NAMES:
                found.add(part)
    return "".join(c for c in COLOR_ORDER if c in found)


def order_colors(colors) -> str:
    """Any iterable of colour letters -> canonical WUBRG-ordered string."""
    letters = {str(c).upper() for c in colors or ()}
    return "".join(c for c in COLOR_ORDER if c in letters)


def copy_limit(name: str, supertypes, types, oracle_text: str | None) -> int:
    """Copies of a card a constructed deck may hold; 0 means any number (CR 100.2a and the card's text)."""
    supers = set(supertypes or ())
    kinds = set(types or ())
    if ("Basic" in supers and "Land" in kinds) or name in BASIC_LAND_NAMES:
        return 0
    text = oracle_text or ""
    if _ANY_NUMBER.search(text):
        return 0
    m = _UP_TO.search(text)
    if m:
        word = m.group(1).lower()
        return _WORD_NUMBERS.get(word, int(word) if word.isdigit() else 4)
    return 4


def split_type_line(type_line: str) -> tuple[list[str], list[str]]:
    """``"Legendary Creature — Elf Druid"`` -> (["Legendary", "Creature"], ["Elf", "Druid"])."""
    if not type_line:
        return [], []
    front = type_line.split(" // ")[0]
    for dash in (" — ", " - ", "—"):
        if dash in front:
            left, right = front.split(dash, 1)
            return left.split(), right.split()
    return front.split(), []


SUPERTYPES = frozenset({"Basic", "Legendary", "Snow", "World", "Ongoing", "Host", "Elite"})
