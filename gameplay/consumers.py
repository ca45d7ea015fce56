"""ws/games/<uuid>/: a game against the AI and its advisor (protocol in docs/game-advice.md).

The socket is bound to the game's owner (their account, or for a guest their session): anyone else
is refused (close code 4403; an unknown game 4404). It joins the game's group, which carries the
person's view (built from their observation only) after every change and the advisor's messages.

Actions and advice run off the event loop and off Channels' shared database thread (an AI reply or
a search can take seconds, and must not hold up other sockets): each call gets a worker thread that
closes its database connections when done. On the embedded stack (Celery eager) the advice task
runs in such a thread *in the background*, so its progress messages reach the socket while it
thinks; on the services stack it is queued to a Celery worker, which sends progress through Redis.
"""
from __future__ import annotations

import asyncio
import logging
import time

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.db import close_old_connections, connections

from common import wire
from gameplay import tasks
from gameplay.models import PlayedGame
from gameplay.play import PROTOCOL_VERSION, PlayError, session
from plumbing import limits

log = logging.getLogger(__name__)
MAX_MESSAGE = 8192
CLIENT_ACTIONS = ("sync", "act", "advise", "stop", "ping", "concede")


ProtocolError = wire.ProtocolError  # the envelope checks are shared with the draft pods


def parse_message(text) -> dict:
    """Validate one client message; raises :class:`ProtocolError` with the reason."""
    msg = wire.decode_message(text, version=PROTOCOL_VERSION, actions=CLIENT_ACTIONS, max_chars=MAX_MESSAGE)
    action = msg["action"]
    if action == "act":
        if not isinstance(msg.get("key"), str) and not isinstance(msg.get("action_data"), dict):
            raise ProtocolError("'act' needs 'key' (the offered action's key)")
        revision = msg.get("revision")
        if revision is not None and (not isinstance(revision, int) or isinstance(revision, bool)):
            raise ProtocolError("'revision' must be the view's revision number")
        cid = msg.get("client_action_id")
        if cid is not None and (not isinstance(cid, str) or not 0 < len(cid) <= 64):
            raise ProtocolError("'client_action_id' is 1 to 64 characters")
        until = msg.get("pass_until")
        if until is not None and (not isinstance(until, str) or until not in session.PASS_UNTIL):
            raise ProtocolError(f"'pass_until' is one of: {', '.join(session.PASS_UNTIL)}")
    if action == "advise":
        for key in ("level", "algorithm"):
            if msg.get(key) is not None and not isinstance(msg.get(key), str):
                raise ProtocolError(f"'{key}' must be a string")
        for key in ("seconds", "simulations"):
            value = msg.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
                raise ProtocolError(f"'{key}' must be a positive number")
        revision = msg.get("revision")
        if revision is not None and (not isinstance(revision, int) or isinstance(revision, bool)):
            raise ProtocolError("'revision' must be the view's revision number")
    return msg


def _own_thread(fn):
    """Run ``fn`` in a worker thread of its own (not Channels' shared database thread), with its
    own database connection, closed afterwards."""

    def call(*args, **kwargs):
        close_old_connections()
        try:
            return fn(*args, **kwargs)
        finally:
            connections.close_all()

    return sync_to_async(call, thread_sensitive=False)


class GameConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        self.game_id = str(self.scope["url_route"]["kwargs"]["game_id"])
        self.group = None
        self.ticket = None
        self.advice_future = None
        self.acts: set[asyncio.Future] = set()
        http_session = self.scope.get("session")
        code = await _own_thread(self._bind)(self.scope.get("user"), getattr(http_session, "session_key", None))
        if code:
            await self.close(code=code)
            return
        self.group = session.game_group(self.game_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self._send_view()

    def _bind(self, user, session_key) -> int:
        row = PlayedGame.objects.filter(pk=self.game_id).only("owner_id", "session_key").first()
        if row is None:
            return 4404
        return 0 if session.owns(row, user, session_key) else 4403

    async def disconnect(self, code):
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)
        if self.ticket:
            await _own_thread(session.cancel_advice)(self.game_id, only=self.ticket)

    async def send(self, text_data=None, bytes_data=None, close=False):
        """A broadcast can reach a socket the client just closed: drop it (see drafts.pods.consumers)."""
        try:
            await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
        except Exception as exc:  # noqa: BLE001 - autobahn's Disconnected and friends share no base class
            log.debug("send to a closed socket of game %s dropped: %r", self.game_id, exc)

    # -- client messages ---------------------------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None):
        try:
            msg = parse_message(text_data if text_data is not None else bytes_data)
        except ProtocolError as exc:
            await self._error(str(exc))
            return
        action = msg["action"]
        if action == "ping":
            await self.send_json({"v": PROTOCOL_VERSION, "type": "pong", "t": time.time()})
        elif action == "sync":
            await self._send_view()
        elif action == "act":
            # Not awaited here: while a slow AI thinks about its reply, this socket goes on receiving the
            # game's messages (the provisional view of this very action among them).
            task = asyncio.ensure_future(self._act(msg))
            self.acts.add(task)
            task.add_done_callback(self.acts.discard)
        elif action == "advise":
            await self._advise(msg)
        elif action == "concede":
            await self._concede()
        elif action == "stop":
            if self.ticket:
                await _own_thread(session.cancel_advice)(self.game_id, only=self.ticket)
            await self.send_json({"v": PROTOCOL_VERSION, "type": "advice_stopped"})

    async def _act(self, msg):
        cid = msg.get("client_action_id")
        action = msg["key"] if isinstance(msg.get("key"), str) else msg["action_data"]
        try:
            seat = await _own_thread(self._seat)()
            outcome = await _own_thread(session.human_action)(self.game_id, seat, action, msg.get("revision"), cid,
                                                              pass_until=msg.get("pass_until"),
                                                              on_applied=self._publish_provisional)
        except PlayError as exc:
            await self._error(str(exc), code=exc.code, client_action_id=cid, **exc.details)
            if exc.code != 404:
                await self._send_view()  # the client re-syncs to what the server holds
            return
        except Exception:  # an unexpected failure must not take the socket down
            log.exception("action on game %s failed", self.game_id)
            await self._error("the server failed on this action; nothing was changed", code=500, client_action_id=cid)
            return
        await self.send_json({"v": PROTOCOL_VERSION, "type": "acted", **(outcome.ack or {})})
        await session.publish(self.channel_layer, outcome)

    async def _concede(self):
        """The person concedes: every socket of the game gets the finished view (its final board, the review link)."""
        try:
            seat = await _own_thread(self._seat)()
            outcome = await _own_thread(session.concede)(self.game_id, seat)
        except PlayError as exc:
            await self._error(str(exc), code=exc.code, context="concede")
            if exc.code != 404:
                await self._send_view()
            return
        except Exception:  # an unexpected failure must not take the socket down
            log.exception("concession of game %s failed", self.game_id)
            await self._error("the server failed to concede; nothing was changed", code=500, context="concede")
            return
        await session.publish(self.channel_layer, outcome)

    def _publish_provisional(self, view: dict) -> None:
        """From the action's worker thread: every socket of the game sees the action before the AI's reply."""
        session.publish_sync(session.Outcome(self.game_id, view))

    def _seat(self) -> int:
        row = PlayedGame.objects.filter(pk=self.game_id).only("human_seat").first()
        if row is None:
            raise PlayError("no such game", 404)
        return row.human_seat

    async def _advise(self, msg):
        kwargs = {k: msg.get(k) for k in ("level", "algorithm", "seconds", "simulations")}
        try:
            # The same rate as POST /api/games/advice. A game has one search at a time (a newer request stops the
            # older one), so the rate bounds this socket's searches.
            await _own_thread(limits.check_socket)("advice", self.scope)
        except limits.Refused as exc:  # nothing starts; the socket stays open
            await self._error(exc.message, code=exc.status, context="advice", limit=exc.limit,
                              retry_after=exc.retry_after)
            return
        try:
            revision = msg.get("revision")
            if revision is None:
                revision = await _own_thread(self._revision)()
            if settings.CELERY_TASK_ALWAYS_EAGER:
                # Eager Celery runs the task where it is called: in a background thread, so that this
                # socket keeps receiving the progress the task sends to the group.
                self.ticket = await _own_thread(session.new_ticket)(self.game_id)
                self.advice_future = asyncio.ensure_future(
                    _own_thread(tasks.enqueue_advice)(self.game_id, revision, ticket=self.ticket, **kwargs))
                self.advice_future.add_done_callback(self._advice_done)
            else:
                self.ticket = await _own_thread(tasks.enqueue_advice)(self.game_id, revision, **kwargs)
        except PlayError as exc:
            await self._error(str(exc), code=exc.code, context="advice")
        except Exception as exc:  # e.g. the broker is down
            log.exception("advice for game %s could not start", self.game_id)
            await self._error(f"the advisor could not start ({exc.__class__.__name__})", code=503, context="advice")

    def _revision(self) -> int:
        row = PlayedGame.objects.filter(pk=self.game_id).only("revision").first()
        if row is None:
            raise PlayError("no such game", 404)
        return row.revision

    def _advice_done(self, future):
        if not future.cancelled() and future.exception() is not None:
            log.error("advice for game %s failed: %r", self.game_id, future.exception())

    # -- group events ------------------------------------------------------------------------------

    async def game_view(self, event):
        view = event["view"]
        if view.get("id") != self.game_id:  # defence in depth: a view only ever goes to its own game
            return
        await self.send_json(view)

    async def game_advice(self, event):
        message = event["message"]
        if message.get("game") != self.game_id:
            return
        await self.send_json(message)

    # -- helpers -----------------------------------------------------------------------------------

    async def _send_view(self):
        try:
            view = await _own_thread(session.snapshot)(self.game_id)
            if view["status"] == "playing" and not view["your_decision"]:  # the AI owes a move: let it play
                outcome = await _own_thread(session.resume)(self.game_id)
                if outcome is not None:
                    view = outcome.view
                    await session.publish(self.channel_layer, outcome)
                    return
        except PlayError as exc:
            await self._error(str(exc), code=exc.code)
            return
        await self.send_json(view)

    async def _error(self, text, code: int = 400, **extra):
        await self.send_json({"v": PROTOCOL_VERSION, "type": "error", "message": text, "code": code,
                              **{k: v for k, v in extra.items() if v is not None}})
