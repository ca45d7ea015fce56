"""Online draft pods: lobby, seats bound to people, picks under a row lock, timers (the shell).

The pod's truth is the ``Draft`` row: ``state`` holds the pure engine's state (``DraftPod.to_state``)
and every pick is a ``DraftPick`` row. Each change (join, start, pick, time-out) runs in one
transaction that first locks the draft row (``plumbing.live.locked_row``: ``SELECT ... FOR UPDATE`` on
PostgreSQL; a per-pod process lock and the write lock on SQLite), replays the state, applies the
change, lets the bots catch up and writes the new state with the new pick rows. A crash at any point
leaves the previous state; a resent pick (same ``client_pick_id``) is answered from the stored row.
:func:`make_picks` applies several people's picks of one pod in one such transaction, each checked
and answered on its own (the socket server sends the picks that arrived together as one batch).

Replaying is skipped when it can be: each process keeps the pods it replayed in :data:`POD_CACHE`
(a ``plumbing.live.RevisionCache``), keyed by the draft and its ``revision``. Code holding the row lock
takes the pod *out* of the cache, changes it, and puts it back only once its transaction has committed;
a rolled-back transaction never leaves a changed pod behind, and a revision written by another process
(or anything else that bumped it) makes the entry stale, so the state is replayed from the row.

What changed is returned as an :class:`Outcome`: the new private view of each human seat whose pack
or pool changed (not of one that only had another pack queued behind its current one: the status
carries every seat's queue) and the public status. :func:`publish` sends them to the channel layer
after the commit: a seat's view only to that seat's group, the status to the pod's group. The pick
timers an outcome starts are queued by ``drafts.pods.tasks`` (``enqueue_timers``), above this module.
"""
from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Iterable

import numpy as np
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from drafts import services
from drafts.core.cards import DraftError
from drafts.core.pod import DraftPod, PickRecord, simulate
from drafts.core.protocol import SeatKey, public_status, seat_key, seat_view
from drafts.models import Draft, DraftPick, DraftSeat, DrafterProfile
from plumbing import live

log = logging.getLogger(__name__)
ONLINE_BOTS = ("draftsim", "archetype", "neural", "rating", "random")
NAME = re.compile(r"^[\w .'-]{1,40}$")


class PodError(DraftError):
    """A refused action; ``code`` is the HTTP-ish reason: 400 bad input, 403 not yours, 404, 409 conflict."""

    def __init__(self, message: str, code: int = 400):
        super().__init__(message)
        self.code = code


@dataclass
class Outcome:
    draft_id: str
    status: dict
    views: dict[int, dict] = field(default_factory=dict)  # human seat -> its private view
    ack: dict | None = None  # the answer to a pick: {"client_pick_id", "card", "pack_number", "pick_number", "duplicate"}
    timers: list[tuple[int, float]] = field(default_factory=list)  # (seat, deadline epoch) to watch


def pod_group(draft_id) -> str:
    return f"pod-{draft_id}"


def seat_group(draft_id, seat: int) -> str:
    return f"pod-{draft_id}-seat-{seat}"


# --- identity ------------------------------------------------------------------------------------------

def clean_name(name: str) -> str:
    name = " ".join((name or "").split())
    if not NAME.match(name):
        raise PodError("a display name is 1 to 40 letters, digits, spaces or .'-")
    return name


def consent_of(user) -> bool | None:
    if user is None or not user.is_authenticated:
        return None
    profile = DrafterProfile.objects.filter(user=user).first()
    return None if profile is None else profile.consent


def set_consent(user, consent: bool) -> None:
    """Record a signed-up drafter's choice and apply it to all their seats (past drafts included)."""
    DrafterProfile.objects.update_or_create(user=user, defaults={"consent": bool(consent), "decided": timezone.now()})
    DraftSeat.objects.filter(user=user).update(consent=bool(consent))


def consented_seats(code: str = ""):
    """The training data people agreed to share: their own seats of finished online pods."""
    seats = DraftSeat.objects.filter(draft__kind="online", draft__status="complete", drafter="human", consent=True)
    return seats.filter(draft__set_code=code.upper()) if code else seats


def seat_of(draft: Draft, user, session_key: str | None) -> DraftSeat | None:
    """The seat this person holds in the pod: by account when logged in, else by guest session."""
    rows = DraftSeat.objects.filter(draft=draft, drafter="human")
    if user is not None and user.is_authenticated:
        return rows.filter(user=user).first()
    if session_key:
        return rows.filter(user__isnull=True, session_key=session_key).first()
    return None


# --- locking and loading ------------------------------------------------------------------------------

def locked(draft_id):
    """One transaction holding the draft row's lock; yields the Draft (404 PodError when missing)."""
    return live.locked_row(Draft.objects.filter(kind="online"), draft_id, lambda: PodError("no such draft pod", 404))


def load_pod(draft: Draft) -> DraftPod:
    s = services.set_list(draft.set_code)
    return DraftPod.from_state(s, draft.state)


@dataclass(eq=False)
class CachedPod:
    """A replayed pod (cached as of a revision of its draft), with what was worked out for it: the bots'
    suggestions per seat position (a pure function of the seat's pack and pool) and the bot objects of
    the seats."""

    pod: DraftPod
    suggestions: dict = field(default_factory=dict)  # (seat, pack_number, pick_number, pack) -> ranking
    bots: dict = field(default_factory=dict)  # (seat, bot kind) -> bot (never a stateful random bot)
    # (seat, client_pick_id) -> (card, pack_number, pick_number) of every stored pick with an id, read
    # once per replay and extended by each committed pick (only _advance writes them, always bumping
    # the revision, so at this revision it is exactly what the table holds)
    client_picks: dict | None = None
    # the draft's seat rows at this revision: on the pick path only _advance changes them (the pick clocks,
    # always bumping the revision); what changes a seat elsewhere (consent, a seat deleted after the draft)
    # is never read from these, and a join, leave or start bumps the revision
    rows: list | None = None


POD_CACHE = live.RevisionCache(size=64)  # draft id -> CachedPod (see the module docstring)


def _keep(draft: Draft, entry: CachedPod) -> None:
    """Put ``entry`` back in the cache, as of the draft's current revision, once the transaction commits."""
    _prune(entry)
    POD_CACHE.keep(draft.pk, draft.revision, entry)


def _pod_for_update(draft: Draft) -> CachedPod:
    """The draft's pod, under its row lock: the cached one when it is at the draft's revision, else replayed."""
    entry = POD_CACHE.take(draft.pk, draft.revision)
    return entry if entry is not None else CachedPod(load_pod(draft))


def _seat_rows(draft: Draft, entry: CachedPod | None) -> list[DraftSeat]:
    """The draft's seat rows: the cached entry's, else read (and kept with the entry)."""
    if entry is not None and entry.rows is not None:
        return entry.rows
    rows = list(draft.seat_set.all())
    if entry is not None:
        entry.rows = rows
    return rows


def _prune(entry: CachedPod) -> None:
    """Forget suggestions for positions the seats have left (the memo stays as small as the pod)."""
    pod = entry.pod
    if len(entry.suggestions) > 2 * pod.seats:
        entry.suggestions = {k: v for k, v in entry.suggestions.items()
                             if k[1] == pod.pack_number and k[2] >= pod.pick_number(k[0])}


def _bot(draft: Draft, pod: DraftPod, seat: int, kind: str, entry: CachedPod | None = None):
    key = (seat, kind)
    if entry is not None and key in entry.bots:
        return entry.bots[key]
    bot = services.get_bot(kind, pod.set_list, seed=(draft.seed or 0) + seat)[0]
    if entry is not None and kind != "random":  # a random bot's generator moves on; a fresh one per call
        entry.bots[key] = bot
    return bot


def _bots(draft: Draft, pod: DraftPod, seats: Iterable[DraftSeat], entry: CachedPod | None = None) -> dict:
    return {row.seat: _bot(draft, pod, row.seat, row.drafter, entry) for row in seats if row.drafter != "human"}


def suggestions_for(draft: Draft, pod: DraftPod, seat: int, entry: CachedPod | None = None):
    """The pod's bot's ranking of ``seat``'s current pack (None without a pack). With ``entry`` it is
    worked out once per seat position: a seat's pack and pool, hence its ranking, only change when it
    picks or its round ends."""
    pack = pod.current_pack(seat)
    if pack is None:
        return None
    key = (seat, pod.pack_number, pod.pick_number(seat), tuple(pack))
    if entry is not None and key in entry.suggestions:
        return entry.suggestions[key]
    try:
        ranking = _bot(draft, pod, seat, draft.bot_kind, entry).pick(pack, pod.pool(seat), pod.context(seat))
    except DraftError:
        ranking = None
    if entry is not None:
        entry.suggestions[key] = ranking
    return ranking


def _epoch(value) -> float | None:
    return None if value is None else value.timestamp()


def status_of(draft: Draft, pod: DraftPod | None, seats: list[DraftSeat]) -> dict:
    rows = {s.seat: s for s in seats}
    connected = connected_seats(draft.pk)
    out = []
    for n in range(draft.seats):
        row = rows.get(n)
        if row is None:
            out.append({"seat": n, "name": "", "kind": "open"})
        elif row.drafter == "human":
            out.append({"seat": n, "name": row.display_name, "kind": "human", "connected": n in connected})
        else:
            out.append({"seat": n, "name": f"{row.drafter} bot", "kind": "bot", "connected": True})
    body = public_status(pod, out, draft.status, draft.host_seat)
    body.update(set=draft.set_code, timer=draft.pick_timer, bot=draft.bot_kind, id=str(draft.pk))
    return body


def view_of(draft: Draft, pod: DraftPod | None, row: DraftSeat, entry: CachedPod | None = None) -> dict:
    """The private view of a human seat (lobby: just the seat number)."""
    if pod is None:
        return {"v": 1, "type": "seat", "seat": row.seat, "complete": False, "pack": None, "pool": [],
                "lobby": True}
    view = seat_view(pod, row.seat, deadline=_epoch(row.deadline),
                     suggestions=suggestions_for(draft, pod, row.seat, entry),
                     sim_ratings=services.sim_ratings(draft.set_code))
    view["deck_url"] = f"/drafts/{draft.pk}/seats/{row.seat}/build/" if pod.is_complete else None
    return view


# --- lobby -------------------------------------------------------------------------------------------

def create_pod(set_code: str, seats: int, bot_kind: str, pick_timer: int, display_name: str, user=None,
               session_key: str | None = None, consent: bool | None = None, seed: int | None = None,
               packs: int = 3) -> tuple[Draft, DraftSeat]:
    """Open a pod in the lobby state with its creator (the host) in seat 0."""
    s = services.set_list(set_code)  # DraftError for an unknown set
    if not isinstance(seats, int) or not 2 <= seats <= 8:
        raise PodError("a pod has 2 to 8 seats")
    if bot_kind not in ONLINE_BOTS:
        raise PodError(f"unknown bot {bot_kind!r}; choose one of {', '.join(ONLINE_BOTS)}")
    services.get_bot(bot_kind, s)  # refuses a bot that has no trained version for this set
    if pick_timer not in dict(Draft.TIMERS):
        raise PodError("the pick timer is off (0) or 30, 45, 60, 90 or 120 seconds")
    if not (user is not None and user.is_authenticated) and not session_key:
        raise PodError("a guest needs a session (enable cookies)", 403)
    name = clean_name(display_name)
    seed = int(np.random.default_rng().integers(0, 2**31)) if seed is None else int(seed)
    with transaction.atomic():
        draft = Draft.objects.create(set_code=s.code, kind="online", status="open", seats=seats, packs=packs,
                                     seed=seed, bot_kind=bot_kind, pick_timer=pick_timer, host_seat=0,
                                     event_type="ManaforgeDraft",
                                     owner=user if user is not None and user.is_authenticated else None)
        row = _add_human(draft, 0, name, user, session_key, consent)
    return draft, row


def _add_human(draft, seat, name, user, session_key, consent) -> DraftSeat:
    signed_in = user is not None and user.is_authenticated
    if signed_in and consent is None:
        consent = consent_of(user)
    return DraftSeat.objects.create(draft=draft, seat=seat, drafter="human", log_id=services.new_log_id(),
                                    user=user if signed_in else None,
                                    session_key="" if signed_in else (session_key or ""),
                                    display_name=name, consent=consent)


def join_pod(draft_id, display_name: str, user=None, session_key: str | None = None,
             consent: bool | None = None) -> tuple[DraftSeat, Outcome]:
    """Take the lowest free seat of a pod in the lobby (joining twice returns the same seat)."""
    with locked(draft_id) as draft:
        existing = seat_of(draft, user, session_key)
        if existing is not None:
            return existing, _status_outcome(draft)
        if draft.status != "open":
            raise PodError("this draft has started; you can only watch it", 409)
        if not (user is not None and user.is_authenticated) and not session_key:
            raise PodError("a guest needs a session (enable cookies)", 403)
        name = clean_name(display_name)
        taken = set(draft.seat_set.values_list("seat", flat=True))
        free = [n for n in range(draft.seats) if n not in taken]
        if not free:
            raise PodError("the pod is full", 409)
        row = _add_human(draft, free[0], name, user, session_key, consent)
        draft.revision += 1
        draft.save(update_fields=["revision"])
        return row, _status_outcome(draft)


def leave_pod(draft_id, user=None, session_key: str | None = None) -> Outcome:
    """Give up a seat while the pod is still in the lobby (the host cannot leave: they cancel)."""
    with locked(draft_id) as draft:
        row = seat_of(draft, user, session_key)
        if row is None:
            raise PodError("you have no seat in this pod", 403)
        if draft.status != "open":
            raise PodError("the draft has started; seats are fixed now", 409)
        if row.seat == draft.host_seat:
            raise PodError("the host cannot leave; start the draft or let it lapse", 409)
        row.delete()
        draft.revision += 1
        draft.save(update_fields=["revision"])
        return _status_outcome(draft)


def _status_outcome(draft: Draft) -> Outcome:
    pod = load_pod(draft) if draft.state else None
    return Outcome(str(draft.pk), status_of(draft, pod, list(draft.seat_set.all())))


def start_pod(draft_id, user=None, session_key: str | None = None) -> Outcome:
    """The host starts: bots take the empty seats, every seat opens its first pack, bots pick."""
    with locked(draft_id) as draft:
        row = seat_of(draft, user, session_key)
        if row is None or row.seat != draft.host_seat:
            raise PodError("only the host can start the draft", 403)
        if draft.status != "open":
            raise PodError("the draft has already started", 409)
        s = services.set_list(draft.set_code)
        taken = set(draft.seat_set.values_list("seat", flat=True))
        version = services.get_bot(draft.bot_kind, s)[1]
        for n in range(draft.seats):
            if n not in taken:
                DraftSeat.objects.create(draft=draft, seat=n, drafter=draft.bot_kind, bot_version=version,
                                         log_id=services.new_log_id(), display_name=f"{draft.bot_kind} bot")
        pod = DraftPod(s, seats=draft.seats, packs=draft.packs, seed=draft.seed)
        draft.status = "drafting"
        draft.started = timezone.now()
        draft.picks_per_pack = pod.picks_per_pack
        entry = CachedPod(pod)
        out = _advance(draft, entry, _seat_rows(draft, entry), before={}, records=[])
        _keep(draft, entry)
        return out


@dataclass(frozen=True)
class PickRequest:
    """One person's pick as their client sent it (numbers 0-based)."""

    seat: int
    card: str
    pack_number: int
    pick_number: int
    client_pick_id: str | None = None


def make_pick(draft_id, seat: int, card: str, pack_number: int, pick_number: int, client_pick_id: str,
              now=None) -> Outcome:
    """Apply one person's pick (validated against the stored state) and let the bots catch up."""
    results, out = make_picks(draft_id, [PickRequest(seat, card, pack_number, pick_number, client_pick_id)], now=now)
    if isinstance(results[0], PodError):
        raise results[0]
    out.ack = results[0]
    return out


def make_picks(draft_id, requests: list[PickRequest], now=None) -> tuple[list, Outcome]:
    """Apply several people's picks in one transaction under the row lock, in the order given, then let
    the bots catch up: what a socket server does with the picks of a pod that arrived together.

    Returns one result per request, an ack ``{"client_pick_id", "card", "pack_number", "pick_number",
    "duplicate"}`` or the :class:`PodError` that refused it (a refused pick changes nothing), and the
    :class:`Outcome` of them all: the new view of every person's seat that changed (and of a seat whose
    pick was a resend), and the status. Each pick is checked as :func:`make_pick` checks it: a
    ``client_pick_id`` already stored (or used earlier in the same batch) is answered from that pick."""
    results: list = []
    with locked(draft_id) as draft:
        entry = _pod_for_update(draft) if draft.state else None
        rows = _seat_rows(draft, entry)  # with a warm cache: no query
        humans = {r.seat: r for r in rows if r.drafter == "human"}
        done = _client_picks(draft, entry, humans)  # (seat, client_pick_id) -> (card, pack_number, pick_number)
        before = None
        records, client_pick_ids, resent = [], {}, set()
        for req in requests:
            if req.seat not in humans:
                results.append(PodError(f"seat {req.seat} is not a person's seat in this pod", 403))
                continue
            key = (req.seat, req.client_pick_id)
            if req.client_pick_id and key in done:  # a resend (reconnect, double click): answer with what was stored
                card, pack_number, pick_number = done[key]
                results.append({"client_pick_id": req.client_pick_id, "card": card, "pack_number": pack_number,
                                "pick_number": pick_number, "duplicate": True})
                resent.add(req.seat)
                continue
            if draft.status != "drafting":
                results.append(PodError("the draft has not started" if draft.status == "open"
                                        else "the draft is complete", 409))
                continue
            if before is None:
                before = {s: seat_key(entry.pod, s) for s in humans}
            try:
                record = entry.pod.pick(req.seat, req.card, pack_number=req.pack_number, pick_number=req.pick_number)
            except DraftError as exc:  # refused before anything changed (DraftPod.pick checks first)
                results.append(PodError(str(exc), 409))
                continue
            records.append(record)
            client_pick_ids[id(record)] = req.client_pick_id
            if req.client_pick_id:
                done[key] = (record.pick, record.pack_number, record.pick_number)
            results.append({"client_pick_id": req.client_pick_id, "card": record.pick,
                            "pack_number": record.pack_number, "pick_number": record.pick_number,
                            "duplicate": False})
        if records:
            out = _advance(draft, entry, rows, before, records, client_pick_ids=client_pick_ids, now=now)
        else:
            out = Outcome(str(draft.pk), status_of(draft, entry.pod if entry else None, rows) if resent else {})
        pod = entry.pod if entry is not None else None
        for seat in resent - set(out.views):
            out.views[seat] = view_of(draft, pod, humans[seat], entry)
        if entry is not None:
            _keep(draft, entry)
    return results, out


def _client_picks(draft: Draft, entry: CachedPod | None, humans: dict) -> dict:
    """The stored picks that have a client id, by (seat, id): the cached map, else read (and cached)."""
    if entry is not None and entry.client_picks is not None:
        return entry.client_picks
    by_pk = {r.pk: r.seat for r in humans.values()}
    stored = DraftPick.objects.filter(seat__in=list(humans.values()), client_pick_id__isnull=False)
    found = {(by_pk[seat_pk], cid): (card, pack_number, pick_number) for seat_pk, cid, card, pack_number, pick_number
             in stored.values_list("seat_id", "client_pick_id", "pick", "pack_number", "pick_number")}
    if entry is not None:
        entry.client_picks = found
    return found


def expire_overdue(draft_id, now=None) -> Outcome | None:
    """Take the suggested card for every person whose pick timer ran out. None when nothing was due."""
    now = now or timezone.now()
    with locked(draft_id) as draft:
        if draft.status != "drafting" or not draft.pick_timer:
            return None
        rows = list(draft.seat_set.all())
        due = [r for r in rows if r.drafter == "human" and r.deadline is not None and r.deadline <= now]
        if not due:
            return None
        entry = _pod_for_update(draft)
        entry.rows = rows  # read just now, under the lock: the ones _advance changes and the cache keeps
        pod = entry.pod
        before = {r.seat: seat_key(pod, r.seat) for r in rows if r.drafter == "human"}
        records = []
        for r in due:
            if pod.current_pack(r.seat) is None:
                continue
            ranking = suggestions_for(draft, pod, r.seat, entry) or [(pod.current_pack(r.seat)[0], 0.0)]
            records.append(pod.pick(r.seat, ranking[0][0], scores=ranking))
        if not records:
            _keep(draft, entry)
            return None
        out = _advance(draft, entry, rows, before, records, timed_out={id(r) for r in records}, now=now)
        _keep(draft, entry)
        return out


def _position(key: SeatKey) -> tuple:
    """A seat key without the count of packs queued behind the current one: changes exactly when the
    seat's current pack changes (a new pack reaches it, it picked, the round or the draft ended)."""
    return key.complete, key.pack_number, key.pick_number, key.pack


def _advance(draft: Draft, entry: CachedPod, rows: list[DraftSeat], before: dict, records: list[PickRecord],
             client_pick_ids: dict | None = None, timed_out: set | None = None, now=None) -> Outcome:
    """Bots catch up; store the picks, the state, the seats' timers; build the decks when complete.

    A person's seat is sent a new view, and its pick clock (``pack_since``, ``deadline``) restarts,
    when its current pack changed (it picked, a pack reached it, the round or the draft ended); not
    when another pack was only queued behind the one it holds: every status carries that count."""
    now = now or timezone.now()
    pod = entry.pod
    records = list(records)
    simulate(pod, _bots(draft, pod, rows, entry), on_pick=records.append)
    by_seat = {r.seat: r for r in rows}
    client_pick_ids, timed_out = client_pick_ids or {}, timed_out or set()
    picks, seen = [], set()
    for r in records:
        row = by_seat[r.seat]
        elapsed = None
        if row.drafter == "human":  # a second pick of a seat in one batch had its pack from the first
            elapsed = 0 if r.seat in seen else _elapsed_ms(row, now)
            seen.add(r.seat)
        picks.append(DraftPick(seat=row, pack_number=r.pack_number, pick_number=r.pick_number, pack=list(r.pack),
                               pool=list(r.pool), pick=r.pick, picked_at=now, client_pick_id=client_pick_ids.get(id(r)),
                               scores=[[n, round(float(v), 5)] for n, v in r.scores] if r.scores else None,
                               timed_out=id(r) in timed_out, elapsed_ms=elapsed))
    DraftPick.objects.bulk_create(picks)
    draft.state = pod.to_state()
    draft.revision += 1
    if pod.is_complete:
        draft.status = "complete"
    draft.save(update_fields=["state", "revision", "status", "started", "picks_per_pack"])
    out = Outcome(str(draft.pk), {})
    clocks: dict[tuple, list[int]] = {}  # (pack_since, deadline) -> seat row ids
    for r in rows:
        if r.drafter != "human":
            continue
        key = seat_key(pod, r.seat)
        old = before.get(r.seat)
        if old is not None and _position(old) == _position(key):
            continue
        has_pack = key.pack is not None
        r.pack_since = now if has_pack else None
        r.deadline = now + timedelta(seconds=draft.pick_timer) if has_pack and draft.pick_timer else None
        clocks.setdefault((r.pack_since, r.deadline), []).append(r.pk)
        if r.deadline is not None:
            out.timers.append((r.seat, r.deadline.timestamp()))
        out.views[r.seat] = view_of(draft, pod, r, entry)
    for (pack_since, deadline), ids in clocks.items():  # one UPDATE per distinct clock, not one per seat
        DraftSeat.objects.filter(pk__in=ids).update(pack_since=pack_since, deadline=deadline)
    if pod.is_complete:
        s = pod.set_list
        for r in rows:
            if r.drafter != "human":
                services.build_seat_deck(r, pod.pool(r.seat), s)
    out.status = status_of(draft, pod, rows)
    return out


def _elapsed_ms(row: DraftSeat, now) -> int | None:
    if row.pack_since is None:
        return None
    return max(0, int((now - row.pack_since).total_seconds() * 1000))


def snapshot(draft_id, seat: int | None) -> tuple[dict, dict | None]:
    """(public status, private view of ``seat`` or None): what a (re)connecting socket is sent."""
    draft = Draft.objects.filter(pk=draft_id, kind="online").first()
    if draft is None:
        raise PodError("no such draft pod", 404)
    rows = list(draft.seat_set.all())
    pod = load_pod(draft) if draft.state else None
    view = None
    if seat is not None:
        row = next((r for r in rows if r.seat == seat), None)
        view = None if row is None else view_of(draft, pod, row)
    return status_of(draft, pod, rows), view


# --- presence (who has a socket open), in the cache ---------------------------------------------------

PRESENCE_TTL = 90


def _presence_key(draft_id, seat):
    return f"pod:{draft_id}:present:{seat}"


def mark_present(draft_id, seat: int, present: bool, token: str = "") -> None:
    """Mark a seat connected (``token``: the socket's channel name) or gone. A socket only clears
    its own mark, so an old socket closing after its reconnected successor marked the seat does
    not show the seat as away."""
    key = _presence_key(draft_id, seat)
    if present:
        cache.set(key, token or "1", PRESENCE_TTL)
    elif not token or cache.get(key) in (token, None):
        cache.delete(key)


def connected_seats(draft_id) -> set[int]:
    found = cache.get_many([_presence_key(draft_id, n) for n in range(8)])
    return {n for n in range(8) if _presence_key(draft_id, n) in found}


# --- publishing --------------------------------------------------------------------------------------

async def publish(layer, outcome: Outcome | None) -> None:
    """Send each changed seat its own view (to its private group) and everyone the public status.

    The messages go to different groups, so they are sent together rather than one after another
    (each ``group_send`` is several round trips to Redis on the services stack)."""
    if layer is None or outcome is None:
        return
    sends = [layer.group_send(seat_group(outcome.draft_id, seat), {"type": "pod.seat", "view": view})
             for seat, view in outcome.views.items()]
    if outcome.status:
        sends.append(layer.group_send(pod_group(outcome.draft_id), {"type": "pod.status", "status": outcome.status}))
    await asyncio.gather(*sends)


def publish_sync(outcome: Outcome | None) -> None:
    live.publish_sync(publish, outcome)


def running_pods() -> list:
    """The ids of the running pods that have a pick timer."""
    return list(Draft.objects.filter(kind="online", status="drafting", pick_timer__gt=0).values_list("pk", flat=True))


def pending_deadlines() -> list[tuple]:
    """(draft id, deadline epoch) of every person's running pick clock."""
    return [(draft_id, deadline.timestamp()) for draft_id, deadline in DraftSeat.objects.filter(
        draft__kind="online", draft__status="drafting", deadline__isnull=False).values_list("draft_id", "deadline")]
