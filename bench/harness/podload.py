"""The online pod clients of the load benchmarks (bench/pods.py, bench/scale.py): pods of guests created in
the database, one websocket client per seat in one asyncio process, the latencies they see, and the check of
the database against what every client sent and was told (:func:`check_db`). :func:`load_run` drafts N pods
at once against one or several Daphne processes."""
from __future__ import annotations

import asyncio
import collections
import json
import os
import random
import time
import uuid
from dataclasses import dataclass, field

from bench.harness.processes import Proc, cpu_seconds

SEATS, PACKS, PICKS = 8, 3, 14
PER_SEAT = PACKS * PICKS  # 42
THRESHOLD_MS = 200.0


def guest_session() -> str:
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    store["guest"] = True
    store.create()
    return store.session_key


def make_pods(n: int, bot: str, timer: int, label: str, first: int = 0) -> list["Pod"]:
    """N pods of 8 guests in the lobby (indexes and seeds from ``first`` on)."""
    from drafts.pods import service

    pods = []
    for i in range(first, first + n):
        keys = [guest_session() for _ in range(SEATS)]
        draft, row = service.create_pod("TST", SEATS, bot, timer, f"{label} {i} s0", session_key=keys[0], seed=1000 + i)
        assert row.seat == 0
        for s in range(1, SEATS):
            row, _ = service.join_pod(draft.pk, f"{label} {i} s{s}", session_key=keys[s])
            assert row.seat == s, (row.seat, s)
        pods.append(Pod(index=i, draft_id=str(draft.pk), keys=keys))
    return pods


def check_db(pods: list["Pod"], partial: bool = False) -> dict:
    """Compare the DraftPick rows (and the stored pod state) with what every client sent and was told.
    ``partial``: the drafts were stopped midway (a time window, bench/harness/pace.py): every seat must hold
    exactly the picks its client was acknowledged (none short, none over what it sent), not all 42."""
    from django.db.models import Count

    from drafts.models import Draft, DraftPick

    out = collections.Counter()
    problems: list[str] = []
    for pod in pods:
        draft = Draft.objects.get(pk=pod.draft_id)
        if draft.status != "complete" and not partial:
            problems.append(f"pod {pod.index}: status {draft.status}")
            out["pods_not_complete"] += 1
        state_picks = collections.defaultdict(list)
        for seat, card, _ in (draft.state or {}).get("picks", []):
            state_picks[seat].append(card)
        rows = list(DraftPick.objects.filter(seat__draft_id=pod.draft_id).select_related("seat"))
        out["rows"] += len(rows)
        dup_slots = (DraftPick.objects.filter(seat__draft_id=pod.draft_id).values("seat", "pack_number", "pick_number")
                     .annotate(n=Count("id")).filter(n__gt=1).count())
        dup_ids = (DraftPick.objects.filter(seat__draft_id=pod.draft_id, client_pick_id__isnull=False)
                   .values("seat", "client_pick_id").annotate(n=Count("id")).filter(n__gt=1).count())
        out["duplicate_slots"] += dup_slots
        out["duplicate_client_pick_ids"] += dup_ids
        by_seat = collections.defaultdict(list)
        for r in rows:
            by_seat[r.seat.seat].append(r)
        for client in pod.clients:
            mine = by_seat.get(client.seat, [])
            low, high = (len(client.acked), len(client.sent)) if partial else (PER_SEAT, PER_SEAT)
            if not low <= len(mine) <= high:
                problems.append(f"pod {pod.index} seat {client.seat}: {len(mine)} rows")
            out["seats_short"] += len(mine) < low
            out["seats_over"] += len(mine) > high
            out["timed_out_rows"] += sum(r.timed_out for r in mine)
            if sorted(r.pick for r in mine) != sorted(state_picks.get(client.seat, [])):
                out["rows_differ_from_state"] += 1
                problems.append(f"pod {pod.index} seat {client.seat}: rows differ from the stored state")
            by_id = collections.defaultdict(list)
            for r in mine:
                by_id[r.client_pick_id].append(r)
            sent_ids = {p.cid for p in client.sent.values()}
            out["rows_unknown_client_id"] += sum(len(v) for k, v in by_id.items() if k not in sent_ids)
            for cid, ack in client.acked.items():
                found = by_id.get(cid, [])
                if not found:
                    out["acked_not_in_db"] += 1
                    problems.append(f"pod {pod.index} seat {client.seat}: acked {cid} missing")
                elif (found[0].pick, found[0].pack_number, found[0].pick_number) != \
                        (ack["card"], ack["pack_number"], ack["pick_number"]):
                    out["acked_differs_from_db"] += 1
                    problems.append(f"pod {pod.index} seat {client.seat}: ack {cid} {ack} != row "
                                    f"{found[0].pick} {found[0].pack_number}/{found[0].pick_number}")
            # every card this client chose is stored exactly once under its pick id
            for p in client.sent.values():
                n = len(by_id.get(p.cid, []))
                out["client_picks_recorded_twice"] += n > 1
                if n == 1 and by_id[p.cid][0].pick != p.card:
                    out["recorded_card_differs"] += 1
            out["sent_never_acked"] += sum(1 for p in client.sent.values() if p.cid not in client.acked)
            if partial:  # a pick sent but never answered must at least be stored (else it was lost)
                out["unanswered_not_in_db"] += sum(1 for p in client.sent.values()
                                                   if p.cid not in client.acked and not by_id.get(p.cid))
            pool = client.final_pool
            if pool is not None and sorted(pool) != sorted(r.pick for r in mine):
                out["final_pool_differs_from_db"] += 1
                problems.append(f"pod {pod.index} seat {client.seat}: final pool differs from the rows")
    lost = out["acked_not_in_db"] + out["seats_short"] + out["unanswered_not_in_db"]
    dup = (out["duplicate_slots"] + out["duplicate_client_pick_ids"] + out["client_picks_recorded_twice"]
           + out["seats_over"])
    return {"lost_picks": lost, "duplicated_picks": dup, "ok": lost == 0 and dup == 0 and not problems,
            **{k: int(v) for k, v in sorted(out.items())}, "problems": problems[:20]}


# --- clients ---------------------------------------------------------------------------------------------

@dataclass
class Sent:
    cid: str
    card: str
    pack_number: int
    pick_number: int
    msg: dict
    t0: float  # first send
    t_sent: float  # last (re)send


@dataclass
class Client:
    pod: "Pod"
    seat: int
    key: str
    ws: object = None
    view: dict | None = None
    sent: dict = field(default_factory=dict)      # (pack, pick) -> Sent
    pending: dict = field(default_factory=dict)   # cid -> Sent (not acknowledged yet)
    acked: dict = field(default_factory=dict)     # cid -> ack message
    complete: bool = False
    final_pool: list | None = None
    connections: int = 0
    last_msg: float = 0.0
    lost_at: float | None = None  # when the socket dropped (None while connected)
    recovered: list = field(default_factory=list)  # seconds from a drop to the first view after reconnecting
    first_view: asyncio.Event = field(default_factory=asyncio.Event)
    picking: bool = False
    own_t0: float | None = None  # when it sent the pick its next view answers (paced runs)
    drop_after_send: bool = False  # fault: abort the socket right after the next pick is sent
    dropped: int = 0


@dataclass
class Pod:
    index: int
    draft_id: str
    keys: list[str]
    clients: list[Client] = field(default_factory=list)
    started: bool = False
    t_start: float | None = None
    t_done: float | None = None
    status: dict | None = None  # the latest public status (packs waiting per seat)


class Run:
    """One batch of pods drafting at once: the clients, the expectations, the measurements."""

    def __init__(self, pods: list[Pod], port: int | list[int], think: tuple[float, float] = (0.0, 0.0), seed: int = 0,
                 by_pod: bool = False):
        # several ports (bench/scale.py): each pod on one Daphne process in turn (by_pod, as a load balancer keyed
        # on the pod's URL would), else the seats of every pod split over the processes
        self.ports = [port] if isinstance(port, int) else list(port)
        self.by_pod = by_pod
        self.pods, self.think = pods, think
        self.rng = random.Random(seed)
        self.expect: dict = {}  # (pod, seat, pack_number, sorted pack) -> (t0, direct)
        self.next_pack: list[float] = []
        self.next_pack_direct: list[float] = []
        self.ack: list[float] = []
        self.ack_times: list[float] = []  # when each first ack arrived (for the timeline)
        self.errors: list[dict] = []
        self.counts = collections.Counter()
        self.stop = False
        self.closing = False  # no new picks (a paced run's end: what was sent is still answered)
        self.stall_s = 5.0  # the watchdog's silence before a sync
        self.timeline: list | None = None  # (time, "next_pack" | "own_next" | "ack", ms) when a paced run keeps one
        for pod in pods:
            pod.clients = [Client(pod, s, pod.keys[s]) for s in range(SEATS)]

    def url(self, c: Client) -> str:
        port = self.ports[c.pod.index % len(self.ports) if self.by_pod else c.seat * len(self.ports) // SEATS]
        return f"ws://127.0.0.1:{port}/ws/pods/{c.pod.draft_id}/"

    @property
    def clients(self):
        return [c for p in self.pods for c in p.clients]

    def acked_total(self) -> int:
        return sum(len(c.acked) for c in self.clients)

    def pending_total(self) -> int:
        return sum(len(c.pending) for c in self.clients)

    async def main(self, timeout: float, controller=None) -> float:
        tasks = [asyncio.ensure_future(self.client(c)) for c in self.clients]
        tasks += [asyncio.ensure_future(self.starter(p)) for p in self.pods]
        watch = asyncio.ensure_future(self.watchdog())
        ctl = asyncio.ensure_future(controller(self)) if controller else None
        t = time.perf_counter()
        try:
            done, pending = await asyncio.wait(tasks, timeout=timeout)
            if pending:
                self.counts["timed_out_run"] = 1
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
            for task in done:
                if task.exception() is not None:
                    raise task.exception()
            if ctl is not None:
                await ctl
        finally:
            self.stop = True
            watch.cancel()
            if ctl is not None and not ctl.done():
                ctl.cancel()
        return time.perf_counter() - t

    async def starter(self, pod: Pod) -> None:
        """The host (seat 0) starts once all 8 seats have their first (lobby) view."""
        await asyncio.gather(*(c.first_view.wait() for c in pod.clients))
        host = pod.clients[0]
        while host.ws is None:
            await asyncio.sleep(0.01)
        pod.t_start = time.perf_counter()
        await host.ws.send(json.dumps({"v": 1, "action": "start"}))

    async def watchdog(self) -> None:
        """A connected client that hears nothing for 5 s asks for a sync (counted: a lost message)."""
        while not self.stop:
            await asyncio.sleep(1.0)
            now = time.perf_counter()
            for c in self.clients:
                if c.ws is not None and not c.complete and c.pod.started and now - c.last_msg > self.stall_s:
                    self.counts["stall_syncs"] += 1
                    c.last_msg = now
                    try:
                        await c.ws.send(json.dumps({"v": 1, "action": "sync"}))
                    except Exception:
                        pass

    async def client(self, c: Client) -> None:
        import websockets

        backoff = 0.05
        while not c.complete and not self.stop:
            try:
                async with websockets.connect(self.url(c), origin="http://127.0.0.1", open_timeout=5,
                                              additional_headers={"Cookie": f"sessionid={c.key}"},
                                              max_size=None, compression=None) as ws:
                    c.connections += 1
                    again = c.connections > 1
                    if again:
                        self.counts["reconnects"] += 1
                    c.ws = ws
                    c.last_msg = time.perf_counter()
                    backoff = 0.05
                    for p in list(c.pending.values()):  # resend what was never acknowledged, same id
                        p.t_sent = time.perf_counter()
                        await ws.send(json.dumps(p.msg))
                        self.counts["resent_picks"] += 1
                    if again:
                        await ws.send(json.dumps({"v": 1, "action": "sync"}))
                    async for raw in ws:
                        self.handle(c, json.loads(raw))
                        if c.complete:
                            break
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # refused, reset, closed: reconnect with backoff
                self.counts[f"connect_error:{type(exc).__name__}"] += 1
            finally:
                c.ws = None
            if c.complete or self.stop:
                break
            if c.lost_at is None:
                c.lost_at = time.perf_counter()
            await asyncio.sleep(backoff * (0.5 + self.rng.random()))
            backoff = min(backoff * 2, 1.0)

    def handle(self, c: Client, msg: dict) -> None:
        now = time.perf_counter()
        c.last_msg = now
        kind = msg.get("type")
        if kind == "seat":
            self.on_view(c, msg, now)
        elif kind == "picked":
            p = c.pending.pop(msg.get("client_pick_id"), None)
            cid = msg.get("client_pick_id")
            if cid not in c.acked:
                c.acked[cid] = msg
                self.ack_times.append(now)
                sent = next((s for s in c.sent.values() if s.cid == cid), None)
                if sent is not None and p is not None:
                    self.ack.append((now - p.t_sent) * 1000)
                    self.sample("ack", now, self.ack[-1])
                if sent is None or sent.card != msg.get("card"):
                    self.counts["ack_card_mismatch"] += 1
            if msg.get("duplicate"):
                self.counts["duplicate_acks"] += 1
        elif kind == "error":
            self.errors.append(msg)
            cid = msg.get("client_pick_id")
            if cid in c.pending:  # refused: forget it so the seat can pick again from the fresh view
                p = c.pending.pop(cid)
                c.sent.pop((p.pack_number, p.pick_number), None)
        elif kind == "status":
            c.pod.status = msg
            if msg.get("status") in ("drafting", "complete"):
                c.pod.started = True

    def on_view(self, c: Client, view: dict, now: float) -> None:
        if c.lost_at is not None:
            c.recovered.append(now - c.lost_at)
            c.lost_at = None
        c.view = view
        c.first_view.set()
        if view.get("complete"):
            c.complete = True
            c.final_pool = [x["name"] for x in view.get("pool") or []]
            if all(x.complete for x in c.pod.clients):
                c.pod.t_done = now
            return
        pack = view.get("pack")
        if not pack:
            c.own_t0 = None  # waiting for a pack: its arrival is the neighbour's pass, timed as next_pack
            return
        c.pod.started = True
        names = tuple(sorted(x["name"] for x in pack))
        hit = self.expect.pop((c.pod.index, c.seat, view["pack_number"], names), None)
        if hit is not None:
            t0, direct = hit
            self.next_pack.append((now - t0) * 1000)
            if direct:
                self.next_pack_direct.append((now - t0) * 1000)
                self.sample("next_pack", now, self.next_pack_direct[-1])
        slot = (view["pack_number"], view["pick_number"])
        if c.own_t0 is not None and slot not in c.sent:  # the picker's own next pack, queued for it already
            self.sample("own_next", now, (now - c.own_t0) * 1000)
            c.own_t0 = None
        if slot in c.sent or c.picking:
            return
        delay = self.delay(c, view)
        if delay > 0:
            c.picking = True
            asyncio.ensure_future(self.pick_later(c, view, delay))
        else:
            asyncio.ensure_future(self.pick(c, view))

    def delay(self, c: Client, view: dict) -> float:
        """Seconds the seat thinks before picking from ``view`` (0: at once)."""
        return self.rng.uniform(*self.think) if self.think[1] > 0 else 0.0

    def sample(self, kind: str, now: float, ms: float) -> None:
        if self.timeline is not None:
            self.timeline.append((now, kind, ms))

    async def pick_later(self, c: Client, view: dict, delay: float) -> None:
        await asyncio.sleep(delay)
        c.picking = False
        if self.closing or self.stop:
            return
        latest = c.view or view
        if latest.get("pack") and (latest["pack_number"], latest["pick_number"]) not in c.sent:
            await self.pick(c, latest)

    async def pick(self, c: Client, view: dict) -> None:
        slot = (view["pack_number"], view["pick_number"])
        if slot in c.sent:
            return
        names = [x["name"] for x in view["pack"]]
        card = self.rng.choice(names)
        cid = f"s{c.seat}-{slot[0]}-{slot[1]}-{uuid.uuid4().hex[:8]}"
        msg = {"v": 1, "action": "pick", "card": card, "pack_number": slot[0], "pick_number": slot[1],
               "client_pick_id": cid}
        rest = list(names)
        rest.remove(card)
        if rest:
            step = 1 if slot[0] % 2 == 0 else -1
            nb = c.pod.clients[(c.seat + step) % SEATS]
            nv = nb.view
            # "direct": the neighbour has no pick of its own in flight and nothing else to pick first, so
            # the pack can be shown as soon as the server delivers it (packs queued: from the status, as
            # a seat's view is only re-sent when its own pack changes)
            seats = (c.pod.status or {}).get("seats") or []
            waiting = seats[nb.seat].get("packs_waiting") if len(seats) > nb.seat else None
            waiting = nv.get("packs_waiting", 1) if waiting is None and nv else waiting
            direct = not nb.pending and (nv is None or not nv.get("pack") or
                                         ((waiting or 1) <= 1 and (nv["pack_number"], nv["pick_number"]) in nb.sent))
            key = (c.pod.index, nb.seat, slot[0], tuple(sorted(rest)))
            if key in self.expect:
                self.counts["expectation_collisions"] += 1
        now = time.perf_counter()
        p = Sent(cid, card, slot[0], slot[1], msg, now, now)
        c.own_t0 = now if self.timeline is not None else None  # its next view: the next pack or "waiting"
        c.sent[slot] = p
        c.pending[cid] = p
        if rest:
            self.expect[key] = (now, direct)
        ws = c.ws
        if ws is None:
            return  # sent on reconnect
        try:
            await ws.send(json.dumps(msg))
        except Exception:
            self.counts["send_failed"] += 1  # resent on reconnect
            return
        if c.drop_after_send:  # the network drops before the ack can come back
            c.drop_after_send = False
            c.dropped += 1
            self.counts["dropped_after_send"] += 1
            ws.transport.abort()


def online_connected(draft_id: str) -> set[int]:
    from drafts.pods import service

    return service.connected_seats(draft_id)


def presence_check(run: Run) -> dict:
    """Seats whose client has an open socket but that the server lists as offline, and the reverse."""
    from django.db import connections

    from drafts.pods import service

    out = {"connected_but_offline": 0, "offline_but_listed": 0}
    try:
        for pod in run.pods:
            listed = service.connected_seats(pod.draft_id)
            for c in pod.clients:
                if c.complete:
                    continue
                out["connected_but_offline"] += c.ws is not None and c.seat not in listed
                out["offline_but_listed"] += c.ws is None and c.seat in listed
    finally:
        connections.close_all()
    return out


def pct(values: list[float]) -> dict:
    import numpy as np

    if not values:
        return {"n": 0}
    a = np.asarray(values)
    return {"n": int(a.size), "p50": round(float(np.percentile(a, 50)), 1), "p95": round(float(np.percentile(a, 95)), 1),
            "p99": round(float(np.percentile(a, 99)), 1), "mean": round(float(a.mean()), 1), "max": round(float(a.max()), 1)}


# --- the two parts ---------------------------------------------------------------------------------------

def load_run(n: int, port: int | list[int], bot: str, timer: int, label: str, timeout: float, daphne: Proc | list[Proc],
             think: tuple[float, float] = (0.0, 0.0), by_pod: bool = False) -> dict:
    """N pods drafting at once; with several ports (and their Daphne processes) the sockets are shared out (Run)."""
    daphnes = daphne if isinstance(daphne, list) else [daphne]
    pods = make_pods(n, bot, timer, label)
    run = Run(pods, port, think=think, seed=n, by_pod=by_pod)
    load_before = os.getloadavg()[0]
    cpu0 = (sum(cpu_seconds(d.proc.pid) for d in daphnes), cpu_seconds())
    wall = asyncio.run(run.main(timeout))
    cpu1 = (sum(cpu_seconds(d.proc.pid) for d in daphnes), cpu_seconds())
    starts = [p.t_start for p in pods if p.t_start]
    dones = [p.t_done for p in pods if p.t_done]
    drafting = (max(dones) - min(starts)) if starts and len(dones) == len(pods) else None
    picks = run.acked_total()
    db = check_db(pods)
    time.sleep(1.0)
    presence_left = sum(len(online_connected(p.draft_id)) for p in pods)
    return {
        "pods": n, "clients": n * SEATS, "picks_acked": picks, "picks_expected": n * SEATS * PER_SEAT,
        "wall_seconds": round(wall, 2), "drafting_seconds": None if drafting is None else round(drafting, 2),
        "picks_per_s": None if not drafting else round(picks / drafting, 1),
        "next_pack_ms": pct(run.next_pack), "next_pack_direct_ms": pct(run.next_pack_direct), "ack_ms": pct(run.ack),
        "unmatched_expectations": len(run.expect), "errors": len(run.errors),
        "error_samples": [e.get("message") for e in run.errors[:5]],
        "counts": dict(run.counts), "db": db,
        "seats_listed_connected_after_all_closed": presence_left,
        "cpu_ms_per_pick": {"daphne": round((cpu1[0] - cpu0[0]) * 1000 / max(picks, 1), 1),
                            "bench_clients": round((cpu1[1] - cpu0[1]) * 1000 / max(picks, 1), 1)},
        "daphne_cpu_share": round((cpu1[0] - cpu0[0]) / wall, 2),
        "loadavg_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "_samples": {"next_pack": run.next_pack},
    }

