"""A small hand-made set in the database (cards, printings in draft-list order) for the shell tests."""
from __future__ import annotations

import pytest

COLORS = "WUBRG"
# (rarity, how many per colour)
SHAPE = [("common", 8), ("uncommon", 3), ("rare", 2)]


def make_set(code: str = "TST") -> list[str]:
    """50+ cards: per colour 8 commons (creatures and spells, a curve), 3 uncommons, 2 rares; a gold
    uncommon per ally pair, 2 mythics, a colourless common artifact and a 'special' guest."""
    from decks.models import Card, CardSet, Printing
    from decks.services import bump_catalogue_version

    card_set = CardSet.objects.create(code=code, name=f"Test set {code}", set_type="expansion", source="test")
    rows = []
    for color in COLORS:
        for rarity, n in SHAPE:
            for i in range(n):
                mv = 1 + (i % 6)
                creature = i % 3 != 2
                rows.append(dict(name=f"{code} {color} {rarity} {i}", rarity=rarity, colors=color,
                                 mana_cost="{%d}{%s}" % (mv - 1, color) if mv > 1 else "{%s}" % color,
                                 mana_value=mv, types="Creature" if creature else "Instant"))
    for pair in ("WU", "UB", "BR", "RG", "GW"):
        rows.append(dict(name=f"{code} {pair} gold", rarity="uncommon", colors="".join(c for c in COLORS if c in pair),
                         mana_cost="{1}{%s}{%s}" % (pair[0], pair[1]), mana_value=3, types="Creature"))
    rows.append(dict(name=f"{code} mythic dragon", rarity="mythic", colors="R", mana_cost="{4}{R}{R}", mana_value=6,
                     types="Creature"))
    rows.append(dict(name=f"{code} mythic angel", rarity="mythic", colors="W", mana_cost="{3}{W}{W}", mana_value=5,
                     types="Creature"))
    rows.append(dict(name=f"{code} golem", rarity="common", colors="", mana_cost="{3}", mana_value=3,
                     types="Artifact Creature"))
    rows.append(dict(name=f"{code} guest", rarity="special", colors="B", mana_cost="{B}", mana_value=1, types="Instant"))
    names = []
    for position, r in enumerate(rows):
        card = Card.objects.create(name=r["name"], name_key=r["name"].lower(), front_name=r["name"],
                                   mana_cost=r["mana_cost"], mana_value=r["mana_value"], colors=r["colors"],
                                   color_identity=r["colors"], type_line=r["types"], types=r["types"])
        Printing.objects.create(card=card, card_set=card_set, rarity=r["rarity"], position=position,
                                is_booster=r["rarity"] != "special")
        names.append(r["name"])
    for basic in ("Plains", "Island", "Swamp", "Mountain", "Forest"):
        Card.objects.get_or_create(name=basic, defaults=dict(name_key=basic.lower(), front_name=basic,
                                                             type_line="Basic Land", types="Land", supertypes="Basic",
                                                             copy_limit=0))
    bump_catalogue_version()
    return names


@pytest.fixture
def draft_set(db):
    return make_set("TST")


@pytest.fixture(autouse=True)
def model_dir(settings, tmp_path):
    """Trained versions go to a temporary folder, never into the site's var/models."""
    settings.MTG_MODEL_DIR = tmp_path / "models"
    return settings.MTG_MODEL_DIR
