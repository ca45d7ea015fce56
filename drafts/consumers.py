"""ws/pods/<uuid>/: one socket per seat of an online draft pod (protocol in docs/websockets.md).

The seat is never named by the client: it is the one the socket's user (or guest session) holds in
the pod, looked up when the socket connects. That seat's private group carries only its own pack and
pool; the pod's group carries the public status. A socket without a seat only watches the status.
"""
from __future__ import annotations

import asyncio
import logging
import time

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from django.conf import settings

from drafts import online
from drafts.core.protocol import ProtocolError, message, parse_client_message

log = logging.getLogger(__name__)
# How long after a deadline this socket takes the timed-out pick itself: at once on the embedded
# stack (no worker), after a grace period on the services stack, where a Celery task is due first.
WATCHDOG_GRACE = 0.05


class PodConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        self.draft_id = str(self.scope["url_route"]["kwargs"]["draft_id"])
        self.seat = None
        self.watchdog = None
        session = self.scope.get("session")
        user = self.scope.get("user")
        try:
            self.seat = await database_sync_to_async(self._bind)(user, getattr(session, "session_key", None))
        except online.PodError:
            await self.close(code=4404)
            return
        self.group = online.pod_group(self.draft_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        if self.seat is not None:
            await self.channel_layer.group_add(online.seat_group(self.draft_id, self.seat), self.channel_name)
        await self.accept()
        # Timers that ran out while nobody was connected are settled before the first view is sent.
        await self._expire()
        await self._send_snapshot(announce=True)

    def _bind(self, user, session_key):
        from drafts.models import Draft

        draft = Draft.objects.filter(pk=self.draft_id, kind="online").first()
        if draft is None:
            raise online.PodError("no such pod", 404)
        row = online.seat_of(draft, user, session_key)
        if row is not None:
            online.mark_present(self.draft_id, row.seat, True, self.channel_name)
        return None if row is None else row.seat

    async def disconnect(self, code):
        if self.watchdog is not None:
            self.watchdog.cancel()
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)
            if self.seat is not None:
                await self.channel_layer.group_discard(online.seat_group(self.draft_id, self.seat), self.channel_name)
                await database_sync_to_async(online.mark_present)(self.draft_id, self.seat, False, self.channel_name)
                await self._broadcast_status()

    # -- client messages -------------------------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None):
        try:
            msg = parse_client_message(text_data if text_data is not None else bytes_data)
        except ProtocolError as exc:
            await self._error(str(exc))
            return
        if msg.action == "ping":
            if self.seat is not None:
                await database_sync_to_async(online.mark_present)(self.draft_id, self.seat, True, self.channel_name)
            await self.send_json(message("pong", t=time.time()))
            return
        if msg.action == "sync":
            await self._send_snapshot()
            return
        if self.seat is None:
            await self._error("you have no seat in this pod; join it first", code=403)
            return
        try:
            if msg.action == "start":
                outcome = await database_sync_to_async(self._start)()
            else:
                outcome = await database_sync_to_async(online.make_pick)(
                    self.draft_id, self.seat, msg.card, msg.pack_number, msg.pick_number, msg.client_pick_id)
        except online.PodError as exc:
            await self._error(str(exc), code=exc.code, client_pick_id=msg.client_pick_id)
            await self._send_snapshot()  # the client re-syncs to what the server holds
            return
        if outcome.ack is not None:
            await self.send_json(message("picked", **outcome.ack))
        await self._publish(outcome)

    def _start(self):
        key = getattr(self.scope.get("session"), "session_key", None)
        return online.start_pod(self.draft_id, self.scope.get("user"), key)

    async def send(self, text_data=None, bytes_data=None, close=False):
        """A broadcast can reach a socket the client just closed (django/channels#1820): drop it
        instead of letting the error escape, which would skip disconnect() and its clean-up."""
        try:
            await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
        except Exception as exc:  # autobahn.exception.Disconnected and friends
            log.debug("send to a closed socket of pod %s dropped: %r", self.draft_id, exc)

    # -- group events ----------------------------------------------------------------------------

    async def pod_seat(self, event):
        view = event["view"]
        if view.get("seat") != self.seat:  # defence in depth: a view is only ever for its own seat
            return
        await self.send_json(view)
        self._arm(view.get("deadline"))

    async def pod_status(self, event):
        await self.send_json(event["status"])

    # -- helpers ---------------------------------------------------------------------------------

    async def _publish(self, outcome):
        await online.publish(self.channel_layer, outcome)
        if online.timers_to_schedule(outcome):  # no thread hop on the hot path when there is no timer
            await database_sync_to_async(online.schedule_timers)(outcome)

    async def _send_snapshot(self, announce: bool = False):
        try:
            status, view = await database_sync_to_async(online.snapshot)(self.draft_id, self.seat)
        except online.PodError as exc:
            await self._error(str(exc), code=exc.code)
            return
        await self.send_json(status)
        if view is not None:
            view = {**view, "you": True}
            await self.send_json(view)
            self._arm(view.get("deadline"))
        if announce and self.seat is not None:  # the others see this seat come online
            await self.channel_layer.group_send(self.group, {"type": "pod.status", "status": status})

    async def _broadcast_status(self):
        try:
            status, _ = await database_sync_to_async(online.snapshot)(self.draft_id, None)
        except online.PodError:
            return
        await self.channel_layer.group_send(self.group, {"type": "pod.status", "status": status})

    def _arm(self, deadline):
        """Watch this seat's deadline; when it passes, settle the timed-out pick (idempotent)."""
        if self.watchdog is not None and self.watchdog is not asyncio.current_task():
            self.watchdog.cancel()
        self.watchdog = None
        if deadline is None:
            return
        grace = WATCHDOG_GRACE if settings.CELERY_TASK_ALWAYS_EAGER else 2.0
        self.watchdog = asyncio.ensure_future(self._watch(max(0.0, deadline - time.time()) + grace))

    async def _watch(self, delay):
        try:
            await asyncio.sleep(delay)
            await self._expire()
        except asyncio.CancelledError:
            pass

    async def _expire(self):
        try:
            outcome = await database_sync_to_async(online.expire_overdue)(self.draft_id)
        except online.PodError:
            return
        except Exception:
            log.exception("expiring picks of pod %s failed", self.draft_id)
            return
        if outcome is not None:
            await self._publish(outcome)

    async def _error(self, text, code: int = 400, **extra):
        await self.send_json(message("error", message=text, code=code, **{k: v for k, v in extra.items() if v}))
