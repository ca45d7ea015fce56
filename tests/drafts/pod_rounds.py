"""Fixtures of the Play-your-pod tests: a draftable set made of the sample decks' real cards (every one supported by
the rules engine), and a bot draft (one person, bots in the other seats) drafted to the end."""
from __future__ import annotations

import pytest

from tests.gameplay.conftest import card_records, game_catalogue, real_data_dir_session  # noqa: F401  (fixtures)
from tests.drafts.test_pod_views import finish
from tests.gameplay.play_fixtures import game_env  # noqa: F401  (fixture)

BASICS = {"Plains", "Island", "Swamp", "Mountain", "Forest"}


def make_play_set(code: str = "PLY") -> list[str]:
    """A set of the sample decks' cards already in the catalogue (every 6th an uncommon, every 13th a rare)."""
    from decks.models import Card, CardSet, Printing
    from decks.services import bump_catalogue_version
    from gameplay.core.engine.decks import sample_decks
    from django.conf import settings

    names = sorted({n for d in sample_decks(settings.MTG_DATA_DIR).values() for n, _ in d["main"]} - BASICS)
    card_set = CardSet.objects.create(code=code, name=f"Play test {code}", set_type="expansion", source="test")
    cards = {c.name: c for c in Card.objects.filter(name__in=names)}
    for position, name in enumerate(n for n in names if n in cards):
        Printing.objects.create(card=cards[name], card_set=card_set, position=position,
                                rarity="rare" if position % 13 == 5 else "uncommon" if position % 6 == 1 else "common",
                                is_booster=True)
    bump_catalogue_version()
    return [n for n in names if n in cards]


def bot_draft(session_key: str = "", user=None, seats: int = 4, consent: bool = True, finished: bool = True):
    """A pod of ``seats`` seats, one person (seat 0) and bots, drafted to the end; the Draft."""
    from drafts.pods import service

    draft, _ = service.create_pod("PLY", seats, "draftsim", 0, "Ana", user=user, session_key=session_key,
                                  consent=consent, seed=7)
    service.start_pod(draft.pk, user, session_key)
    if finished:
        finish(draft)  # the first card of each pack, for every person
    draft.refresh_from_db()
    return draft


@pytest.fixture
def play_set(game_env):  # noqa: F811
    return make_play_set()
