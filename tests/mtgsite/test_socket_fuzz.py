"""Fuzzing the websockets: random and malformed frames on every socket of the site.

Each socket (the routes are read from the routing, so a new one needs an entry in :data:`SOCKETS`) is
opened as the person it belongs to and sent frames that break its protocol (docs/websockets.md): binary
frames, text that is not JSON, JSON that is not an object, a wrong or missing version, unknown
actions, known actions with missing fields, fields of the wrong type or out of range, names that are
no card and keys that are no action, frames far too long. Every frame gets an ``error`` (the deck and
job sockets, the pod's and the game's parse errors; a refused pick or action is followed by a fresh
view), never a closed socket, and no row of the tables behind the socket changes. Then a valid message
is still answered. Hypothesis draws the frames (bounded, derandomized).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.gameplay.conftest import card_records, game_catalogue, real_data_dir_session  # noqa: F401 - fixtures
from tests.mtgsite.conftest import run_with_fresh_layers
from tests.ws import connect_path

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]
EXAMPLES = 6  # socket sessions per route, each sent FRAMES frames
FRAMES = 6


# --- frames ---------------------------------------------------------------------------------------------

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
                           | st.text(max_size=20), lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
wrong = json_values | st.just("x" * 300)  # a value of any type, or a long string
HUGE = ("huge",)  # a frame far too long (made when it is sent: Hypothesis need not print 100 kB)


def dumps(value) -> str:
    return json.dumps(value)


def envelopes(actions: list[str]) -> st.SearchStrategy:
    """Frames that break the envelope: not text, not JSON, not an object, a wrong version or action."""
    return st.one_of(
        st.binary(max_size=64).map(lambda b: b"\xff" + b),  # never UTF-8
        st.text(max_size=40).filter(lambda t: not _is_json(t)),
        json_values.filter(lambda v: not isinstance(v, dict)).map(dumps),
        st.fixed_dictionaries({"action": st.sampled_from(actions)},
                              optional={"v": json_values.filter(lambda v: v != 1)}).map(dumps),
        st.fixed_dictionaries({"v": st.just(1)}, optional={"action": json_values.filter(lambda a: a not in actions)})
        .map(dumps),
        st.just(HUGE),
    )


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def fields(action: str, good: dict, bad: dict) -> st.SearchStrategy:
    """``action`` frames with at least one field missing, of a wrong type or out of range (``bad``: the
    strategies of wrong values per field; ``good``: of right ones)."""
    def frame(choice):
        broken, rest = choice
        return dumps({"v": 1, "action": action, **rest, **broken})

    names = sorted(bad)
    return st.tuples(
        st.sampled_from(names).flatmap(lambda n: st.one_of(bad[n].map(lambda v: {n: v}), st.just({n: None}))),
        st.fixed_dictionaries({}, optional=good)).map(frame)


# --- the sockets ------------------------------------------------------------------------------------------

@dataclass
class Socket:
    url: Callable  # the world -> the socket's path
    owner: str  # whose session opens it ("guest" or "" for none)
    frames: Callable  # the world -> a strategy of bad frames
    valid: dict  # a message it answers afterwards...
    reply: str  # ...with this type
    rows: Callable  # the world -> the rows behind the socket, to compare before and after


def pod_frames(w):
    from drafts.core.protocol import ACTIONS

    return st.one_of(envelopes(list(ACTIONS)), fields(
        "pick", good={"card": st.sampled_from(w["names"]), "pack_number": st.integers(0, 2),
                      "pick_number": st.integers(0, 14), "client_pick_id": st.just("fuzz")},
        bad={"card": wrong.filter(lambda v: not isinstance(v, str) or not v.strip() or len(v) > 200),
             "pack_number": wrong.filter(lambda v: not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 100),
             "pick_number": st.integers(-5, -1) | st.integers(100, 10**20) | st.text(max_size=3),
             "client_pick_id": st.text(max_size=3).map(lambda t: t + " !") | st.integers()}),
        # well formed, but no card of this seat's pack: refused (409), nothing written
        st.tuples(st.text(min_size=1, max_size=30).filter(str.strip), st.integers(0, 99), st.integers(0, 99))
        .map(lambda t: dumps({"v": 1, "action": "pick", "card": t[0], "pack_number": t[1], "pick_number": t[2],
                              "client_pick_id": "fuzz-pick"})))


def game_frames(w):
    from gameplay.consumers import CLIENT_ACTIONS

    positive = st.integers(1, 5) | st.floats(0.01, 5)
    return st.one_of(envelopes(list(CLIENT_ACTIONS)), fields(
        "act", good={"revision": st.integers(0, 5), "client_action_id": st.just("fuzz")},
        bad={"key": wrong.filter(lambda v: not isinstance(v, str)),
             "revision": wrong.filter(lambda v: v is not None and (not isinstance(v, int) or isinstance(v, bool))),
             "client_action_id": st.just("") | st.just("x" * 65) | st.integers(),
             "pass_until": st.text(max_size=10) | st.integers()}).filter(lambda f: '"key": "' not in f),
        fields("advise", good={"level": st.just("fast"), "seconds": positive, "simulations": st.integers(1, 5)},
               bad={"level": wrong.filter(lambda v: v is not None and not isinstance(v, str)),
                    "algorithm": wrong.filter(lambda v: v is not None and not isinstance(v, str)),
                    "seconds": st.integers(-5, 0) | st.text(max_size=3) | st.booleans(),
                    "simulations": st.integers(-5, 0) | st.text(max_size=3),
                    "revision": st.text(max_size=3) | st.booleans()})
        .filter(lambda f: any(json.loads(f).get(k) is not None for k in ("level", "algorithm", "seconds",
                                                                          "simulations", "revision"))
                and not _valid_advise(f)),
        # well formed, but no action on offer (a stale revision or a made-up key): refused, nothing written
        st.tuples(st.text(min_size=1, max_size=40), st.integers(0, 99))
        .map(lambda t: dumps({"v": 1, "action": "act", "key": t[0], "revision": t[1]})))


def _valid_advise(frame: str) -> bool:
    from gameplay.consumers import ProtocolError, parse_message

    try:
        parse_message(frame)
    except ProtocolError:
        return False
    return True


def rows_of(*querysets):
    def rows(w):
        return [list(q(w).values()) for q in querysets]
    return rows


def _deck(w):
    from decks.models import Deck

    return Deck.objects.filter(pk=w["deck"].pk)


def _job(w):
    from decks.models import CompletionJob

    return CompletionJob.objects.filter(pk=w["job"].pk)


def _pod(w):
    from drafts.models import Draft

    return Draft.objects.filter(pk=w["pod"].pk)


def _seats(w):
    from drafts.models import DraftSeat

    return DraftSeat.objects.filter(draft=w["pod"]).order_by("seat")


def _picks(w):
    from drafts.models import DraftPick

    return DraftPick.objects.filter(seat__draft=w["pod"]).order_by("pk")


def _game(w):
    from gameplay.models import PlayedGame

    return PlayedGame.objects.filter(pk=w["game"].pk)


SOCKETS = {
    "ws/decks/<int:deck_id>/": Socket(lambda w: f"/ws/decks/{w['deck'].pk}/", "",
                                      lambda w: envelopes(["analyze"]), {"v": 1, "action": "analyze"}, "queued",
                                      rows_of(_deck)),
    # a socket that takes no messages: every frame is answered with an error, and job updates still arrive
    "ws/jobs/<uuid:job_id>/": Socket(lambda w: f"/ws/jobs/{w['job'].pk}/", "",
                                     lambda w: envelopes(["anything"]) | st.just(dumps({"v": 1, "action": "sync"})),
                                     {}, "job", rows_of(_job)),
    "ws/pods/<uuid:draft_id>/": Socket(lambda w: f"/ws/pods/{w['pod'].pk}/", "guest", pod_frames,
                                       {"v": 1, "action": "ping"}, "pong", rows_of(_pod, _seats, _picks)),
    "ws/games/<uuid:game_id>/": Socket(lambda w: f"/ws/games/{w['game'].pk}/", "guest", game_frames,
                                       {"v": 1, "action": "ping"}, "pong", rows_of(_game)),
}


def test_every_socket_has_an_entry():
    from mtgsite.routing import websocket_urlpatterns

    assert sorted(str(p.pattern) for p in websocket_urlpatterns) == sorted(SOCKETS)


# What may come besides the error: after a refused pick or action the socket sends the seat's (or the
# game's) view again, which can arrive after the next frame's error (it is built in a worker thread).
FOLLOW_UPS = {"status", "seat", "game"}


async def next_message(comm, predicate, timeout: float = 10) -> dict:
    """The next message satisfying ``predicate``, passing over views (AssertionError when none comes)."""
    while True:
        message = await comm.receive_json_from(timeout=timeout)
        if predicate(message) or message.get("type") not in FOLLOW_UPS:
            return message


async def drain(comm, quiet: float = 0.15) -> list[dict]:
    out = []
    while not await comm.receive_nothing(timeout=quiet):
        out.append(await comm.receive_json_from())
    return out


async def session_with(socket: Socket, w: dict, frames: list) -> list[str]:
    """Open the socket, send ``frames`` then the valid message; the problems seen."""
    from channels.db import database_sync_to_async
    from channels.layers import get_channel_layer

    from decks.completion.service import job_group

    problems = []
    comm, connected, code = await connect_path(socket.url(w), w["guest"] if socket.owner else None)
    assert connected, code
    await drain(comm, 0.3)  # what it sends on connect
    before = await database_sync_to_async(socket.rows)(w)
    for frame in frames:
        if frame == HUGE:
            frame = dumps({"v": 1, "action": "sync", "padding": "x" * 100_000})
        # straight to the application: the communicator's send_to refuses an empty frame, a client need not
        await comm.send_input({"type": "websocket.receive", **{"bytes" if isinstance(frame, bytes) else "text": frame}})
        try:
            answer = await next_message(comm, lambda m: m.get("type") not in FOLLOW_UPS)
        except AssertionError:  # the socket was closed, or it said nothing
            problems.append(f"closed or silent on {frame[:80]!r}")
            return problems
        if answer.get("type") != "error":
            problems.append(f"{frame[:80]!r} answered {str(answer)[:120]}")
        if any(m.get("type") == "error" for m in await drain(comm, 0.05)):
            problems.append(f"{frame[:80]!r} answered with more than one error")
    after = await database_sync_to_async(socket.rows)(w)
    if after != before:
        problems.append(f"rows changed by {[f[:60] for f in frames]}")
    if socket.valid:
        await comm.send_json_to(socket.valid)
    else:  # the job socket takes nothing: a job update pushed to its group still arrives
        await get_channel_layer().group_send(job_group(w["job"].pk), {"type": "job.update", "job": {"id": "x"}})
    try:
        reply = await next_message(comm, lambda m: m.get("type") == socket.reply)
    except AssertionError:
        reply = None
    if reply is None or reply.get("type") != socket.reply:
        problems.append(f"the valid message after the fuzz got {str(reply)[:120]}, no {socket.reply!r}")
    await comm.disconnect()
    return problems


@pytest.mark.parametrize("route", sorted(SOCKETS))
def test_malformed_frames_get_an_error_and_change_nothing(guest_world, route):
    socket = SOCKETS[route]

    @given(frames=st.lists(socket.frames(guest_world), min_size=FRAMES, max_size=FRAMES))
    @hypothesis_settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                         suppress_health_check=list(HealthCheck))
    def fuzz(frames):
        problems = run_with_fresh_layers(session_with(socket, guest_world, frames))
        assert not problems, "\n".join(problems)

    fuzz()
