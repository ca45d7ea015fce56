"""Abuse limits on the expensive endpoints: per-client rates, concurrency caps and the completion queue's depth.

Everything is read from ``settings.MTG_LIMITS`` at each call (one place; ``MTG_LIMIT_<NAME>`` overrides each entry):

* **Rates** ``"N/period"`` per client and limit name (``completion``, ``advice``, ``simulate``, ``pod_create``,
  ``game_create``, ``deck_import``, ``analysis``, ``signup``): a sliding-window counter in Django's cache (atomic
  ``add``/``incr``; the local-memory cache of the embedded stack, Redis on the services stack). A refused request
  is not counted, so a client that floods is admitted again as soon as its window allows.
* **Concurrency caps** ``<name>_concurrent``: deck completions count the client's unfinished jobs (rows, through a
  :class:`Work` the completion service gives); a synchronous endpoint counts the client's requests in flight (a
  cache counter).
* **Queue depth** ``completion_queue_max``: with more completions than this waiting for a worker, a new one is
  refused with 503 and nothing is written.

A refusal is :class:`Refused`: 429 (503 for a full queue) with the seconds to wait. The API answers it through
:class:`Limited` (``{"errors": [{"message", "limit", "rate", "retry_after"}]}`` and a ``Retry-After`` header), the
pages through :func:`limited` (the same page, the person's input kept, a message saying when to retry), the
websockets with an error message (:func:`check`; the socket stays open).

The client is the account, else the guest session, else the address (REMOTE_ADDR, or the websocket's peer; an
IPv6 address by its /64). Guests also share a bucket per address, ``guest_ip_factor`` times the rate, so minting
sessions buys no more than that. ``X-Forwarded-For`` is read only when ``forwarded_hops`` says how many proxies
stand in front of the site.
"""
from __future__ import annotations

import functools
import ipaddress
import logging
import math
import re
import time
from collections.abc import Callable
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from rest_framework.exceptions import APIException

log = logging.getLogger(__name__)
clock = time.time  # the limiter's clock (tests replace it)
BUSY_TTL = 600  # seconds an in-flight counter outlives its last request (a crashed process leaves no lasting count)
LABELS = {"completion": "deck completions", "advice": "advice requests", "simulate": "simulated drafts",
          "pod_create": "new pods", "game_create": "new games", "deck_import": "deck imports",
          "analysis": "deck analyses", "signup": "sign-ups"}
UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600,
         "d": 86400, "day": 86400}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([a-z]+?)s?\s*$")
_OFF = {"", "0", "off", "none", "false", "no"}


# --- settings ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int
    text: str

    def describe(self) -> str:
        for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
            if self.seconds % size == 0:
                n = self.seconds // size
                return f"{self.count} per {unit}" if n == 1 else f"{self.count} per {n} {unit}s"
        return f"{self.count} per {self.seconds} seconds"  # unreachable: every period is whole seconds


def parse_rate(text) -> Rate | None:
    """``"10/min"``, ``"5/10s"``, ``"100/day"`` -> Rate; ``"off"`` (or empty) -> None (no limit)."""
    if text is None or str(text).strip().lower() in _OFF:
        return None
    match = _RATE.match(str(text).lower())
    unit = UNITS.get(match.group(3)) if match else None
    if unit is None or int(match.group(1)) < 1:
        raise ValueError(f"bad rate {text!r}: use N/period with period s, min, hour or day (e.g. 10/min), or off")
    return Rate(int(match.group(1)), int(match.group(2) or 1) * unit, str(text).strip())


def _setting(name: str, default=None):
    return settings.MTG_LIMITS.get(name, default)


def _number(name: str, default: float = 0) -> float:
    value = _setting(name, default)
    return default if value is None or str(value).strip() == "" else float(value)


def enabled() -> bool:
    return str(_setting("enabled", "1")).strip().lower() not in _OFF


def rate_of(name: str) -> Rate | None:
    return parse_rate(_setting(name))


# --- who is asking -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Client:
    key: str  # "user:<id>", "guest:<session key>" or "ip:<address>"
    ip: str | None = None  # a guest's address ("ip:..."), whose shared bucket the guest also counts against


def _address(peer: str | None, forwarded: str | None) -> str:
    hops = int(_number("forwarded_hops", 0))
    if hops > 0 and forwarded:
        chain = [p.strip() for p in forwarded.split(",") if p.strip()]
        peer = chain[max(len(chain) - hops, 0)] if chain else peer
    try:
        ip = ipaddress.ip_address((peer or "").strip())
    except ValueError:
        return f"ip:{(peer or 'unknown')[:64]}"
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.version == 6:
        return f"ip:{ipaddress.ip_network(f'{ip}/64', strict=False)}"  # one subscriber holds a whole /64
    return f"ip:{ip}"


def _client(user, session_key: str | None, address: str) -> Client:
    if user is not None and getattr(user, "is_authenticated", False):
        return Client(f"user:{user.pk}")
    if session_key:
        return Client(f"guest:{session_key}", address)
    return Client(address)


def client_of(request) -> Client:
    """The client of a Django (or DRF) request."""
    session = getattr(request, "session", None)
    address = _address(request.META.get("REMOTE_ADDR"), request.META.get("HTTP_X_FORWARDED_FOR"))
    return _client(getattr(request, "user", None), getattr(session, "session_key", None), address)


def client_of_socket(scope: dict) -> Client:
    """The client of a websocket (Channels scope; call it off the event loop: the user is loaded lazily)."""
    headers = dict(scope.get("headers") or [])
    forwarded = headers.get(b"x-forwarded-for", b"").decode("latin-1") or None
    peer = (scope.get("client") or [None])[0]
    return _client(scope.get("user"), getattr(scope.get("session"), "session_key", None), _address(peer, forwarded))


# --- refusals ------------------------------------------------------------------------------------------------

class Refused(Exception):
    """A request over a limit: ``status`` 429 (503: the queue is full), ``retry_after`` whole seconds."""

    def __init__(self, limit: str, message: str, retry_after: float, status: int = 429, rate: str | None = None):
        self.limit, self.message, self.status, self.rate = limit, message, status, rate
        self.retry_after = max(1, math.ceil(retry_after))
        super().__init__(message)

    def body(self) -> dict:
        return {"message": self.message, "limit": self.limit, "retry_after": self.retry_after,
                **({"rate": self.rate} if self.rate else {})}


@dataclass(frozen=True)
class Work:
    """How a limit counts work that outlives its request (rows): the client's unfinished jobs and, for a queue
    cap, every client's jobs waiting for a worker, and how long the workers take for n more (None: unknown)."""

    unfinished: Callable[[str], int] | None = None
    waiting: Callable[[], int] | None = None
    pace: Callable[[int], float | None] | None = None


# --- the sliding window --------------------------------------------------------------------------------------

def sliding_wait(previous: int, current: int, limit: int, period: float, elapsed: float) -> float:
    """The sliding-window counter: ``elapsed`` seconds into the current fixed window, the requests of the last
    ``period`` are estimated as ``previous * (1 - elapsed / period) + current`` (``current`` counting this one).
    0 when that is at most ``limit``; else the seconds until one more request would be admitted (no other being
    admitted meanwhile)."""
    if previous * (1 - elapsed / period) + current <= limit:
        return 0.0
    admitted = current - 1
    room = limit - admitted - 1
    if previous > 0 and room >= 0:  # the previous window's share fades enough before this window ends
        return max(period * (1 - room / previous) - elapsed, 0.0)
    # in the next window this one's admitted requests are the previous ones: admitted * (1 - e / period) + 1 <= limit
    into_next = period * (1 - (limit - 1) / admitted) if admitted > limit - 1 else 0.0
    return period - elapsed + into_next


def _window(name: str, bucket: str, rate: Rate, now: float) -> tuple[str, str, float]:
    index = int(now // rate.seconds)
    base = f"limit:{name}:{rate.seconds}:{bucket}"
    return f"{base}:{index}", f"{base}:{index - 1}", now - index * rate.seconds


def _incr(key: str, timeout: int) -> int:
    cache.add(key, 0, timeout=timeout)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=timeout)
        return 1


def _decr(key: str) -> None:
    try:
        cache.decr(key)
    except ValueError:  # expired meanwhile: nothing left to give back
        pass
    except Exception:  # noqa: BLE001 - the cache is down (its backend's errors share no base class): see hit
        log.warning("abuse limits: could not give back %s", key, exc_info=True)


def hit(name: str, bucket: str, rate: Rate, now: float | None = None) -> float:
    """Count one request of ``bucket`` against ``rate``: 0 when admitted, else the seconds to wait (not counted).
    With the cache down every request is admitted (logged): the limits must not take the site down with it."""
    now = clock() if now is None else now
    current_key, previous_key, elapsed = _window(name, bucket, rate, now)
    try:
        current = _incr(current_key, 2 * rate.seconds + 1)
        previous = int(cache.get(previous_key, 0))
    except Exception:  # noqa: BLE001 - the cache is down (its backend's errors share no base class): admit
        log.warning("abuse limits: the cache is unavailable; %s admitted unchecked", name, exc_info=True)
        return 0.0
    wait = sliding_wait(previous, current, rate.count, rate.seconds, elapsed)
    if wait:
        _decr(current_key)
    return wait


def _unhit(name: str, bucket: str, rate: Rate, now: float) -> None:
    _decr(_window(name, bucket, rate, now)[0])


# --- checks --------------------------------------------------------------------------------------------------

def _check_rate(name: str, client: Client) -> None:
    rate = rate_of(name)
    if rate is None:
        return
    now = clock()
    label = LABELS.get(name, name)
    factor = _number("guest_ip_factor", 0)
    shared = Rate(max(1, int(rate.count * factor)), rate.seconds, f"{int(rate.count * factor)}/{rate.seconds}s") \
        if client.ip and factor > 0 else None
    if shared is not None and (wait := hit(name, f"guests@{client.ip}", shared, now)):
        raise Refused(name, f"Too many {label} from your network's guests (at most {shared.describe()}). "
                            f"Sign in, or try again in {math.ceil(wait)} s.", wait, rate=shared.text)
    if wait := hit(name, client.key, rate, now):
        if shared is not None:
            _unhit(name, f"guests@{client.ip}", shared, now)
        raise Refused(name, f"Too many {label}: at most {rate.describe()}. Try again in {math.ceil(wait)} s.",
                      wait, rate=rate.text)


def check(name: str, client: Client, work: Work | None = None) -> None:
    """Raise :class:`Refused` when ``client`` may not start one more ``name`` now; otherwise count it.

    Order: the client's unfinished jobs (``work.unfinished``, cap ``<name>_concurrent``), its rate, then the
    queue (``work.waiting``, cap ``<name>_queue_max``, 503), so that a refusal for being busy costs no quota."""
    if not enabled():
        return
    label = LABELS.get(name, name)
    cap = int(_number(f"{name}_concurrent", 0))
    if work is not None and work.unfinished is not None and cap > 0 and work.unfinished(client.key) >= cap:
        raise Refused(f"{name}_concurrent", f"You already have {cap} {label} waiting or running: wait for one to "
                                            "finish, then try again.", _number("busy_retry_after", 5))
    _check_rate(name, client)
    queue_max = int(_number(f"{name}_queue_max", 0))
    if work is not None and work.waiting is not None and queue_max > 0 and (waiting := work.waiting()) >= queue_max:
        retry = _number(f"{name}_queue_retry_after", 30)  # at most; sooner when the workers' pace says so
        if work.pace is not None and (needed := work.pace(waiting - queue_max + 1)) is not None:
            retry = min(retry, needed)
        raise Refused(f"{name}_queue", f"The server is busy: {waiting} {label} are waiting for a worker. Nothing "
                                       f"was queued; try again in {max(1, math.ceil(retry))} s.", retry, status=503)


def check_socket(name: str, scope: dict) -> None:
    """:func:`check` for a websocket's client (call it off the event loop)."""
    check(name, client_of_socket(scope))


@contextmanager
def admitted(name: str, client: Client, work: Work | None = None):
    """:func:`check`, and for a limit without rows to count (no ``work.unfinished``) the client's requests in
    flight are capped at ``<name>_concurrent`` while the ``with`` block runs."""
    cap = int(_number(f"{name}_concurrent", 0)) if enabled() else 0
    key = None
    if cap > 0 and (work is None or work.unfinished is None):
        key = f"limit:{name}:busy:{client.key}"
        try:
            busy = _incr(key, BUSY_TTL)
        except Exception:  # noqa: BLE001 - the cache is down (its backend's errors share no base class): see hit
            log.warning("abuse limits: the cache is unavailable; %s not capped", name, exc_info=True)
            busy, key = 0, None
        if busy > cap:
            _decr(key)
            raise Refused(f"{name}_concurrent", f"You already have {cap} {LABELS.get(name, name)} in progress: "
                                                "wait for one to finish, then try again.",
                          _number("busy_retry_after", 5))
    try:
        check(name, client, work)
        yield
    finally:
        if key is not None:
            _decr(key)


# --- the API, the pages ---------------------------------------------------------------------------------------

class LimitExceeded(APIException):
    """A :class:`Refused` as DRF's answer: its status, ``Retry-After`` (DRF's handler sets it from ``wait``) and
    the site's error shape."""

    def __init__(self, refused: Refused):
        super().__init__(refused.message, "limited")
        self.status_code = refused.status
        self.wait = refused.retry_after
        self.detail = {"errors": [refused.body()]}


class Limited:
    """Mix into a DRF view (before the view class): requests of ``limited_methods`` count against the limit
    ``limit`` (with ``limit_work`` when rows count its work), checked after authentication and before the handler
    reads the body; in-flight caps are held until the response is final."""

    limit = ""
    limit_work: Work | None = None
    limited_methods = ("POST",)

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method in self.limited_methods:
            stack = ExitStack()
            try:
                stack.enter_context(admitted(self.limit, client_of(request), self.limit_work))
            except Refused as exc:
                raise LimitExceeded(exc) from exc
            self._limit_held = stack

    def finalize_response(self, request, response, *args, **kwargs):
        held, self._limit_held = getattr(self, "_limit_held", None), None
        if held is not None:
            held.close()
        return super().finalize_response(request, response, *args, **kwargs)


def refused(request) -> Refused | None:
    """In a view decorated with :func:`limited`: the refusal of this request (the view then does no work)."""
    return getattr(request, "limit_refused", None)


def limited(name: str, work: Work | None = None):
    """Decorate a page view: a POST counts against the limit ``name``. When it is refused the view still runs,
    with :func:`refused` set (it renders the form from the posted data and does no work); the answer gets the
    refusal's status, ``Retry-After`` and a message saying when to retry."""

    def wrap(view):
        @functools.wraps(view)
        def inner(request, *args, **kwargs):
            if request.method != "POST":
                return view(request, *args, **kwargs)
            try:
                with admitted(name, client_of(request), work):
                    return view(request, *args, **kwargs)
            except Refused as exc:
                request.limit_refused = exc
            messages.error(request, request.limit_refused.message)
            response = view(request, *args, **kwargs)
            response.status_code = request.limit_refused.status
            response["Retry-After"] = str(request.limit_refused.retry_after)
            return response

        return inner

    return wrap
