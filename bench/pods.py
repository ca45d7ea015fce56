"""Online draft pods under load and under faults, against real Daphne / Celery / Redis / PostgreSQL.

    .venv/bin/python -m bench.pods [--quick] [--max-pods 32] [--bot draftsim] [--sizes N ...] [--output PATH]

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

3. At a person's pace (``--pace human`` or ``--pace timer``; the burst and fault parts are then skipped):
   people think 3-20 s per pick, or a share of the MTG Arena timer (75 s down to 30 s); pods join
   staggered and the number of pods drafting at once ramps (--levels, default 2 4 8 ... 128), each
   level measured for a window of --seconds after its joins; on one Daphne process, then on two (each
   pod whole on one, as a load balancer keyed on the pod's URL would share them out), a Celery worker
   running the pods' pick timers (--load-timer, 90 s by default). Per level: pick -> next pack
   p50/p95/p99, Daphne and worker CPU per pick; per series: lost and duplicated picks (database against
   clients). Writes bench/results/pods_<pace>.json/.md/.svg. See bench/harness/pace.py.

Load is CPU-bound on a small machine: the Daphne CPU per pick and the 1-minute load average are
recorded with each N, since another process on the machine changes the figures.
Diagnostics (not part of the default run): --load-think MIN MAX paces the load clients,
--conn-max-age sets POSTGRES_CONN_MAX_AGE for the servers (the pod sockets' own database thread
keeps its connection for POD_DB_CONN_MAX_AGE seconds regardless, 300 by default),
--asgi bench.pods_asgi:application gives each socket its own sync thread.
python -m bench.pods_profile profiles the server side of a pick in-process (time, queries, cProfile).

Writes bench/results/pods.json and bench/results/pods.svg and prints a summary. The bench
database is dropped at the end; every subprocess is killed on exit.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import datetime as dt
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import pace as paced
from bench.harness.paths import RESULTS, ROOT, command
from bench.harness.podload import (PACKS, PER_SEAT, PICKS, SEATS, THRESHOLD_MS, Run, check_db, load_run, make_pods, pct,
                                   presence_check)
from bench.harness.processes import (BENCH_DB, DAPHNE_ARGV, PY, REDIS_CACHE, REDIS_MAIN, TAG, WORKER_ARGV, Proc,
                                     clean_redis, configure_env, drop_db, free_port, kill_all, recreate_db,
                                     services_machine)
from bench.harness.report import write_result


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


# --- at a person's pace ------------------------------------------------------------------------------------

def pace_series(args, n_daphnes: int, daphnes: list[Proc], worker: Proc) -> dict:
    """One ramp on the first ``n_daphnes`` Daphne processes; the database checked against the clients after."""
    from drafts.models import Draft

    run = paced.PaceRun([d.port for d in daphnes[:n_daphnes]], args.pace, args.bot, args.load_timer,
                        f"{args.pace}{n_daphnes}d", seed=n_daphnes)
    t = time.perf_counter()
    rows, stopped = asyncio.run(run.series(args.levels, args.stagger, args.seconds, daphnes[:n_daphnes], worker,
                                           log=lambda line: print(line, flush=True)))
    pods = paced.pods_of(run)
    db = check_db(pods, partial=True)
    # the pods left unfinished must not draft on by their timers (the worker) during the next series
    Draft.objects.filter(pk__in=[p.draft_id for p in pods]).update(pick_timer=0)
    return {"daphnes": n_daphnes, "levels": rows, "stopped": stopped,
            "max_pods_p95_under_threshold": paced.best(rows) if db["ok"] else 0,
            "lost_picks": db["lost_picks"], "duplicated_picks": db["duplicated_picks"], "db": db,
            "pods_created": len(pods), "pods_replaced_after_finishing": run.replaced,
            "picks_acked": run.acked_total(), "errors": len(run.errors),
            "error_samples": [e.get("message") for e in run.errors[:5]], "counts": dict(run.counts),
            "seconds": round(time.perf_counter() - t, 1)}


def fresh_worker(worker: Proc) -> None:
    """Stop the worker, drop what is queued for it (the pick timers of pods nobody drafts any more), start it."""
    from mtgsite.celery import app

    worker.stop()
    dropped = app.control.purge()
    worker.start()
    print(f"  worker restarted; {dropped} queued timer tasks of the last series dropped", flush=True)


def pace_table(series: dict) -> dict:
    """The figures of each level, flat (one table row each in the .md)."""
    out = {}
    for r in series["levels"]:
        nx = r["next_pack_ms"]
        out[f"{r['pods']} pods"] = {
            "people": r["people"], "picks_per_s": r["picks_per_s"], "next_pack_p50_ms": nx.get("p50"),
            "next_pack_p95_ms": nx.get("p95"), "next_pack_p99_ms": nx.get("p99"), "samples": nx.get("n", 0),
            "ack_p95_ms": r["ack_ms"].get("p95"), "daphne_cpu_ms_per_pick": r["cpu_ms_per_pick"]["daphne"],
            "worker_cpu_ms_per_pick": r["cpu_ms_per_pick"]["worker"], "errors": r["errors"],
            "load_1min": r["loadavg_1min"][1]}
    return out


def pace_part(args, doc: dict, daphne: Proc, worker: Proc, logdir: Path, t_all: float) -> int:
    daphnes = [daphne]
    if 2 in args.daphnes:
        port2 = free_port()
        daphnes.append(Proc("daphne2", [a.replace("{port}", str(port2)).replace("{app}", args.asgi) for a in DAPHNE_ARGV],
                            logdir, port=port2))
        daphnes[1].start()
    worker.start()
    doc["config"].update(pace=args.pace, levels=args.levels, window_seconds=args.seconds, stagger_seconds=args.stagger,
                         think=({"uniform_s": list(paced.HUMAN_THINK_S)} if args.pace == "human" else
                                {"share_of_timer": list(paced.TIMER_SHARE),
                                 "timer_s": [paced.ARENA_FIRST_S, paced.ARENA_LAST_S]}),
                         two_daphnes="each pod whole on one process (pods in turn)")
    doc["commands"]["daphne2"] = " ".join(shlex.quote(a) for a in daphnes[-1].argv)
    series = {}
    for n in args.daphnes:
        if series:  # the timers the last series' pods left queued must not run (as worker CPU) in this one
            fresh_worker(worker)
        print(f"{args.pace} pace on {n} Daphne process{'es' if n > 1 else ''}: levels {args.levels}, "
              f"{args.stagger:.0f} s of joins then {args.seconds:.0f} s measured per level", flush=True)
        series[n] = pace_series(args, n, daphnes, worker)
        print(f"  lost {series[n]['lost_picks']}, duplicated {series[n]['duplicated_picks']}; "
              f"max pods with p95 < {THRESHOLD_MS:.0f} ms: {series[n]['max_pods_p95_under_threshold']}", flush=True)
    name = {1: "1 Daphne", 2: "2 Daphne"}
    doc["max_pods_p95_under_200ms_and_no_lost_pick"] = {name[n]: s["max_pods_p95_under_threshold"] for n, s in series.items()}
    doc["lost_and_duplicated_picks"] = {name[n]: {"lost": s["lost_picks"], "duplicated": s["duplicated_picks"],
                                                  "picks_acked": s["picks_acked"]} for n, s in series.items()}
    for n, s in series.items():
        doc[f"levels_{n}_daphne"] = pace_table(s)
    doc["series"] = {name[n]: s for n, s in series.items()}
    doc["server_logs"] = {"counts": {d.name: len(d.tracebacks()) for d in [*daphnes, worker]},
                          "samples": ["\n".join(tb.splitlines()[-6:]) for d in [*daphnes, worker] for tb in d.tracebacks()[:2]]}
    doc["ok"] = all(s["db"]["ok"] for s in series.values())
    doc["total_seconds"] = round(time.perf_counter() - t_all, 1)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    plot_pace(doc, series, args.output.with_suffix(".svg"))
    write_result(doc, args.output)
    print(f"\nmax pods with p95 pick -> next pack < {THRESHOLD_MS:.0f} ms and no lost pick: "
          f"{doc['max_pods_p95_under_200ms_and_no_lost_pick']}; wrote {args.output} and .md, .svg "
          f"({doc['total_seconds']} s); server logs in {logdir}")
    return 0 if doc["ok"] else 1


def plot_pace(doc: dict, series: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.2), layout="constrained")
    a, b = fig.subplots(1, 2)
    colours = {1: "#1f6fb4", 2: "#d3202a"}
    for n, s in series.items():
        rows = [r for r in s["levels"] if r["next_pack_ms"].get("n")]
        if not rows:
            continue
        ns = [r["pods"] for r in rows]
        label = f"{n} Daphne"
        a.plot(ns, [r["next_pack_ms"]["p95"] for r in rows], "-o", color=colours[n], label=f"{label}: p95")
        a.plot(ns, [r["next_pack_ms"]["p50"] for r in rows], ":", color=colours[n], label=f"{label}: p50")
        b.plot(ns, [r["cpu_ms_per_pick"]["daphne"] for r in rows], "-o", color=colours[n], label=f"{label}: Daphne")
        if rows[0]["cpu_ms_per_pick"]["worker"] is not None:
            b.plot(ns, [r["cpu_ms_per_pick"]["worker"] for r in rows], "--s", color=colours[n], label=f"{label}: worker")
    a.axhline(THRESHOLD_MS, color="#000000", lw=0.8, ls=":")
    for ax in (a, b):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("pods drafting at once (8 people each)")
        ax.legend(fontsize=8)
    a.set_yscale("log")
    a.set_ylabel("pick -> next pack (ms)")
    a.set_title(f"{doc['mode']} pace: latency (200 ms dotted)")
    b.set_ylabel("CPU ms per pick")
    b.set_ylim(bottom=0)
    b.set_title("server CPU per pick")
    fig.suptitle(f"Pods at {doc['mode']} pace on {doc['machine'].get('cpu_count')} shared CPUs: max pods with p95 < 200 ms "
                 f"{doc['max_pods_p95_under_200ms_and_no_lost_pick']}", fontsize=11)
    fig.savefig(path, format=path.suffix.lstrip(".") or "svg")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="N = 1, 2 and a shorter fault run (about a minute)")
    ap.add_argument("--max-pods", type=int, default=32)
    ap.add_argument("--bot", default="draftsim", help="the pods' bot kind (only its suggestions are used: no bot seats)")
    ap.add_argument("--load-timer", type=int, default=None, choices=[0, 30, 45, 60, 90, 120],
                    help="pick timer of the load pods (0: off, no Celery tasks; default 0, with --pace 90)")
    ap.add_argument("--pace", default="burst", choices=["burst", *paced.PACES],
                    help="burst: every seat picks at once (the load and fault parts); human: 3-20 s a pick; "
                         "timer: a share of the Arena timer (75 s down to 30 s)")
    ap.add_argument("--levels", type=int, nargs="+", default=[2, 4, 8, 16, 32, 64, 128],
                    help="with --pace: pods drafting at once, ramped in this order")
    ap.add_argument("--seconds", type=float, default=60.0, help="with --pace: the window measured at each level")
    ap.add_argument("--stagger", type=float, default=30.0, help="with --pace: seconds over which a level's new pods join")
    ap.add_argument("--daphnes", type=int, nargs="+", default=[1, 2], choices=[1, 2],
                    help="with --pace: series on one Daphne process, on two, or both")
    ap.add_argument("--budget", type=float, default=None, help="seconds for the load series (default 150; quick 30)")
    ap.add_argument("--no-faults", action="store_true")
    ap.add_argument("--load-think", type=float, nargs=2, default=(0.0, 0.0), metavar=("MIN", "MAX"),
                    help="diagnostic: seconds each load client waits before a pick (default 0 0: at once)")
    ap.add_argument("--sizes", type=int, nargs="+", help="pod counts to run (default 1 2 4 8 ...; quick 1 2)")
    ap.add_argument("--conn-max-age", type=int, default=None,
                    help="diagnostic: POSTGRES_CONN_MAX_AGE for the servers (the site default is 0)")
    ap.add_argument("--asgi", default="mtgsite.asgi:application",
                    help="diagnostic: the ASGI application Daphne serves (e.g. bench.pods_asgi:application)")
    ap.add_argument("--output", type=Path, default=None, help="default bench/results/pods.json (pods_<pace>.json)")
    args = ap.parse_args(argv)
    paced_run = args.pace != "burst"
    if args.load_timer is None:
        args.load_timer = 90 if paced_run else 0
    if args.output is None:
        args.output = RESULTS / ("pods.json" if not paced_run else f"pods_{args.pace}.json")
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
    doc: dict = {"benchmark": "pods", "mode": args.pace if paced_run else "quick" if args.quick else "full",
                 "date": dt.datetime.now().isoformat(timespec="seconds"),
                 "command": ".venv/bin/" + command("pods", argv or sys.argv[1:])}
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
        doc["machine"] = services_machine()
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
        if paced_run:
            return pace_part(args, doc, daphne, worker, logdir, t_all)

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
        write_result(doc, args.output)
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
