"""Pods at a person's pace (``python -m bench.pods --pace human|timer``): how many concurrent pods of 8 people one
server holds when people think between picks, instead of picking the instant a pack arrives.

Every seat is a websocket client of one asyncio process (:class:`bench.harness.podload.Run`), so hundreds of
people cost one process. Pods join staggered over ``stagger`` seconds at each level of a ramp (e.g. 2, 4, 8, ...
pods at once); a pod that finishes its draft is replaced by a fresh one, so the level holds. After each level's
joins, a window of ``seconds`` is measured (a human draft lasts 10-30 minutes: the bench measures a time
window, not whole drafts). At the end no new pick is made, every pick sent is answered, and the database is
checked against what every client sent and was told (:func:`bench.harness.podload.check_db`, ``partial``).

Latency "pick -> next pack" is every moment a person waits for a pack the server holds for them: a pick
passed to a neighbour who was waiting with nothing in hand (until the neighbour's socket shows it), and a
picker's own next pack when one was queued behind the one it just picked from (until its socket shows it).
A pack queued behind one the neighbour is still thinking over is not a wait on the server, and not counted.

Think time per pick (seeded): ``human``, uniform 3-20 s; ``timer``, a uniform 10-70 % share of the
MTG Arena player-draft timer, 75 s for a full pack shrinking linearly to 30 s for the last card
(:func:`timer_limit`).
"""
from __future__ import annotations

import asyncio
import os
import random
import time

from bench.harness.podload import PICKS, SEATS, THRESHOLD_MS, Client, Pod, Run, make_pods, pct
from bench.harness.processes import Proc, cpu_seconds

HUMAN_THINK_S = (3.0, 20.0)
ARENA_FIRST_S, ARENA_LAST_S = 75.0, 30.0  # MTG Arena player draft: 75 s for a full pack, down to 30 s
TIMER_SHARE = (0.1, 0.7)  # of the timer a person uses
PACES = ("human", "timer")


def timer_limit(cards_left: int, pack_size: int = PICKS) -> float:
    """The pick timer for a pack of ``cards_left`` cards: 75 s when full, linearly down to 30 s for the last."""
    if pack_size <= 1:
        return ARENA_FIRST_S
    share = min(1.0, max(0.0, (cards_left - 1) / (pack_size - 1)))
    return ARENA_LAST_S + (ARENA_FIRST_S - ARENA_LAST_S) * share


def think_seconds(pace: str, rng: random.Random, cards_left: int) -> float:
    """Seconds a person thinks over a pack of ``cards_left`` cards at ``pace``."""
    if pace == "human":
        return rng.uniform(*HUMAN_THINK_S)
    if pace == "timer":
        return rng.uniform(*TIMER_SHARE) * timer_limit(cards_left)
    raise ValueError(f"unknown pace {pace!r}; one of {', '.join(PACES)}")


class PaceRun(Run):
    """Pods of people thinking between picks, added level by level, replaced when they finish."""

    def __init__(self, ports: list[int], pace: str, bot: str, timer: int, label: str, seed: int = 0,
                 by_pod: bool = True):
        super().__init__([], ports, seed=seed, by_pod=by_pod)
        self.pace, self.bot, self.timer, self.label = pace, bot, timer, label
        self.timeline = []
        self.stall_s = 120.0  # people are silent for long: a sync only after two minutes without a message
        self.tasks: list[asyncio.Task] = []
        self.target = 0  # pods drafting at once
        self.replaced = 0

    def delay(self, c: Client, view: dict) -> float:
        return think_seconds(self.pace, self.rng, len(view.get("pack") or ()))

    def active(self) -> int:
        return sum(1 for p in self.pods if p.t_done is None)

    async def add_pods(self, n: int, over_s: float) -> None:
        """``n`` new pods, their people connecting pod after pod over ``over_s`` seconds."""
        for i in range(n):
            t = time.perf_counter()
            await self.add_pod()
            if i < n - 1:
                await asyncio.sleep(max(0.0, over_s / max(n - 1, 1) - (time.perf_counter() - t)))

    async def add_pod(self) -> None:
        index = len(self.pods)
        self.pods.append(None)  # the index is taken before the thread runs
        pod = (await asyncio.to_thread(make_pods, 1, self.bot, self.timer, self.label, index))[0]
        self.pods[index] = pod
        pod.clients = [Client(pod, s, pod.keys[s]) for s in range(SEATS)]
        self.tasks += [asyncio.ensure_future(self.client(c)) for c in pod.clients]
        self.tasks.append(asyncio.ensure_future(self.starter(pod)))

    @property
    def clients(self):
        return [c for p in self.pods if p is not None for c in p.clients]

    def on_view(self, c: Client, view: dict, now: float) -> None:
        done = c.pod.t_done
        super().on_view(c, view, now)
        if done is None and c.pod.t_done is not None and not self.closing:  # the level holds: a new pod joins
            self.replaced += 1
            self.tasks.append(asyncio.ensure_future(self.add_pod()))

    def window(self, t0: float, t1: float) -> dict:
        """The latencies and picks of [t0, t1)."""
        got = {"next_pack": [], "own_next": [], "ack": []}
        for t, kind, ms in self.timeline:
            if t0 <= t < t1:
                got[kind].append(ms)
        acks = sum(1 for t in self.ack_times if t0 <= t < t1)
        return {"picks": acks, "picks_per_s": round(acks / (t1 - t0), 2),
                "next_pack_ms": pct(got["next_pack"] + got["own_next"]),
                "pass_to_waiting_ms": pct(got["next_pack"]), "own_queued_ms": pct(got["own_next"]),
                "ack_ms": pct(got["ack"])}

    async def series(self, levels: list[int], stagger: float, seconds: float, daphnes: list[Proc],
                     worker: Proc | None, settle: float = 5.0, log=print) -> tuple[list[dict], str]:
        """Each level: pods join until ``level`` draft at once, then a window of ``seconds`` is measured.
        Stops after the first level whose p95 passes the threshold."""
        watch = asyncio.ensure_future(self.watchdog())
        rows, stopped = [], "end of list"
        try:
            for level in levels:
                t = time.perf_counter()
                self.target = level
                await self.add_pods(level - self.active(), stagger)
                await asyncio.sleep(settle)  # the last pod's lobby fills and it starts
                ramp = time.perf_counter() - t
                errors0, stalls0, load0 = len(self.errors), self.counts["stall_syncs"], _loadavg()
                cpu0 = [cpu_seconds(d.proc.pid) for d in daphnes], cpu_seconds(worker.proc.pid) if worker else 0.0
                t0 = time.perf_counter()
                await asyncio.sleep(seconds)
                t1 = time.perf_counter()
                cpu1 = [cpu_seconds(d.proc.pid) for d in daphnes], cpu_seconds(worker.proc.pid) if worker else 0.0
                row = {"pods": level, "people": level * SEATS, "pods_drafting": self.active(),
                       "ramp_seconds": round(ramp, 1), "window_seconds": round(t1 - t0, 1), **self.window(t0, t1)}
                picks = max(row["picks"], 1)
                row["cpu_ms_per_pick"] = {
                    "daphne": round(sum(b - a for a, b in zip(cpu0[0], cpu1[0])) * 1000 / picks, 2),
                    "worker": round((cpu1[1] - cpu0[1]) * 1000 / picks, 2) if worker else None}
                row["daphne_cpu_share"] = [round((b - a) / (t1 - t0), 3) for a, b in zip(cpu0[0], cpu1[0])]
                row["errors"] = len(self.errors) - errors0
                row["stall_syncs"] = self.counts["stall_syncs"] - stalls0
                row["loadavg_1min"] = [load0, _loadavg()]
                rows.append(row)
                nx = row["next_pack_ms"]
                log(f"  {self.label}: {level:>3} pods ({row['pods_drafting']} drafting) {row['picks_per_s']} picks/s  "
                    f"next pack p50/p95/p99 {nx.get('p50')}/{nx.get('p95')}/{nx.get('p99')} ms (n={nx.get('n')})  "
                    f"ack p95 {row['ack_ms'].get('p95')} ms  CPU/pick Daphne {row['cpu_ms_per_pick']['daphne']} ms, "
                    f"worker {row['cpu_ms_per_pick']['worker']} ms  load {row['loadavg_1min']}")
                if nx.get("p95", float("inf")) > THRESHOLD_MS:
                    stopped = f"p95 {nx.get('p95')} ms > {THRESHOLD_MS:.0f} ms at {level} pods"
                    break
        finally:
            await self.close()
            watch.cancel()
        return rows, stopped

    async def close(self, drain_s: float = 20.0) -> None:
        """No new picks; wait until every pick sent is answered (at most ``drain_s``); close every socket."""
        self.closing = True
        deadline = time.perf_counter() + drain_s
        while self.pending_total() and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
        self.counts["unanswered_at_close"] = self.pending_total()
        self.stop = True
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def _loadavg() -> float:
    return round(os.getloadavg()[0], 2)


def best(rows: list[dict]) -> int:
    """The largest level with p95 pick -> next pack under the threshold (levels ramp up: the last such)."""
    ok = [r["pods"] for r in rows if r["next_pack_ms"].get("p95", float("inf")) < THRESHOLD_MS]
    return max(ok, default=0)


def pods_of(run: PaceRun) -> list[Pod]:
    return [p for p in run.pods if p is not None]
