"""Online draft pods under load and under faults, against real Daphne / Celery / Redis / PostgreSQL.

    .venv/bin/python bench/pods.py [--quick] [--max-pods 32] [--bot draftsim] [--sizes N ...] [--output PATH]

Setup: drops and re-creates the PostgreSQL database ``bench_pods`` (BENCH_PODS_DB; on POSTGRES_HOST/PORT/USER),
migrates it and adds the small hand-made set ``TST`` of the shell tests (tests/drafts/
conftest.py::make_set), so no real data is needed. Redis traffic goes to databases 14 (Celery
broker + channel layer, under a per-run prefix and queue; BENCH_PODS_REDIS) and 15 (cache, flushed at the end;
BENCH_PODS_REDIS_CACHE). Daphne (``mtgsite.asgi:application``) and the Celery worker run as subprocesses on
the services stack, with the settings' channel layer (MTG_CHANNEL_LAYER).
Every pod has 8 seats, all taken by guests (no bots), 3 packs of 14 picks; every seat is a
websocket client of this one asyncio process, so client times share one clock.

1. Load: for N = 1, 2, 4, 8, ... pods at once (until the p95 pick-to-next-pack latency passes
   200 ms or --max-pods; --quick: 1 and 2), every client picks a random card of its pack as soon
   as it gets one. Measured per pick: pick -> ``picked`` ack, and pick -> the neighbour receiving
   a ``seat`` view whose pack is the rest of that pack (matched by contents). The "direct" subset
   is the picks whose neighbour had no pick in flight and no other pack ahead of it (server and
   delivery time only; the rest also includes the time the neighbour spends on packs queued
   ahead of it). After each N the database must hold exactly 42 DraftPick rows per seat,
   matching what the clients were acknowledged.
2. Faults: 2 pods (--quick: 1) with a 30 s pick timer, clients thinking 50-250 ms per pick
   (quick: 20-100 ms), a Celery worker and Daphne. Mid-draft, by share of picks acknowledged:
   kill -9 Daphne and restart it on the same port; kill -9 the worker and restart it; every
   client aborts its socket right after sending a pick (the ack is lost, the pick is not); kill -9
   both at once (full run only). Clients reconnect with exponential backoff, resend every pick not
   yet acknowledged with the same client_pick_id, then ``sync``. Lost and duplicated picks are
   counted from the database against what each client sent and was told; both must be zero.
   Also recorded: reconnects, time to the first ack and until every client is back, and whether
   the pod's presence ("connected" in the status) agrees with the open sockets 1 s later.

Load is CPU-bound on a small machine: the Daphne CPU per pick and the 1-minute load average are
recorded with each N, since another process on the machine changes the figures.
Diagnostics (not part of the default run): --load-think MIN MAX paces the load clients,
--conn-max-age sets POSTGRES_CONN_MAX_AGE for the servers (the pod sockets' own database thread
keeps its connection for POD_DB_CONN_MAX_AGE seconds regardless, 300 by default),
--asgi bench.pods_asgi:application gives each socket its own sync thread.
bench/pods_profile.py profiles the server side of a pick in-process (time, queries, cProfile).

Writes bench/results/pods.json and bench/results/pods.svg and prints a summary. The bench
database is dropped at the end; every subprocess is killed on exit.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import datetime as dt
import json
import os
import platform
import random
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"
PY = sys.executable
BENCH_DB = os.environ.get("BENCH_PODS_DB", "bench_pods")  # another name keeps runs of two checkouts apart
SEATS, PACKS, PICKS = 8, 3, 14
PER_SEAT = PACKS * PICKS  # 42
THRESHOLD_MS = 200.0
REDIS_MAIN = os.environ.get("BENCH_PODS_REDIS", "redis://127.0.0.1:6379/14")  # broker, results, channel layer (prefixed)
REDIS_CACHE = os.environ.get("BENCH_PODS_REDIS_CACHE", "redis://127.0.0.1:6379/15")  # flushed at the end
TAG = f"benchpods{os.getpid()}"


# --- environment, database, processes -----------------------------------------------------------------

def configure_env() -> None:
    """The services stack on the bench database and Redis keys, for this process and its children."""
    os.environ.update({
        "MTG_STACK": "services",
        "POSTGRES_DB": BENCH_DB,
        "MTG_CHANNEL_PREFIX": TAG,
        "CELERY_DEFAULT_QUEUE": TAG,
        "REDIS_URL": REDIS_MAIN,
        "REDIS_CHANNELS_URL": REDIS_MAIN,
        "REDIS_CACHE_URL": REDIS_CACHE,
        "DJANGO_SETTINGS_MODULE": "mtgsite.settings",
        "PYTHONPATH": str(ROOT),
        "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
        "DJANGO_DEBUG": "0",  # no query log growing in the long-lived processes
    })


def pg_admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(host=os.environ.get("POSTGRES_HOST", "127.0.0.1"), port=os.environ.get("POSTGRES_PORT", "5432"),
                         user=os.environ.get("POSTGRES_USER", "postgres"), password=os.environ.get("POSTGRES_PASSWORD", ""),
                         dbname="postgres", autocommit=True) as conn:
        conn.execute(sql)


def recreate_db() -> None:
    pg_admin(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
    pg_admin(f"CREATE DATABASE {BENCH_DB}")


def drop_db() -> None:
    try:
        from django.db import connections

        connections.close_all()
    except Exception:
        pass
    pg_admin(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")


def clean_redis() -> None:
    """Remove this run's queue, channel-layer and Celery keys (db 14) and the cache (db 15 is the bench's)."""
    import redis

    r = redis.Redis.from_url(REDIS_MAIN)
    for pattern in (f"*{TAG}*", "_kombu.binding_deadlines", "unacked*", "celery-task-meta-*"):
        keys = list(r.scan_iter(match=pattern, count=1000))
        if keys:
            r.delete(*keys)
    redis.Redis.from_url(REDIS_CACHE).flushdb()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


DAPHNE_ARGV = [PY, "-m", "daphne", "-b", "127.0.0.1", "-p", "{port}", "{app}"]
WORKER_ARGV = [PY, "-m", "celery", "-A", "mtgsite", "worker", "--pool", "solo", "--without-gossip",
               "--without-mingle", "-Q", TAG, "--loglevel", "INFO"]


class Proc:
    """A service subprocess with its log; restartable; every one is killed at exit."""

    live: list["Proc"] = []

    def __init__(self, name: str, argv: list[str], logdir: Path, port: int | None = None):
        self.name, self.argv, self.port = name, argv, port
        self.log_path = logdir / f"{name}.log"
        self.proc: subprocess.Popen | None = None
        self.starts: list[float] = []  # seconds from spawn to ready, per start
        Proc.live.append(self)

    def start(self, timeout: float = 60.0) -> float:
        t = time.monotonic()
        with open(self.log_path, "a") as fh:
            fh.write(f"\n==== start {dt.datetime.now().isoformat()} ====\n")
        offset = self.log_path.stat().st_size
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(self.argv, cwd=ROOT, env=dict(os.environ), stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = t + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.tail()}")
            if self.port is not None:
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                        break
                except OSError:
                    pass
            else:
                with open(self.log_path) as fh:
                    fh.seek(offset)
                    if " ready." in fh.read():
                        break
            time.sleep(0.05)
        else:
            raise TimeoutError(f"{self.name} not ready after {timeout}s:\n{self.tail()}")
        took = time.monotonic() - t
        self.starts.append(round(took, 3))
        return took

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=8)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def tail(self, n: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def tracebacks(self) -> list[str]:
        """Tracebacks and ERROR lines in the log (first lines of each, for the report)."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        lines = text.splitlines()
        out = []
        for i, line in enumerate(lines):
            if line.startswith("Traceback") or " ERROR" in line or "ERROR/" in line:
                block = [line]
                for nxt in lines[i + 1:i + 120]:
                    block.append(nxt)
                    if nxt and not nxt.startswith((" ", "Traceback", "During", "The above")):
                        break
                out.append("\n".join(block))
        return out


def kill_all() -> None:
    for p in Proc.live:
        try:
            p.stop()
        except Exception:
            pass


# --- pods (Django ORM, outside the event loop) -------------------------------------------------------

def guest_session() -> str:
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    store["guest"] = True
    store.create()
    return store.session_key


def make_pods(n: int, bot: str, timer: int, label: str) -> list["Pod"]:
    from drafts.pods import service

    pods = []
    for i in range(n):
        keys = [guest_session() for _ in range(SEATS)]
        draft, row = service.create_pod("TST", SEATS, bot, timer, f"{label} {i} s0", session_key=keys[0], seed=1000 + i)
        assert row.seat == 0
        for s in range(1, SEATS):
            row, _ = service.join_pod(draft.pk, f"{label} {i} s{s}", session_key=keys[s])
            assert row.seat == s, (row.seat, s)
        pods.append(Pod(index=i, draft_id=str(draft.pk), keys=keys))
    return pods


def check_db(pods: list["Pod"]) -> dict:
    """Compare the DraftPick rows (and the stored pod state) with what every client sent and was told."""
    from django.db.models import Count

    from drafts.models import Draft, DraftPick

    out = collections.Counter()
    problems: list[str] = []
    for pod in pods:
        draft = Draft.objects.get(pk=pod.draft_id)
        if draft.status != "complete":
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
            if len(mine) != PER_SEAT:
                problems.append(f"pod {pod.index} seat {client.seat}: {len(mine)} rows")
            out["seats_short"] += len(mine) < PER_SEAT
            out["seats_over"] += len(mine) > PER_SEAT
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
            pool = client.final_pool
            if pool is not None and sorted(pool) != sorted(r.pick for r in mine):
                out["final_pool_differs_from_db"] += 1
                problems.append(f"pod {pod.index} seat {client.seat}: final pool differs from the rows")
    lost = out["acked_not_in_db"] + out["seats_short"]
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
                if c.ws is not None and not c.complete and c.pod.started and now - c.last_msg > 5.0:
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
            return
        c.pod.started = True
        names = tuple(sorted(x["name"] for x in pack))
        hit = self.expect.pop((c.pod.index, c.seat, view["pack_number"], names), None)
        if hit is not None:
            t0, direct = hit
            self.next_pack.append((now - t0) * 1000)
            if direct:
                self.next_pack_direct.append((now - t0) * 1000)
        slot = (view["pack_number"], view["pick_number"])
        if slot in c.sent or c.picking:
            return
        if self.think[1] > 0:
            c.picking = True
            asyncio.ensure_future(self.pick_later(c, view, self.rng.uniform(*self.think)))
        else:
            asyncio.ensure_future(self.pick(c, view))

    async def pick_later(self, c: Client, view: dict, delay: float) -> None:
        await asyncio.sleep(delay)
        c.picking = False
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

def cpu_seconds(pid: int | None = None) -> float:
    """User + system CPU time of a process (this one when pid is None)."""
    if pid is None:
        t = os.times()
        return t.user + t.system
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


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


def fault_run(port: int, bot: str, daphne: Proc, worker: Proc, n_pods: int, think: tuple[float, float],
              plan: list[tuple[float, str]], timeout: float) -> dict:
    pods = make_pods(n_pods, bot, 30, "fault")
    # the worker's start-up sweep (drafts.sweep_timers) must not break a running pod either
    run = Run(pods, port, think=think, seed=7)
    total = n_pods * SEATS * PER_SEAT
    events: list[dict] = []
    t_origin = [None]

    async def wait_recovered(t_kill: float, ev: dict, conns: dict, affected: list) -> None:
        """Every affected unfinished client has reconnected and has a view again; the first pick
        acknowledged after the fault."""
        acked_at_kill = ev["acked_after_kill"]
        while not run.stop:
            now = time.perf_counter()
            if "first_ack_after_s" not in ev and run.acked_total() > acked_at_kill:
                ev["first_ack_after_s"] = round(now - t_kill, 3)
            back = all(c.complete or (c.connections > conns[id(c)] and c.lost_at is None and c.ws is not None)
                       for c in affected)
            if back and "first_ack_after_s" in ev:
                ev["all_clients_back_s"] = round(now - t_kill, 3)
                await asyncio.sleep(1.0)  # then: does the pod's presence (status "connected") agree?
                ev["presence"] = await asyncio.to_thread(presence_check, run)
                return
            if all(c.complete for c in run.clients):  # nothing left to acknowledge or to come back for
                ev["note"] = "every client finished its draft before all were seen back"
                return
            await asyncio.sleep(0.01)

    async def restart(ev: dict, procs: list) -> None:
        for p in procs:  # at once, on the same port
            took = await asyncio.to_thread(p.start)
            ev["restart_s"][p.name] = round(took, 3)
        ev["t_restarted"] = round(time.perf_counter() - t_origin[0], 3)

    async def controller(r: Run) -> None:
        t_origin[0] = min(p.t_start for p in pods if p.t_start) if any(p.t_start for p in pods) else time.perf_counter()
        restarting: list = []  # a worker restarting in the background (the sockets do not need it)
        try:
            await faults(r, restarting)
        finally:
            await asyncio.gather(*restarting)

    async def faults(r: Run, restarting: list) -> None:
        for frac, what in plan:
            while r.acked_total() < frac * total:
                if all(c.complete for c in r.clients):
                    return
                await asyncio.sleep(0.005)
            if all(c.complete for c in r.clients):
                return
            if what in ("worker", "both"):  # never kill a worker that is still starting
                await asyncio.gather(*restarting)
            t_kill = time.perf_counter()
            ev = {"what": what, "at_progress": round(r.acked_total() / total, 3), "acked_at_kill": r.acked_total(),
                  "picks_in_flight_at_kill": r.pending_total(), "t": round(t_kill - t_origin[0], 3)}
            events.append(ev)
            procs = {"daphne": [daphne], "worker": [worker], "both": [daphne, worker], "drop": []}[what]
            conns = {id(c): c.connections for c in r.clients}
            if what == "drop":
                affected = [c for c in r.clients if not c.complete]
                for c in affected:
                    c.drop_after_send = True
                ev["acked_after_kill"] = r.acked_total()
                ev["clients"] = len(affected)
                await wait_recovered(t_kill, ev, conns, affected)
                ev["dropped"] = sum(c.dropped for c in affected)
                continue
            for p in procs:
                p.kill9()
            ev["acked_after_kill"] = r.acked_total()
            ev["restart_s"] = {}
            if what == "worker":  # the sockets do not go through the worker: the draft goes on meanwhile
                ev["first_ack_after_s"] = None
                restarting.append(asyncio.ensure_future(restart(ev, procs)))
                continue
            watch = asyncio.ensure_future(wait_recovered(t_kill, ev, conns, r.clients))
            await restart(ev, procs)
            await watch

    wall = asyncio.run(run.main(timeout, controller))
    db = check_db(pods)
    origin = t_origin[0] or 0.0
    recov = [x for c in run.clients for x in c.recovered]
    return {
        "pods": n_pods, "clients": n_pods * SEATS, "pick_timer_s": 30, "think_s": list(think),
        "wall_seconds": round(wall, 2), "picks_acked": run.acked_total(), "picks_expected": total,
        "faults": events, "reconnects": int(run.counts.get("reconnects", 0)),
        "resent_picks": int(run.counts.get("resent_picks", 0)), "duplicate_acks": int(run.counts.get("duplicate_acks", 0)),
        "client_recovery_s": {k: (v / 1000 if k != "n" else v) for k, v in pct([x * 1000 for x in recov]).items()},
        "errors": len(run.errors), "error_samples": [e.get("message") for e in run.errors[:5]],
        "counts": dict(run.counts), "ack_ms": pct(run.ack),
        "lost_picks": db["lost_picks"], "duplicated_picks": db["duplicated_picks"], "db": db,
        "ack_timeline_s": [round(t - origin, 2) for t in sorted(run.ack_times)],  # for the plot
    }


# --- report ----------------------------------------------------------------------------------------------

def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {"platform": platform.platform(), "cpu": cpu, "cpu_count": os.cpu_count(), "python": platform.python_version()}
    try:
        from django.db import connection

        with connection.cursor() as cur:
            cur.execute("SHOW server_version")
            info["postgresql"] = cur.fetchone()[0]
        import redis

        info["redis"] = redis.Redis.from_url(REDIS_MAIN).info("server").get("redis_version")
        import channels
        import daphne
        import websockets

        info.update(daphne=daphne.__version__, channels=channels.__version__, websockets=websockets.__version__)
    except Exception:
        pass
    return info


def plot(doc: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    runs = doc["load"]["runs"]
    fig = Figure(figsize=(13, 4.2), layout="constrained")
    a, b, c = fig.subplots(1, 3)
    ns = [r["pods"] for r in runs]
    for key, style, label in (("p50", "-o", "p50"), ("p95", "-s", "p95"), ("p99", "-^", "p99")):
        a.plot(ns, [r["next_pack_ms"].get(key) for r in runs], style, color={"p50": "#1f6fb4", "p95": "#d3202a",
                                                                          "p99": "#7b3fa0"}[key], label=f"next pack {label}")
    a.plot(ns, [r["ack_ms"].get("p95") for r in runs], "--", color="#9a9a9a", label="ack p95")
    a.axhline(THRESHOLD_MS, color="#000000", lw=0.8, ls=":")
    a.text(ns[0], THRESHOLD_MS * 1.05, "200 ms", fontsize=8)
    a.set_xscale("log", base=2)
    a.set_yscale("log")
    a.set_xticks(ns, [str(n) for n in ns])
    a.set_xlabel("concurrent pods (8 human clients each)")
    a.set_ylabel("latency (ms)")
    a.set_title("pick -> neighbour's next pack")
    a.legend(fontsize=8)
    b.plot(ns, [r["picks_per_s"] or 0 for r in runs], "-o", color="#2e8b3d")
    b.set_xscale("log", base=2)
    b.set_xticks(ns, [str(n) for n in ns])
    b.set_xlabel("concurrent pods")
    b.set_ylabel("picks / s (whole server)")
    b.set_title("throughput")
    b.set_ylim(bottom=0)
    for r in runs:
        b.annotate(f"Daphne {r['cpu_ms_per_pick']['daphne']} ms CPU/pick", (r["pods"], r["picks_per_s"] or 0),
                   textcoords="offset points", xytext=(0, -14), ha="center", fontsize=7, color="#555555")
    f = doc.get("faults")
    if f:
        tl = f.get("ack_timeline_s") or []
        c.plot(tl, range(1, len(tl) + 1), color="#1f6fb4", lw=1.2)
        for ev in f["faults"]:
            col = {"daphne": "#d3202a", "worker": "#2e8b3d", "both": "#7b3fa0", "drop": "#c9a227"}[ev["what"]]
            c.axvline(ev["t"], color=col, ls="--", lw=1)
            text = " clients drop sockets" if ev["what"] == "drop" else f" kill -9 {ev['what']}"
            c.text(ev["t"], len(tl) * 0.03, text, rotation=90, fontsize=8, color=col, va="bottom")
        c.set_xlabel("seconds since start")
        c.set_ylabel("picks acknowledged")
        c.set_title(f"faults: lost {f['lost_picks']}, duplicated {f['duplicated_picks']}, "
                    f"{f['reconnects']} reconnects", fontsize=10)
    fig.suptitle(f"Online pods on {doc['machine'].get('cpu_count')} CPUs: Daphne + Redis + PostgreSQL "
                 f"(max N with p95 < 200 ms: {doc['load']['max_pods_p95_under_threshold']})", fontsize=11)
    fig.savefig(path, format=path.suffix.lstrip(".") or "svg")


def summary(doc: dict) -> str:
    lines = [f"pods benchmark ({doc['mode']}): {doc['machine'].get('cpu_count')} CPUs, "
             f"PostgreSQL {doc['machine'].get('postgresql')}, Redis {doc['machine'].get('redis')}, bot={doc['config']['bot']}",
             "", "load: latency in ms (next pack = pick -> neighbour gets that pack; direct = neighbour had nothing queued)",
             f"{'pods':>4} {'clients':>7} {'picks/s':>8} | {'next p50':>8} {'p95':>7} {'p99':>7} | {'direct p50':>10} "
             f"{'p95':>7} | {'ack p50':>7} {'p95':>7} {'p99':>7} | db"]
    for r in doc["load"]["runs"]:
        nx, di, ak = r["next_pack_ms"], r["next_pack_direct_ms"], r["ack_ms"]
        lines.append(f"{r['pods']:>4} {r['clients']:>7} {r['picks_per_s'] or 0:>8} | {nx.get('p50', '-'):>8} "
                     f"{nx.get('p95', '-'):>7} {nx.get('p99', '-'):>7} | {di.get('p50', '-'):>10} {di.get('p95', '-'):>7} | "
                     f"{ak.get('p50', '-'):>7} {ak.get('p95', '-'):>7} {ak.get('p99', '-'):>7} | "
                     f"{'ok' if r['db']['ok'] else 'FAIL'} (lost {r['db']['lost_picks']}, dup {r['db']['duplicated_picks']})"
                     f"{'' if not r['seats_listed_connected_after_all_closed'] else ', %d seats still listed connected after closing' % r['seats_listed_connected_after_all_closed']}")
    lines.append(f"max pods with p95 next-pack < {THRESHOLD_MS:.0f} ms: {doc['load']['max_pods_p95_under_threshold']} "
                 f"(stopped: {doc['load']['stopped']})")
    f = doc.get("faults")
    if f:
        lines += ["", f"faults: {f['pods']} pods x 8 clients, {f['picks_acked']}/{f['picks_expected']} picks acked, "
                      f"lost {f['lost_picks']}, duplicated {f['duplicated_picks']}, reconnects {f['reconnects']}, "
                      f"resent {f['resent_picks']} (answered as duplicates: {f['duplicate_acks']}), errors {f['errors']}"]
        for ev in f["faults"]:
            if ev["what"] == "drop":
                lines.append(f"  {ev['dropped']} clients abort their socket right after sending a pick at {ev['at_progress']:.0%}: "
                             f"all back after {ev.get('all_clients_back_s', '-')} s; presence then {ev.get('presence')}")
                continue
            back = ("(sockets do not use the worker)" if ev["what"] == "worker" else
                    f"first ack after {ev.get('first_ack_after_s')} s, all clients back after {ev.get('all_clients_back_s', '-')} s; "
                    f"presence then {ev.get('presence')}")
            lines.append(f"  kill -9 {ev['what']:<6} at {ev['at_progress']:.0%} ({ev['picks_in_flight_at_kill']} picks in flight): "
                         f"restarted in {ev['restart_s']} s, {back}")
    lines.append(f"server log tracebacks: {doc['server_logs']['counts']} {doc['server_logs']['kinds'] or ''}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="N = 1, 2 and a shorter fault run (about a minute)")
    ap.add_argument("--max-pods", type=int, default=32)
    ap.add_argument("--bot", default="draftsim", help="the pods' bot kind (only its suggestions are used: no bot seats)")
    ap.add_argument("--load-timer", type=int, default=0, choices=[0, 30, 45, 60, 90, 120],
                    help="pick timer of the load pods (0: off, no Celery tasks)")
    ap.add_argument("--budget", type=float, default=None, help="seconds for the load series (default 150; quick 30)")
    ap.add_argument("--no-faults", action="store_true")
    ap.add_argument("--load-think", type=float, nargs=2, default=(0.0, 0.0), metavar=("MIN", "MAX"),
                    help="diagnostic: seconds each load client waits before a pick (default 0 0: at once)")
    ap.add_argument("--sizes", type=int, nargs="+", help="pod counts to run (default 1 2 4 8 ...; quick 1 2)")
    ap.add_argument("--conn-max-age", type=int, default=None,
                    help="diagnostic: POSTGRES_CONN_MAX_AGE for the servers (the site default is 0)")
    ap.add_argument("--asgi", default="mtgsite.asgi:application",
                    help="diagnostic: the ASGI application Daphne serves (e.g. bench.pods_asgi:application)")
    ap.add_argument("--output", type=Path, default=RESULTS / "pods.json")
    args = ap.parse_args(argv)
    budget = args.budget or (30.0 if args.quick else 150.0)
    t_all = time.perf_counter()
    configure_env()
    if args.conn_max_age is not None:
        os.environ["POSTGRES_CONN_MAX_AGE"] = str(args.conn_max_age)
    logdir = Path(tempfile.mkdtemp(prefix="bench-pods-"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    port = free_port()
    daphne = Proc("daphne", [a.replace("{port}", str(port)).replace("{app}", args.asgi) for a in DAPHNE_ARGV], logdir, port=port)
    worker = Proc("worker", WORKER_ARGV, logdir)
    doc: dict = {"benchmark": "pods", "mode": "quick" if args.quick else "full",
                 "date": dt.datetime.now().isoformat(timespec="seconds"),
                 "command": " ".join(shlex.quote(a) for a in [".venv/bin/python", "bench/pods.py", *(argv or sys.argv[1:])])}
    db_made = False
    try:
        t = time.perf_counter()
        recreate_db()
        db_made = True
        subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=dict(os.environ), check=True)
        import django

        django.setup()
        from django.conf import settings

        from tests.drafts.conftest import make_set

        make_set("TST")
        setup_s = time.perf_counter() - t
        doc["machine"] = machine()
        doc["config"] = {"seats": SEATS, "packs": PACKS, "picks_per_pack": PICKS, "set": "TST (tests/drafts/conftest.py::make_set)",
                         "bot": args.bot, "load_pick_timer": args.load_timer,
                         "load_think_s": list(args.load_think), "threshold_ms": THRESHOLD_MS,
                         "database": BENCH_DB, "channel_prefix": TAG, "celery_queue": TAG,
                         "redis": {"broker_and_channels": REDIS_MAIN, "cache": REDIS_CACHE},
                         "conn_max_age": os.environ.get("POSTGRES_CONN_MAX_AGE", "0"),
                         "pod_db_conn_max_age": os.environ.get("POD_DB_CONN_MAX_AGE", "300"), "asgi": args.asgi,
                         "channel_layer": settings.MTG_CHANNEL_LAYER}
        doc["commands"] = {"migrate": "python manage.py migrate --noinput",
                           "daphne": " ".join(shlex.quote(a) for a in daphne.argv),
                           "worker": " ".join(shlex.quote(a) for a in worker.argv),
                           "env": {k: os.environ.get(k, "") for k in ("MTG_STACK", "MTG_CHANNEL_LAYER", "POSTGRES_DB", "MTG_CHANNEL_PREFIX",
                                                              "CELERY_DEFAULT_QUEUE", "REDIS_URL", "REDIS_CHANNELS_URL",
                                                              "REDIS_CACHE_URL", "DJANGO_DEBUG")}}
        doc["setup_seconds"] = round(setup_s, 1)
        print(f"setup {setup_s:.1f} s (database {BENCH_DB}, set TST); starting Daphne on port {port}", flush=True)
        daphne.start()

        # -- load -------------------------------------------------------------------------------------
        warm = None
        if not args.quick:  # caches (set list, bot ratings), imports, first connections
            warm = load_run(1, port, args.bot, args.load_timer, "warm", timeout=90, daphne=daphne)
            print(f"warm-up pod: {warm['drafting_seconds']} s, next-pack p95 {warm['next_pack_ms'].get('p95')} ms",
                  flush=True)
        sizes = args.sizes or ([1, 2] if args.quick else [n for n in (1, 2, 4, 8, 16, 32, 64, 128) if n <= args.max_pods])
        min_sizes = len(sizes) if args.quick else min(3, len(sizes))  # always enough points for a trend
        runs, stopped = [], "end of list"
        t_load = time.perf_counter()
        for n in sizes:
            r = load_run(n, port, args.bot, args.load_timer, f"load{n}", timeout=max(60.0, 10.0 * n), daphne=daphne,
                         think=tuple(args.load_think))
            runs.append(r)
            nx = r["next_pack_ms"]
            print(f"  N={n:<3} {r['picks_per_s']} picks/s  next-pack p50/p95/p99 {nx.get('p50')}/{nx.get('p95')}/"
                  f"{nx.get('p99')} ms  direct p50/p95 {r['next_pack_direct_ms'].get('p50')}/{r['next_pack_direct_ms'].get('p95')}"
                  f"  ack p50/p95 {r['ack_ms'].get('p50')}/{r['ack_ms'].get('p95')} ms  daphne {r['cpu_ms_per_pick']['daphne']} ms"
                  f" CPU/pick  load {r['loadavg_1min']}  db {'ok' if r['db']['ok'] else 'FAIL'}"
                  f"  ({r['wall_seconds']} s)", flush=True)
            if nx.get("p95", float("inf")) > THRESHOLD_MS and len(runs) >= min_sizes:
                stopped = f"p95 {nx.get('p95')} ms > {THRESHOLD_MS:.0f} ms at N={n}"
                break
            spent = time.perf_counter() - t_load
            if n != sizes[-1] and len(runs) >= min_sizes and spent + 2.2 * r["wall_seconds"] > budget:
                stopped = f"time budget ({budget:.0f} s) before N={sizes[sizes.index(n) + 1]}"
                break
        under = [r["pods"] for r in runs if r["next_pack_ms"].get("p95", float("inf")) < THRESHOLD_MS]
        for r in runs:
            r.pop("_samples", None)
        doc["load"] = {"runs": runs,
                       "warmup": None if warm is None else {k: warm[k] for k in ("drafting_seconds", "next_pack_ms", "ack_ms", "db")},
                       "max_pods_p95_under_threshold": max(under) if under else 0,
                       "max_clients_p95_under_threshold": (max(under) if under else 0) * SEATS, "stopped": stopped}

        # -- faults -----------------------------------------------------------------------------------
        if not args.no_faults:
            print("faults: starting the Celery worker", flush=True)
            worker.start()
            if args.quick:
                n_fault, plan, think = 1, [(0.25, "daphne"), (0.5, "drop"), (0.7, "worker")], (0.02, 0.1)
            else:
                n_fault, plan, think = 2, [(0.2, "daphne"), (0.4, "worker"), (0.55, "drop"), (0.75, "both")], (0.05, 0.25)
            f = fault_run(port, args.bot, daphne, worker, n_fault, think, plan, timeout=150)
            f["worker_startup_sweeps"] = sum(1 for line in worker.tail(10**8).splitlines()
                                             if "drafts.sweep_timers[" in line and "succeeded" in line)
            doc["faults"] = f
            print(f"  lost {f['lost_picks']}, duplicated {f['duplicated_picks']}, reconnects {f['reconnects']} "
                  f"({f['wall_seconds']} s)", flush=True)
        daphne_tb, worker_tb = daphne.tracebacks(), worker.tracebacks()
        kinds = collections.Counter(f"{name}: {tb.strip().splitlines()[-1]}" for name, tbs in
                                    (("daphne", daphne_tb), ("worker", worker_tb)) for tb in tbs)
        doc["server_logs"] = {"counts": {"daphne": len(daphne_tb), "worker": len(worker_tb)}, "kinds": dict(kinds),
                              "daphne_samples": ["\n".join(tb.splitlines()[-10:]) for tb in daphne_tb[:3]],
                              "worker_samples": ["\n".join(tb.splitlines()[-10:]) for tb in worker_tb[:3]],
                              "starts_s": {"daphne": daphne.starts, "worker": worker.starts}}
        ok = all(r["db"]["ok"] for r in runs) and (args.no_faults or (doc["faults"]["lost_picks"] == 0
                                                                      and doc["faults"]["duplicated_picks"] == 0))
        doc["ok"] = ok
        doc["total_seconds"] = round(time.perf_counter() - t_all, 1)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        plot(doc, args.output.with_suffix(".svg"))
        args.output.write_text(json.dumps(doc, indent=2) + "\n")
        print()
        print(summary(doc))
        print(f"\nwrote {args.output} and {args.output.with_suffix('.svg')} ({doc['total_seconds']} s); "
              f"server logs in {logdir}")
        return 0 if ok else 1
    finally:
        kill_all()
        try:
            clean_redis()
        except Exception as exc:
            print(f"(could not clean Redis: {exc})", file=sys.stderr)
        if db_made:
            try:
                drop_db()
            except Exception as exc:
                print(f"(could not drop {BENCH_DB}: {exc})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
