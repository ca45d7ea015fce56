"""Fixtures of the site-wide tests (the authorization matrix, the fuzzing)."""
from __future__ import annotations

import asyncio

import pytest


def run_with_fresh_layers(coroutine):
    """``asyncio.run`` with channel layers of its own: a Redis layer (services stack) stays bound to the
    event loop it first ran on, and a test that runs many socket sessions runs each on a new loop (as
    tests/conftest.py gives each test fresh layers)."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    try:
        return asyncio.run(coroutine)
    finally:
        channel_layers.backends.clear()


@pytest.fixture
def unthrottled(settings):
    """Requests as fast as a test sends them: the matrix and the fuzz send hundreds, so the abuse limits
    (plumbing/limits.py) are off here whatever the environment says."""
    settings.MTG_LIMITS = {**settings.MTG_LIMITS, "enabled": "0"}
    return settings


@pytest.fixture
def guest_world(request, unthrottled, settings, tmp_path):
    """A guest (their session key) holding seat 0 of a pod being drafted (the planted set FZZ) and a game of
    their own against the AI; a deck and a completion job. The test module provides the game fixtures."""
    from decks.forms import import_deck
    from decks.models import CompletionJob
    from drafts.pods import service
    from gameplay.play import session
    from tests.drafts.conftest import make_set
    from tests.ws import guest_session

    request.getfixturevalue("game_catalogue")
    settings.MTG_MODEL_DIR = tmp_path / "models"
    session.GAME_CACHE.clear()
    names = make_set("FZZ")
    guest = guest_session()
    pod, _ = service.create_pod("FZZ", 3, "draftsim", 0, "Gus", session_key=guest, consent=False, seed=5)
    service.start_pod(pod.pk, session_key=guest)
    game, _ = session.create_game("sample:mono_red_aggro", "sample:mono_white_weenie", "engine:VeryEasy",
                                  first="you", session_key=guest, seed=8)
    deck = import_deck("\n".join(f"4 {n}" for n in names[:15]), name="fuzz").deck
    job = CompletionJob.objects.create(format="standard", known_main=[[names[0], 4]])
    return {"guest": guest, "names": names, "pod": pod, "game": game, "deck": deck, "job": job}
