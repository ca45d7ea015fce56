"""Live rows: a draft pod or a game that many requests change, one change at a time (drafts.pods.service, gameplay.play.session).

- :func:`locked_row`: one transaction holding a row's lock, on PostgreSQL and on SQLite alike.
- :class:`RevisionCache`: the objects rebuilt from such rows (a replayed pod, a loaded game), kept per
  process by the row's ``revision`` and put back only once the change that made them is committed.
- :func:`send_to_group`, :func:`publish_sync`: the channel layer from synchronous code.
"""
from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from typing import Any, Awaitable, Callable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection, transaction
from django.db.models import F, Model, QuerySet

_locks_guard = threading.Lock()
_row_locks: dict[tuple[str, str], threading.RLock] = {}


def row_lock(model: type[Model], pk):
    """This process's lock of one row on SQLite, which has no row locks (the embedded stack has a single
    server process); a no-op elsewhere. Also what a write outside :func:`locked_row` takes there."""
    if connection.vendor != "sqlite":
        return contextlib.nullcontext()
    with _locks_guard:
        return _row_locks.setdefault((model._meta.label, str(pk)), threading.RLock())


@contextlib.contextmanager
def locked_row(rows: QuerySet, pk, missing: Callable[[], Exception], touch: str = "revision"):
    """One transaction holding the lock of row ``pk`` of ``rows``; yields the row, raises ``missing()``
    when there is none.

    PostgreSQL: ``SELECT ... FOR UPDATE``. SQLite ignores FOR UPDATE, and a transaction that reads and
    then writes fails at once ("database is locked") when another connection wrote in between: there
    this process's lock of the row is taken, then the database's write lock (an UPDATE of ``touch`` to
    itself), before the row is read."""
    with row_lock(rows.model, pk), transaction.atomic():
        if connection.vendor == "sqlite":
            rows.filter(pk=pk).update(**{touch: F(touch)})
        row = rows.select_for_update().filter(pk=pk).first()
        if row is None:
            raise missing()
        yield row


class RevisionCache:
    """Per-process cache of objects rebuilt from live rows: row id -> (revision, object).

    Code holding the row's lock :meth:`take`\\ s the object out (it becomes the caller's: no other hands
    hold an object being changed) and :meth:`keep`\\ s it, which puts it back as of the row's new
    revision once (and only if) the transaction commits: a rolled-back change never leaves a changed
    object behind, and a revision written by another process makes the entry stale, never returned.
    A newer entry is never replaced by an older one; the least recently used go past ``size``."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[str, tuple[int, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def take(self, key, revision: int):
        """The object of row ``key`` at ``revision``, taken out of the cache; None when absent or stale."""
        with self._lock:
            entry = self._items.pop(str(key), None)
            if entry is not None and entry[0] == revision:
                self.hits += 1
                return entry[1]
            self.misses += 1
            return None

    def put(self, key, revision: int, value) -> None:
        key = str(key)
        with self._lock:
            old = self._items.get(key)
            if old is not None and old[0] > revision:
                return
            self._items[key] = (revision, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def keep(self, key, revision: int, value) -> None:
        """Put ``value`` back, as of ``revision``, once the current transaction commits."""
        key = str(key)
        transaction.on_commit(lambda: self.put(key, revision, value))

    def peek(self, key) -> tuple[int, Any] | None:
        """(revision, object) of row ``key`` as cached, left in place."""
        with self._lock:
            return self._items.get(str(key))

    def __contains__(self, key) -> bool:
        with self._lock:
            return str(key) in self._items

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def send_to_group(group: str, message: dict) -> None:
    """Send one message to a channel-layer group from synchronous code (nothing without a layer)."""
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(group, message)


def publish_sync(publish: Callable[[Any, Any], Awaitable[None]], outcome) -> None:
    """Run an async ``publish(layer, outcome)`` from synchronous code, on the project's channel layer."""
    async_to_sync(publish)(get_channel_layer(), outcome)
