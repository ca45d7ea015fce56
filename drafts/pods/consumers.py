"""ws/pods/<uuid>/: one socket per seat of an online draft pod (protocol in docs/websockets.md).

The seat is never named by the client: it is the one the socket's user (or guest session) holds in
the pod, looked up when the socket connects. That seat's private group carries only its own pack and
pool; the pod's group carries the public status. A socket without a seat only watches the status.

The pick path is kept short: a pick waits for its pod's batch (:class:`PickBatcher`) without holding
up the socket, which keeps receiving the packs passed to it; group messages are handed to their
handlers without Channels' per-message database-thread hop; the database thread keeps its connection.
"""
from __future__ import annotations

import asyncio
import logging
import time
import weakref

from channels.consumer import get_handler_name
from channels.db import DatabaseSyncToAsync
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from django.conf import settings
from django.db import connections

from drafts.core.protocol import ProtocolError, message, parse_client_message
from drafts.models import Draft
from drafts.pods import service, tasks

log = logging.getLogger(__name__)
# How long after a deadline this socket takes the timed-out pick itself: at once on the embedded
# stack (no worker), after a grace period on the services stack, where a Celery task is due first.
WATCHDOG_GRACE = 0.05
# The close code of a socket whose pick the server failed to store (the database went away): reconnect and resend.
SERVER_FAILED = 4500


# --- the database thread ---------------------------------------------------------------------------------

def _persistent_connections() -> None:
    """Keep this thread's database connections open between calls, for settings.POD_DB_CONN_MAX_AGE s.

    Channels runs the database calls of every socket of a Daphne process on one long-lived thread,
    and closes that thread's connection after each call when CONN_MAX_AGE is 0 (the site's setting:
    under ASGI each HTTP request has a thread of its own, where Django advises against persistent
    connections). So every pick opened a new PostgreSQL connection. Here only this thread's
    connection is made persistent, health-checked before it is reused after a call."""
    age = settings.POD_DB_CONN_MAX_AGE
    if not age:
        return
    for conn in connections.all():
        if conn.settings_dict.get("CONN_MAX_AGE") == 0:
            conn.settings_dict = {**conn.settings_dict, "CONN_MAX_AGE": age, "CONN_HEALTH_CHECKS": True}


class PodDatabaseSyncToAsync(DatabaseSyncToAsync):
    """``database_sync_to_async`` for the pod sockets: the same thread, a connection that is kept."""

    def thread_handler(self, loop, *args, **kwargs):
        _persistent_connections()
        return super().thread_handler(loop, *args, **kwargs)


pod_db = PodDatabaseSyncToAsync


def _close_connections() -> None:
    connections.close_all()


# --- picks, a batch per pod at a time --------------------------------------------------------------------

class PickBatcher:
    """Applies the picks that the sockets of this process receive for a pod, a batch at a time.

    While a pod's batch is being applied (one transaction under the row lock: service.make_picks),
    the picks that arrive for that pod wait and then go in together as the next batch. Under load a
    pod's picks therefore share one lock, one state write and one status broadcast instead of paying
    for them one by one; alone, a pick is a batch of one. A batch's outcome is published before the
    next one's (in order), while the next batch is already being applied."""

    def __init__(self):
        self.queued: dict[str, list] = {}
        self.running: set[str] = set()
        self.published: dict[str, asyncio.Future] = {}

    async def pick(self, layer, draft_id: str, request: service.PickRequest) -> dict:
        """The ack of ``request`` once its batch is committed; raises its PodError when refused."""
        future = asyncio.get_running_loop().create_future()
        self.queued.setdefault(draft_id, []).append((request, future))
        if draft_id not in self.running:
            self.running.add(draft_id)
            asyncio.ensure_future(self._drain(layer, draft_id))
        result = await future
        if isinstance(result, service.PodError):
            raise result
        return result

    async def _drain(self, layer, draft_id: str) -> None:
        try:
            while self.queued.get(draft_id):
                batch = self.queued.pop(draft_id)
                try:
                    results, outcome = await pod_db(service.make_picks)(draft_id, [r for r, _ in batch])
                except Exception as exc:  # noqa: BLE001 - nothing written: each pick of the batch re-raises it
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (_, future), result in zip(batch, results):
                    if not future.done():
                        future.set_result(result)
                self._publish(layer, draft_id, outcome)
        finally:
            self.running.discard(draft_id)

    def _publish(self, layer, draft_id: str, outcome) -> None:
        previous = self.published.get(draft_id)
        task = asyncio.ensure_future(self._publish_after(previous, layer, outcome))
        self.published[draft_id] = task
        task.add_done_callback(lambda t: self.published.pop(draft_id, None) if self.published.get(draft_id) is t
                               else None)

    @staticmethod
    async def _publish_after(previous, layer, outcome) -> None:
        if previous is not None:
            await asyncio.wait([previous])
        try:
            await publish_outcome(layer, outcome)
        except Exception:
            log.exception("publishing picks of pod %s failed", outcome.draft_id)


_batchers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, PickBatcher]" = weakref.WeakKeyDictionary()


def pick_batcher() -> PickBatcher:
    """This event loop's batcher (a process has one; tests run one loop after another)."""
    loop = asyncio.get_running_loop()
    batcher = _batchers.get(loop)
    if batcher is None:
        batcher = _batchers[loop] = PickBatcher()
    return batcher


async def publish_outcome(layer, outcome) -> None:
    await service.publish(layer, outcome)
    if tasks.timers_to_enqueue(outcome):  # no thread hop on the hot path when there is no timer
        await pod_db(tasks.enqueue_timers)(outcome)


class PodConsumer(AsyncJsonWebsocketConsumer):
    open_sockets = 0  # in this process; the kept database connection is closed when the last one goes
    HEAL_AFTER = 1.0  # seconds a seat's view and the status may disagree before both are sent again

    async def connect(self):
        self.draft_id = str(self.scope["url_route"]["kwargs"]["draft_id"])
        self.seat = None
        self.watchdog = None
        self.counted = False
        self.picks: set[asyncio.Task] = set()  # picks waiting for their batch
        self.view_at = self.status_at = self.healer = None  # see _seen
        self.heals = 0
        session = self.scope.get("session")
        user = self.scope.get("user")
        try:
            self.seat = await pod_db(self._bind)(user, getattr(session, "session_key", None))
        except service.PodError:
            await self.close(code=4404)
            return
        self.group = service.pod_group(self.draft_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        if self.seat is not None:
            await self.channel_layer.group_add(service.seat_group(self.draft_id, self.seat), self.channel_name)
        await self.accept()
        self.counted = True
        PodConsumer.open_sockets += 1
        # Timers that ran out while nobody was connected are settled before the first view is sent.
        await self._expire()
        await self._send_snapshot(announce=True)

    def _bind(self, user, session_key):
        draft = Draft.objects.filter(pk=self.draft_id, kind="online").first()
        if draft is None:
            raise service.PodError("no such pod", 404)
        row = service.seat_of(draft, user, session_key)
        if row is not None:
            service.mark_present(self.draft_id, row.seat, True, self.channel_name)
        return None if row is None else row.seat

    async def disconnect(self, code):
        if self.watchdog is not None:
            self.watchdog.cancel()
        if getattr(self, "healer", None) is not None:
            self.healer.cancel()
        if getattr(self, "group", None):
            await self.channel_layer.group_discard(self.group, self.channel_name)
            if self.seat is not None:
                await self.channel_layer.group_discard(service.seat_group(self.draft_id, self.seat), self.channel_name)
                await pod_db(service.mark_present)(self.draft_id, self.seat, False, self.channel_name)
                await self._broadcast_status()
        if getattr(self, "counted", False):
            self.counted = False
            PodConsumer.open_sockets -= 1
            if PodConsumer.open_sockets == 0 and settings.POD_DB_CONN_MAX_AGE:
                await pod_db(_close_connections)()  # nobody drafting here: give the connection back

    async def dispatch(self, message):
        """Channels (4.2 on) runs ``close_old_connections`` on the database thread before it hands
        every message to its handler: each pack and status sent to this socket, and each frame from
        its client, waited for a thread hop queued behind the picks being written. This consumer's
        database calls go through :data:`pod_db`, which closes old connections around each call
        itself, so the handler is called directly."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    # -- client messages -------------------------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None):
        try:
            msg = parse_client_message(text_data if text_data is not None else bytes_data)
        except ProtocolError as exc:
            await self._error(str(exc))
            return
        if msg.action == "ping":
            if self.seat is not None:
                await pod_db(service.mark_present)(self.draft_id, self.seat, True, self.channel_name)
            await self.send_json(message("pong", t=time.time()))
            return
        if msg.action == "sync":
            await self._send_snapshot()
            return
        if self.seat is None:
            await self._error("you have no seat in this pod; join it first", code=403)
            return
        if msg.action == "pick":
            # Not awaited here: while the pick waits for its batch, this socket goes on receiving the
            # pod's messages (a pack passed to it must not wait behind its own pick).
            task = asyncio.ensure_future(self._pick(msg))
            self.picks.add(task)
            task.add_done_callback(self.picks.discard)
            return
        try:
            outcome = await pod_db(self._start)()
        except service.PodError as exc:
            await self._error(str(exc), code=exc.code)
            await self._send_snapshot()
            return
        await self._publish(outcome)

    async def _pick(self, msg):
        try:
            ack = await pick_batcher().pick(self.channel_layer, self.draft_id, service.PickRequest(
                self.seat, msg.card, msg.pack_number, msg.pick_number, msg.client_pick_id))
        except service.PodError as exc:
            await self._error(str(exc), code=exc.code, client_pick_id=msg.client_pick_id)
            await self._send_snapshot()  # the client re-syncs to what the server holds
            return
        except Exception:  # the database is gone, say: the client reconnects and resends the pick
            log.exception("a pick of pod %s failed", self.draft_id)
            try:
                # 4500, not 1011: Daphne's autobahn refuses to send a close code outside 1000 and 3000-4999 and
                # leaves the socket open, and the page would wait for the pick's answer for ever
                await self.close(code=SERVER_FAILED)
            except Exception:  # noqa: BLE001 - already closed: the pick's failure is logged above
                pass
            return
        await self.send_json(message("picked", **ack))  # the views and the status are published by the batch

    def _start(self):
        key = getattr(self.scope.get("session"), "session_key", None)
        return service.start_pod(self.draft_id, self.scope.get("user"), key)

    async def send_json(self, content, close=False):
        """Through :meth:`send` below (the base class's send_json goes past it, to its parent's)."""
        await self.send(text_data=await self.encode_json(content), close=close)

    async def send(self, text_data=None, bytes_data=None, close=False):
        """A broadcast can reach a socket the client just closed (django/channels#1820): drop it
        instead of letting the error escape, which would skip disconnect() and its clean-up."""
        try:
            await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
        except Exception as exc:  # noqa: BLE001 - autobahn's Disconnected and friends: none may skip disconnect()
            log.debug("send to a closed socket of pod %s dropped: %r", self.draft_id, exc)

    # -- group events ----------------------------------------------------------------------------

    async def pod_seat(self, event):
        view = event["view"]
        if view.get("seat") != self.seat:  # defence in depth: a view is only ever for its own seat
            return
        await self.send_json(view)
        self._arm(view.get("deadline"))
        self._seen(view=view)

    async def pod_status(self, event):
        await self.send_json(event["status"])
        self._seen(status=event["status"])

    # -- a lost message heals itself ---------------------------------------------------------------

    def _seen(self, view=None, status=None):
        """Compare what this socket was last told about its own seat by its view and by the status:
        how many picks it made, whether it holds a pack, whether the draft is over. They disagree for
        a moment when one of a batch's messages is still on its way; if they still disagree
        HEAL_AFTER seconds later, a message was lost (seen under load with the core Redis channel
        layer, most likely when another socket of the process closed in the middle of a receive),
        and this socket is sent a fresh status and view."""
        if self.seat is None:
            return
        if view is not None:
            self.view_at = None if view.get("lobby") else (
                len(view.get("pool") or []), view.get("pack") is not None, bool(view.get("complete")))
        if status is not None:
            rows = status.get("seats") or []
            row = rows[self.seat] if len(rows) > self.seat else {}
            self.status_at = None if "picks" not in row else (
                row["picks"], row.get("packs_waiting", 0) > 0, bool(status.get("complete")))
        if self.view_at is None or self.status_at is None or self.view_at == self.status_at:
            if self.healer is not None:
                self.healer.cancel()
                self.healer = None
        elif self.healer is None:
            self.healer = asyncio.ensure_future(self._heal())

    async def _heal(self):
        try:
            await asyncio.sleep(self.HEAL_AFTER)
        except asyncio.CancelledError:
            return
        self.healer = None
        if self.view_at != self.status_at:
            log.info("pod %s seat %s: view %s and status %s disagree; resending both", self.draft_id, self.seat,
                     self.view_at, self.status_at)
            self.heals += 1
            await self._send_snapshot()

    # -- helpers ---------------------------------------------------------------------------------

    async def _publish(self, outcome):
        await publish_outcome(self.channel_layer, outcome)

    async def _send_snapshot(self, announce: bool = False):
        try:
            status, view = await pod_db(service.snapshot)(self.draft_id, self.seat)
        except service.PodError as exc:
            await self._error(str(exc), code=exc.code)
            return
        await self.send_json(status)
        if view is not None:
            view = {**view, "you": True}
            await self.send_json(view)
            self._arm(view.get("deadline"))
        self._seen(view=view, status=status)
        if announce and self.seat is not None:  # the others see this seat come online
            await self.channel_layer.group_send(self.group, {"type": "pod.status", "status": status})

    async def _broadcast_status(self):
        try:
            status, _ = await pod_db(service.snapshot)(self.draft_id, None)
        except service.PodError:
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
            outcome = await pod_db(service.expire_overdue)(self.draft_id)
        except service.PodError:
            return
        except Exception:
            log.exception("expiring picks of pod %s failed", self.draft_id)
            return
        if outcome is not None:
            await self._publish(outcome)

    async def _error(self, text, code: int = 400, **extra):
        await self.send_json(message("error", message=text, code=code, **{k: v for k, v in extra.items() if v}))
