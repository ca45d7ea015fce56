"""Fixtures of the play tests (imported by the test modules that use them)."""
from __future__ import annotations

import threading

import pytest


@pytest.fixture
def game_env(game_catalogue, settings, monkeypatch):
    """The sample decks' catalogue and engine cards; child processes (Celery worker, Daphne) read the
    engine card database this test built (MTG_VAR_DIR)."""
    from gameplay.play import session

    monkeypatch.setenv("MTG_VAR_DIR", str(settings.VAR_DIR))
    session.GAME_CACHE.clear()
    return game_catalogue


@pytest.fixture
def advice_worker(game_env, request):
    """A real Celery worker on the services stack (advice runs there); nothing on the embedded stack,
    where the advice task runs eagerly in a background thread of the socket's process."""
    from django.conf import settings

    if settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    return request.getfixturevalue("celery_worker_process")


def play_to_a_choice(session_key: str, seed: int = 8):
    """A game (mono-red against mono-white, the engine's VeryEasy AI) played on to the person's first
    decision with a real choice (a land drop, a spell); (row, view)."""
    from gameplay.play import session

    row, out = session.create_game("sample:mono_red_aggro", "sample:mono_white_weenie", "engine:VeryEasy",
                                   first="you", session_key=session_key, seed=seed)
    view = out.view
    for _ in range(12):
        if len(view["actions"]) > 1 and view["board"]["prompt"]["type"] != "MulliganDecision":
            break
        view = session.human_action(row.pk, 0, view["actions"][0]["key"], expected_revision=view["revision"]).view
    assert len(view["actions"]) > 1
    return row, view


class ThinkingPlayer:
    """The engine's VeryEasy AI, except that its first decision waits until the test sets ``go``: an
    opponent thinking for as long as the test needs (``started`` is set when it begins)."""

    def __init__(self):
        from gameplay.core.players import EnginePlayer

        self.inner = EnginePlayer("VeryEasy")
        self.name = "thinking"
        self.started, self.go = threading.Event(), threading.Event()
        self.calls = 0

    def choose(self, game, seat):
        self.calls += 1
        if self.calls == 1:
            self.started.set()
            assert self.go.wait(30), "the test never let the AI go on"
        return self.inner.choose(game, seat)
