"""A small hand-made set for the pure draft core: 20 commons, 12 uncommons, 6 rares, 2 mythics.

Colours cycle W U B R G; costs are MTGJSON strings, so pips and mana values are real; about two
thirds of the cards are creatures; one common is a colourless non-basic land (for the Play
Booster land slot), some uncommons are two-coloured, one rare is a colourless artifact.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from drafts.core.cards import DraftCard, SetList

COLORS = "WUBRG"


def _card(name: str, rarity: str, colors: str, mv: int, creature: bool) -> DraftCard:
    generic = max(mv - len(colors), 0)
    cost = (f"{{{generic}}}" if generic else "") + "".join(f"{{{c}}}" for c in colors)
    return DraftCard(name=name, rarity=rarity, colors=colors, mana_cost=cost, mana_value=float(mv),
                     types="Creature" if creature else ("Instant" if mv % 2 else "Sorcery"))


def make_set(code: str = "TST", booster: str = "play", commons: int = 20, uncommons: int = 12, rares: int = 6,
             mythics: int = 2, land: bool = True, basics: tuple[DraftCard, ...] = (), extra: tuple = ()) -> SetList:
    cards = []
    for i in range(commons):
        if land and i == commons - 1:
            cards.append(DraftCard(name="Test Common Land", rarity="common", types="Land"))
            continue
        color = COLORS[i % 5]
        cards.append(_card(f"Common {color}{i:02d}", "common", color, 1 + i % 6, i % 3 != 2))
    for i in range(uncommons):
        colors = COLORS[i % 5] + (COLORS[(i + 1) % 5] if i % 4 == 3 else "")
        colors = "".join(c for c in COLORS if c in colors)
        cards.append(_card(f"Uncommon {colors}{i:02d}", "uncommon", colors, 2 + i % 4, i % 2 == 0))
    for i in range(rares):
        if i == rares - 1:
            cards.append(DraftCard(name="Rare Artifact", rarity="rare", mana_cost="{4}", mana_value=4.0,
                                   types="Artifact"))
            continue
        color = COLORS[i % 5]
        cards.append(_card(f"Rare {color}{i:02d}", "rare", color, 3 + i % 4, True))
    for i in range(mythics):
        color = COLORS[(i + 2) % 5]
        cards.append(_card(f"Mythic {color}{i:02d}", "mythic", color, 5 + i, True))
    return SetList(code=code, cards=tuple(cards) + tuple(extra), booster=booster, basics=basics)


@pytest.fixture
def small_set() -> SetList:
    return make_set()


def data_dir() -> Path:
    return Path(os.environ.get("MTG_DATA_DIR", "/work/shared/data"))


@pytest.fixture
def blb_set() -> SetList:
    from drafts.core.cards import read_17lands_set

    folder = data_dir() / "statistical-drafting" / "cards"
    if not (folder / "BLB.csv").exists() or not (folder / "cards.csv").exists():
        pytest.skip(f"17Lands set files not found under {folder} (set MTG_DATA_DIR)")
    return read_17lands_set(folder / "BLB.csv", folder / "cards.csv")
