"""Profile the server side of one online-pod pick, in-process, on the services stack (PostgreSQL).

    .venv/bin/python -m bench.pods_profile [--picks 300] [--conn-max-age 0] [--cprofile [--cpu] [--sort tottime]] [--top 30]

Drops and re-creates the PostgreSQL database ``bench_pods_profile``, adds the hand-made TST set,
opens 8-person pods of guests and lets every seat pick the first card of its pack in turn through
:func:`drafts.pods.service.make_pick`, the way the socket calls it (each call wrapped like Channels'
``database_sync_to_async``: ``close_old_connections()`` before and after, so with CONN_MAX_AGE=0
every pick opens a new database connection; the socket server itself keeps one, see
POD_DB_CONN_MAX_AGE in drafts/pods/consumers.py). Prints the time per pick (p50/p95/mean), the SQL
queries per pick (BEGIN and COMMIT included; PODS_PROFILE_SQL=1 prints one pick's statements), the
time per statement kind, and with --cprofile the top functions by cumulative time. A diagnostic: the
benchmark is bench/pods.py.
"""
from __future__ import annotations

import argparse
import cProfile
import collections
import os
import pstats
import sys
import time

from bench.harness.paths import ROOT
from bench.harness.processes import pg_admin

DB = "bench_pods_profile"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--picks", type=int, default=300)
    ap.add_argument("--conn-max-age", type=int, default=0)
    ap.add_argument("--cprofile", action="store_true")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--cpu", action="store_true", help="with --cprofile: this thread's CPU time, not wall time "
                                                         "(on a shared machine the wall time is mostly waiting)")
    ap.add_argument("--sort", default="cumulative", help="with --cprofile: pstats order (cumulative, tottime, ...)")
    ap.add_argument("--bot", default="draftsim")
    args = ap.parse_args(argv)
    os.environ.update({"MTG_STACK": "services", "POSTGRES_DB": DB, "DJANGO_SETTINGS_MODULE": "mtgsite.settings",
                       "POSTGRES_CONN_MAX_AGE": str(args.conn_max_age), "DJANGO_DEBUG": "0",
                       "REDIS_CACHE_URL": "redis://127.0.0.1:6379/10", "LOG_LEVEL": "WARNING"})
    pg_admin(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
    pg_admin(f"CREATE DATABASE {DB}")
    try:
        import subprocess

        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=dict(os.environ),
                       check=True)
        import django

        django.setup()
        return run(args)
    finally:
        from django.db import connections

        connections.close_all()
        pg_admin(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")


def run(args) -> int:
    from django.contrib.sessions.backends.db import SessionStore
    from django.db import close_old_connections, connection
    from django.test.utils import CaptureQueriesContext

    from drafts.pods import service
    from tests.drafts.conftest import make_set

    make_set("TST")

    def guest():
        s = SessionStore()
        s["guest"] = True
        s.create()
        return s.session_key

    def new_pod():
        keys = [guest() for _ in range(8)]
        draft, _ = service.create_pod("TST", 8, args.bot, 0, "p0", session_key=keys[0], seed=7)
        for s in range(1, 8):
            service.join_pod(draft.pk, f"p{s}", session_key=keys[s])
        service.start_pod(draft.pk, None, keys[0])
        return draft.pk

    def as_consumer(fn, *a):  # what channels.db.database_sync_to_async does around each call
        close_old_connections()
        try:
            return fn(*a)
        finally:
            close_old_connections()

    draft_id, times, cpu, queries = new_pod(), [], [], collections.Counter()
    prof = (cProfile.Profile(time.thread_time) if args.cpu else cProfile.Profile()) if args.cprofile else None
    by_kind: dict = collections.defaultdict(list)

    def timed(execute, sql, params, many, context):  # wall time per statement kind
        t = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            words = sql.split()
            kind = " ".join(words[:3]) if words[0] != "SELECT" else "SELECT " + next(
                (w for w in words if w.startswith('"drafts_') or w.startswith('"decks_')), "?")
            by_kind[kind[:60]].append((time.perf_counter() - t) * 1000)

    connection.execute_wrappers.append(timed)
    n = 0
    while n < args.picks:
        views = {s: service.snapshot(draft_id, s)[1] for s in range(8)}
        if all(v["complete"] for v in views.values()):
            draft_id = new_pod()
            continue
        for seat, v in views.items():
            if not v["pack"] or n >= args.picks:
                continue
            cid = f"{seat}-{v['pack_number']}-{v['pick_number']}"
            t, c = time.perf_counter(), time.thread_time()
            with CaptureQueriesContext(connection) as ctx:
                if prof:
                    prof.enable()
                as_consumer(service.make_pick, draft_id, seat, v["pack"][0]["name"], v["pack_number"],
                            v["pick_number"], cid)
                if prof:
                    prof.disable()
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.thread_time() - c) * 1000)
            queries[len(ctx.captured_queries)] += 1
            if n == 5 and os.environ.get("PODS_PROFILE_SQL"):
                print("\n".join(q["sql"][:90] for q in ctx.captured_queries))
            n += 1
    import numpy as np

    a = np.array(times)
    print(f"{len(a)} picks, CONN_MAX_AGE={args.conn_max_age}: make_pick p50 {np.percentile(a, 50):.2f} ms, "
          f"p95 {np.percentile(a, 95):.2f} ms, mean {a.mean():.2f} ms; CPU of this thread {np.mean(cpu):.2f} ms/pick; "
          f"queries per pick {dict(sorted(queries.items()))}; pod cache hits {getattr(service, 'POD_CACHE', None) and service.POD_CACHE.hits}")
    for kind, ms in sorted(by_kind.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {kind:<60} n={len(ms):<5} mean {np.mean(ms):.2f} ms  total {sum(ms):.0f} ms")
    if prof:
        pstats.Stats(prof).sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
