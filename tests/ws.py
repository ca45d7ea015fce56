"""Helpers for channels.testing websocket tests: guest sessions, connecting with a session cookie, receiving."""
from __future__ import annotations

from channels.testing import WebsocketCommunicator
from django.contrib.sessions.backends.db import SessionStore


def guest_session() -> str:
    """A stored guest session (what a browser without an account gets); returns its key."""
    store = SessionStore()
    store["guest"] = True
    store.create()
    return store.session_key


async def connect_path(path: str, session_key: str | None = None, timeout: float = 10):
    """Open ``path`` on the site's ASGI application as the given session; (communicator, connected, code)."""
    from mtgsite.asgi import application

    headers = [(b"origin", b"http://localhost")]
    if session_key:
        headers.append((b"cookie", f"sessionid={session_key}".encode()))
    comm = WebsocketCommunicator(application, path, headers=headers)
    connected, code = await comm.connect(timeout=timeout)
    return comm, connected, code


async def receive_until(comm, predicate, timeout=10, log=None):
    """Receive JSON messages until one satisfies ``predicate`` (each is appended to ``log`` when given)."""
    while True:
        msg = await comm.receive_json_from(timeout=timeout)
        if log is not None:
            log.append(msg)
        if predicate(msg):
            return msg


def recorded(comm, log: list):
    """``comm``, with every JSON message it receives from now on also appended to ``log`` (to scan them all)."""
    receive = comm.receive_json_from

    async def receive_json_from(timeout=1):
        msg = await receive(timeout=timeout)
        log.append(msg)
        return msg

    comm.receive_json_from = receive_json_from
    return comm
