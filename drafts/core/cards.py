"""Card facts a draft needs, and a set's draftable card list (pure: no Django).

The shell builds a :class:`SetList` from the catalogue (``drafts.services.set_list``); tests and
benchmarks may build one by hand or from the 17Lands set files with :func:`read_17lands_set`.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from decks.core.cards import BASIC_LAND_NAMES, COLOR_ORDER, colors_from_cost, mana_symbols
from decks.core.catalogue import DataError, open_text

RARITIES = ("common", "uncommon", "rare", "mythic", "basic", "special")
BOOSTER_KINDS = ("play", "classic", "cube")


class DraftError(ValueError):
    """A draft rule was broken (unknown set, a pick not in the pack, a pick out of turn...)."""


def order_colors(letters: str) -> str:
    return "".join(c for c in COLOR_ORDER if c in set(letters.upper()))


@dataclass(frozen=True)
class DraftCard:
    name: str
    rarity: str = "common"
    colors: str = ""  # WUBRG letters of the card's colours (mana cost, else colour identity)
    mana_cost: str = ""  # MTGJSON style "{2}{W}{U}"; empty when unknown
    mana_value: float = 0.0
    types: str = ""  # card types separated by spaces, e.g. "Artifact Creature"

    @property
    def is_land(self) -> bool:
        return "Land" in self.types.split()

    @property
    def is_basic(self) -> bool:
        return self.name in BASIC_LAND_NAMES

    @property
    def is_creature(self) -> bool:
        return "Creature" in self.types.split()

    def color_pips(self) -> dict[str, int]:
        """Coloured mana symbols per colour in the cost (hybrid counts for each side)."""
        pips: dict[str, int] = {}
        for symbol in mana_symbols(self.mana_cost):
            for part in {p.lstrip("H") for p in symbol.upper().split("/")}:
                if part in COLOR_ORDER and len(part) == 1:
                    pips[part] = pips.get(part, 0) + 1
        return pips


@dataclass
class SetList:
    """The draftable cards of one set (or a cube), in the set's canonical order.

    ``booster`` picks the collation: ``play`` (14-card Play Booster, the 17Lands sets),
    ``classic`` (15-card booster with a basic land, M19/M20) or ``cube`` (packs drawn from the list).
    ``basics`` are the basic lands a classic booster's land slot draws from.
    """

    code: str
    cards: tuple[DraftCard, ...]
    booster: str = "play"
    name: str = ""
    basics: tuple[DraftCard, ...] = ()
    _by_name: dict[str, DraftCard] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.booster not in BOOSTER_KINDS:
            raise DraftError(f"unknown booster kind {self.booster!r}; expected one of {', '.join(BOOSTER_KINDS)}")
        self._by_name = {c.name: c for c in self.basics}
        self._by_name.update({c.name: c for c in self.cards})

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def card(self, name: str) -> DraftCard:
        """Facts for a card of this set; a bare record (colourless, common) for a name it lacks."""
        found = self._by_name.get(name)
        if found is None:
            return DraftCard(name=name, types="Land" if name in BASIC_LAND_NAMES else "")
        return found

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.cards]

    def by_rarity(self, *rarities: str) -> list[DraftCard]:
        return [c for c in self.cards if c.rarity in rarities]


BASIC_LANDS = tuple(DraftCard(name=n, rarity="basic", types="Land") for n in ("Plains", "Island", "Swamp", "Mountain", "Forest"))


def read_17lands_set(set_list_csv: Path | str, cards_csv: Path | str | None = None, code: str | None = None) -> SetList:
    """A 17Lands set list (statistical-drafting ``<SET>.csv``), in file order.

    With ``cards_csv`` (``cards.csv``), only the expansion's booster cards are kept and their
    rarity, mana value and types come from it, as the proxy draft logs were collated.
    """
    code = (code or Path(set_list_csv).name.split(".")[0]).upper()
    booster: dict[str, dict] = {}
    if cards_csv is not None:
        with open_text(cards_csv) as fh:
            for row in csv.DictReader(fh):
                if row.get("expansion", "").upper() == code and str(row.get("is_booster")).lower() == "true":
                    booster.setdefault(row["name"], row)
    cards = []
    with open_text(set_list_csv) as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or "name" not in reader.fieldnames:
            raise DataError(f"{set_list_csv}: expected a 'name' column")
        for row in reader:
            name = row.get("name") or ""
            if not name:
                continue
            extra = booster.get(name)
            if cards_csv is not None and extra is None:
                continue
            source = extra or row
            identity = (source.get("color_identity") or "").strip()
            colors = "" if identity.lower() in {"", "colorless", "multicolor"} else order_colors(identity)
            try:
                mv = float((extra or {}).get("mana_value") or 0)
            except ValueError:
                mv = 0.0
            cards.append(DraftCard(name=name, rarity=(source.get("rarity") or "common").lower(), colors=colors,
                                   mana_value=mv, types=((extra or {}).get("types") or "").split(" - ")[0]))
    if not cards:
        raise DataError(f"{set_list_csv}: no cards for set {code}")
    return SetList(code=code, cards=tuple(cards), booster="cube" if code == "CUBE" else "play")


def read_17lands_expansion(cards_csv: Path | str, code: str) -> SetList:
    """A set's booster cards straight from 17Lands ``cards.csv`` (for sets without a set list file)."""
    code = code.upper()
    cards: dict[str, DraftCard] = {}
    with open_text(cards_csv) as fh:
        for row in csv.DictReader(fh):
            if row.get("expansion", "").upper() != code or str(row.get("is_booster")).lower() != "true":
                continue
            rarity = (row.get("rarity") or "").lower()
            if rarity not in ("common", "uncommon", "rare", "mythic") or row["name"] in cards:
                continue
            identity = (row.get("color_identity") or "").strip()
            try:
                mv = float(row.get("mana_value") or 0)
            except ValueError:
                mv = 0.0
            cards[row["name"]] = DraftCard(name=row["name"], rarity=rarity, mana_value=mv,
                                           colors="" if identity.lower() in {"", "colorless", "multicolor"} else order_colors(identity),
                                           types=(row.get("types") or "").split(" - ")[0])
    if not cards:
        raise DataError(f"{cards_csv}: no booster cards for set {code}")
    return SetList(code=code, cards=tuple(sorted(cards.values(), key=lambda c: c.name)), booster="play")


__all__ = ["BASIC_LANDS", "read_17lands_expansion", "DraftCard", "DraftError", "SetList", "colors_from_cost", "order_colors", "read_17lands_set"]
