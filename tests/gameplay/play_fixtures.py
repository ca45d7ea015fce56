"""Fixtures of the play tests (imported by the test modules that use them), and what the person may be told of a
game: the opponent's hidden cards at every view the server builds, to scan what the person received against."""
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
        from gameplay.core.matches.players import EnginePlayer

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


# --- hidden information: what the person may be told -------------------------------------------------

def public_names(view: dict) -> set[str]:
    """Card names a game view shows the person in public zones: both battlefields and graveyards, exile,
    the stack, and their own hand (never the opponent's, whatever the view holds)."""
    board, you = view["board"], view["you"]
    names = set()
    for player in board["players"]:
        zones = ("battlefield", "graveyard", "hand") if player["seat"] == you else ("battlefield", "graveyard")
        for zone in zones:
            names.update(c["name"] for c in player.get(zone) or [])
    names.update(c["name"] for c in board.get("exile") or [])
    names.update(e["name"] for e in board.get("stack") or [] if isinstance(e, dict) and e.get("name"))
    return names


def opponent_hidden(game, seat: int, seen: set[str] = frozenset()) -> set[str]:
    """Names of the opponent's hand and library cards that ``seat`` cannot see anywhere now
    (gameplay.core.engine.seatview.hidden_names, on the game's own state) nor has seen before (``seen``)."""
    from gameplay.core.engine.seatview import hidden_names

    state = game.state()
    objects = state["state"]["objects"]
    theirs = {(objects.get(str(o)) or {}).get("name") for p in state["state"]["players"] if p["id"] != seat
              for o in (p.get("hand") or []) + (p.get("library") or [])}
    return (hidden_names(state, seat, game.observation(seat)) & theirs) - set(seen)


class HiddenCards:
    """For every game view the server builds (it wraps ``session.view_of``), the opponent's hidden cards
    the person had not seen by then, by revision; then scans what the person received against them."""

    def __init__(self):
        self.by_revision: dict[tuple[str, int], set[str]] = {}  # (game id, revision) -> names
        self.seen: set[str] = set()  # names the person was shown in a public zone so far

    def wrap(self, real):
        from gameplay.play import session

        def view_of(row, game=None):
            game = game if game is not None else session.load_game(row)
            view = real(row, game)
            self.seen |= public_names(view)
            self.by_revision.setdefault((view["id"], view["revision"]), set()).update(
                opponent_hidden(game, row.human_seat, self.seen))
            return view

        return view_of

    def check(self, payload, what: str = "a message", game: str | None = None, revision: int | None = None) -> None:
        """Scan one thing the person received (a socket message, an API body, a page) against the opponent's
        cards hidden in that game at that revision (a view's own, else ``game`` and ``revision``, else at
        any) that it does not show in a public zone itself (a provisional view: the person's action
        applied, still the same revision)."""
        from tests.leaks import assert_no_leak

        assert self.by_revision, "no view was recorded: the scan would find nothing"
        view = payload.get("view", payload) if isinstance(payload, dict) else None
        if isinstance(view, dict) and "board" in view:
            game, revision = view["id"], view["revision"]
        game = None if game is None else str(game)
        if game is None or revision is None:
            forbidden = set().union(*(names for (g, _), names in self.by_revision.items() if game in (None, g)))
        else:
            forbidden = self.by_revision[(str(game), revision)]
        if isinstance(view, dict) and "board" in view:
            forbidden = forbidden - public_names(view)
        assert_no_leak(payload, forbidden, what=what)

    def check_log(self, messages: list[dict], what: str = "the socket") -> None:
        """Scan every message of a socket in order; one without a revision is scanned against the
        revision of the last game view before it."""
        assert any(self.by_revision.values()), "nothing was hidden from the person: the scan would find nothing"
        game = revision = None
        for msg in messages:
            if msg.get("type") == "game":
                game, revision = msg["id"], msg["revision"]
            self.check(msg, what=f"{what}'s {msg.get('type')} message", game=game,
                       revision=msg.get("revision", revision))


@pytest.fixture
def hidden_cards(monkeypatch):
    """A :class:`HiddenCards` recording every view built in this process."""
    from gameplay.play import session

    recorder = HiddenCards()
    monkeypatch.setattr(session, "view_of", recorder.wrap(session.view_of))
    return recorder
