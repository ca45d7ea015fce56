"""The rules engine's steps of ``manage.py setup_site`` (registered from :class:`gameplay.apps.GameplayConfig`):
the catalogue is converted for the engine in worker processes while the decks import (a step before theirs
starts it, one after the models finishes it), and again when the catalogue changed."""
from __future__ import annotations

import os

from django.core.management import call_command

from gameplay import carddb
from gameplay.models import EngineCard
from plumbing import setup

START, FINISH = 25, 60  # after the sets, before the decks; after the completion decks (plumbing.setup)


def start_engine_cards(s: setup.Setup) -> None:
    """Start converting the catalogue for the rules engine in worker processes (they work while the decks
    import); nothing when there is nothing to build (it says why)."""
    if not carddb.engine_version():
        s.stdout.write("engine cards: phase-python is not installed; game advice is off")
        return
    if carddb.card_data_path().exists() and EngineCard.objects.exists() and not s.force:
        s.stdout.write("engine cards: already built")
        return
    started = carddb.start_build(workers=os.cpu_count() or 1)
    s.stdout.write(f"engine cards: converting the catalogue in the background ({len(started.chunks)} chunks)")
    s.state["engine cards"] = started


def engine_cards(s: setup.Setup) -> None:
    """The rules engine's card database (game advice); rebuilt when the catalogue changes."""
    started = s.state.pop("engine cards", None)
    if started is None:
        return
    s.stdout.write("engine cards: converting the catalogue for the rules engine (build_engine_cards)")
    call_command("build_engine_cards", started=started, stdout=s.stdout, stderr=s.stderr)


def register() -> None:
    setup.step(START, "engine cards: start", start_engine_cards)
    setup.step(FINISH, "engine cards", engine_cards)
