"""Abuse limits under a flood: one client sends 100 deck completions, then another asks for one; with the limits
off (the issue's measurement) and on (the default MTG_LIMITS). Real processes: Daphne and one Celery worker.

    .venv/bin/python -m bench.limits [--stack embedded|services] [--decks 20000] [--flood 100] [--threads 8]
                                     [--alone 9] [--crowd 100] [--output PATH]

Setup: a fresh database with the real card catalogue (import_cards), the first --decks corpus decks (import_decks
--limit) and the shipped models (register_models), so a completion is the real masked model with retrieval.
``--stack embedded`` (the default): SQLite var/bench_limits.sqlite3, the local-memory cache, and a real queue
between Daphne and the worker without Redis (kombu's filesystem transport, bench/limits_settings.py).
``--stack services``: PostgreSQL database bench_limits, Redis databases 14 (broker, under a per-run queue) and 15
(cache). Daphne serves mtgsite.asgi; the worker (solo pool, the inference queue) batches completions as on the site.
Each client is its own address through X-Forwarded-For (MTG_LIMIT_FORWARDED_HOPS=1), fresh for every phase.

For each mode (off: MTG_LIMIT_ENABLED=0; on: the defaults, completion 10/min, 2 unfinished jobs, queue 50):
1. B alone: --alone completions one after the other, each polled to done; the median latency, as the client saw
   it (polling every 50 ms) and on the server (the job row's creation to its end).
2. Flood: client A sends --flood completion requests from --threads threads; answers counted by status.
3. Right after the flood, client B asks for one completion: its latency to done, and the ratio to alone.
4. Crowd: --crowd clients send one request each at once (the queue cap, not the per-client rate, is what
   answers them), then B asks for one again (and, refused, again after Retry-After).
The queue drains after each phase (the worker finishes every accepted job).

Writes bench/results/limits.json and prints a summary. Every subprocess is stopped on exit.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.harness.paths import RESULTS, ROOT, command
from bench.harness.processes import PY, Proc, free_port, kill_all, pg_admin, services_machine
from bench.harness.report import write_result

BENCH_DB = "bench_limits"
SQLITE = ROOT / "var" / "bench_limits.sqlite3"
REDIS_MAIN = "redis://127.0.0.1:6379/14"
REDIS_CACHE = "redis://127.0.0.1:6379/15"
TAG = f"benchlimits{os.getpid()}"
REQUEST = {"format": "modern", "text": "4 Lightning Bolt\n4 Goblin Guide\n4 Monastery Swiftspear\n4 Lava Spike",
           "seed": 1}


def configure_env(stack: str, workdir: Path) -> None:
    """The bench's database, queue and cache, for this process and its children."""
    os.environ.update({"MTG_STACK": stack, "PYTHONPATH": str(ROOT), "DJANGO_DEBUG": "0",
                       "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"), "MTG_LIMIT_FORWARDED_HOPS": "1",
                       "MTG_VAR_DIR": str(workdir / "var"), "MTG_DATASET_DIR": str(workdir / "datasets")})
    if stack == "services":
        os.environ.update({"DJANGO_SETTINGS_MODULE": "mtgsite.settings", "POSTGRES_DB": BENCH_DB,
                           "CELERY_DEFAULT_QUEUE": TAG, "MTG_CHANNEL_PREFIX": TAG, "REDIS_URL": REDIS_MAIN,
                           "REDIS_CHANNELS_URL": REDIS_MAIN, "REDIS_CACHE_URL": REDIS_CACHE})
    else:
        (workdir / "queue").mkdir(parents=True, exist_ok=True)
        os.environ.update({"DJANGO_SETTINGS_MODULE": "bench.limits_settings", "SQLITE_PATH": str(SQLITE),
                           "BENCH_QUEUE_DIR": str(workdir / "queue")})


def fresh_database(stack: str) -> None:
    if stack == "services":
        pg_admin(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
        pg_admin(f"CREATE DATABASE {BENCH_DB}")
        import redis

        redis.Redis.from_url(REDIS_CACHE).flushdb()
    else:
        SQLITE.parent.mkdir(exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{SQLITE}{suffix}").unlink(missing_ok=True)


def setup_data(decks: int) -> dict:
    import django
    from django.core.management import call_command

    django.setup()
    from decks.models import Card, Deck

    quiet = {"stdout": open(os.devnull, "w"), "stderr": open(os.devnull, "w")}
    took = {}
    for name, args in (("migrate", {}), ("import_cards", {}), ("import_decks", {"limit": decks}),
                       ("register_models", {"no_train": True})):
        t = time.perf_counter()
        call_command(name, **args, **quiet)
        took[name] = round(time.perf_counter() - t, 1)
        print(f"  {name}: {took[name]} s", flush=True)
    from django.db import connections

    connections.close_all()
    return {"cards": Card.objects.count(), "corpus_decks": Deck.objects.filter(source="corpus").count(),
            "setup_seconds": took}


# --- the clients ---------------------------------------------------------------------------------------------

def call(url: str, payload: dict | None, address: str) -> tuple[int, dict, dict]:
    data = None if payload is None else json.dumps(payload).encode()
    req = urllib.request.Request(url, data=data, method="GET" if payload is None else "POST",
                                 headers={"Content-Type": "application/json", "X-Forwarded-For": address})
    try:
        with urllib.request.urlopen(req, timeout=600) as resp:
            return resp.status, json.loads(resp.read()), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}"), dict(exc.headers)


def complete(base: str, address: str, timeout: float = 600) -> tuple[float, float, int]:
    """One completion, asked again after Retry-After when refused, then polled every 50 ms until done: (seconds
    until the client saw it done, seconds from its row's creation to its end on the server, times refused)."""
    start = time.perf_counter()
    refused = 0
    while (answer := call(f"{base}/api/decks/complete", REQUEST, address))[0] in (429, 503):
        refused += 1
        time.sleep(int(answer[2]["Retry-After"]))
    status, job, _ = answer
    if status != 202:
        raise RuntimeError(f"completion refused ({status}): {job}")
    while job["status"] not in ("done", "failed"):
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"job {job['id']} not done after {timeout} s")
        time.sleep(0.05)
        job = call(job["url"], None, address)[1]
    if job["status"] != "done":
        raise RuntimeError(f"job failed: {job['error']}")
    from decks.models import CompletionJob

    row = CompletionJob.objects.get(pk=job["id"])
    return time.perf_counter() - start, (row.finished - row.created).total_seconds(), refused


def address(rng: random.Random) -> str:
    return f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"


def drain(timeout: float = 900) -> int:
    """Wait until no job is queued or running; returns how many are done."""
    from decks.models import CompletionJob

    deadline = time.monotonic() + timeout
    while CompletionJob.objects.filter(status__in=("queued", "running")).exists():
        if time.monotonic() > deadline:
            raise TimeoutError("the queue did not drain")
        time.sleep(0.2)
    return CompletionJob.objects.filter(status="done").count()


def run_mode(base: str, mode: str, args, rng: random.Random) -> dict:
    b = address(rng)
    alone = [complete(base, b) for _ in range(args.alone)]
    alone_client = statistics.median(x[0] for x in alone)
    alone_server = statistics.median(x[1] for x in alone)
    a = address(rng)
    t = time.perf_counter()
    with ThreadPoolExecutor(args.threads) as pool:
        answers = list(pool.map(lambda _: call(f"{base}/api/decks/complete", REQUEST, a), range(args.flood)))
    flood_seconds = time.perf_counter() - t
    after, after_server, _ = complete(base, address(rng))
    from decks.models import CompletionJob

    statuses = [s for s, _, _ in answers]
    retry = [int(h["Retry-After"]) for s, _, h in answers if s in (429, 503)]
    row = {
        "mode": mode, "flood_requests": args.flood, "flood_threads": args.threads,
        "accepted_202": statuses.count(202), "refused_429": statuses.count(429), "refused_503": statuses.count(503),
        "other": len(statuses) - statuses.count(202) - statuses.count(429) - statuses.count(503),
        "flood_answered_seconds": round(flood_seconds, 2),
        "retry_after_seconds": {"min": min(retry), "max": max(retry)} if retry else None,
        "b_alone_median_seconds": round(alone_client, 3), "b_alone_server_median_seconds": round(alone_server, 3),
        "b_after_flood_seconds": round(after, 3), "b_after_flood_server_seconds": round(after_server, 3),
        "ratio_after_to_alone": round(after / alone_client, 2),
        "ratio_after_to_alone_server": round(after_server / alone_server, 2),
        "a_jobs_unfinished_when_b_done": CompletionJob.objects.filter(
            client_key=f"ip:{a}", status__in=("queued", "running")).count(),
    }
    drain()
    print(f"  {mode}, one client floods: A {row['accepted_202']} accepted / {row['refused_429']} x 429 / "
          f"{row['refused_503']} x 503 in {row['flood_answered_seconds']} s; B alone {row['b_alone_median_seconds']} s,"
          f" after the flood {row['b_after_flood_seconds']} s (x{row['ratio_after_to_alone']}; on the server "
          f"{row['b_alone_server_median_seconds']} -> {row['b_after_flood_server_seconds']} s, "
          f"x{row['ratio_after_to_alone_server']})", flush=True)
    if args.crowd:
        t = time.perf_counter()
        with ThreadPoolExecutor(args.threads) as pool:
            answers = list(pool.map(lambda _: call(f"{base}/api/decks/complete", REQUEST, address(rng)),
                                    range(args.crowd)))
        crowd_seconds = time.perf_counter() - t
        waiting = CompletionJob.objects.filter(status="queued").count()
        after, after_server, refused = complete(base, address(rng))
        statuses = [s for s, _, _ in answers]
        retry = [int(h["Retry-After"]) for s, _, h in answers if s in (429, 503)]
        row["crowd"] = {"requests": args.crowd, "clients": args.crowd, "accepted_202": statuses.count(202),
                        "refused_429": statuses.count(429), "refused_503": statuses.count(503),
                        "answered_seconds": round(crowd_seconds, 2), "queued_when_answered": waiting,
                        "retry_after_seconds": {"min": min(retry), "max": max(retry)} if retry else None,
                        "b_after_seconds": round(after, 3), "b_after_server_seconds": round(after_server, 3),
                        "b_refused_first": refused, "ratio_after_to_alone": round(after / alone_client, 2)}
        drain()
        print(f"  {mode}, {args.crowd} clients at once: {statuses.count(202)} accepted / {statuses.count(503)} x 503; "
              f"B after {row['crowd']['b_after_seconds']} s (x{row['crowd']['ratio_after_to_alone']}, refused {refused} "
              "times first)", flush=True)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", choices=["embedded", "services"], default="embedded")
    parser.add_argument("--decks", type=int, default=20000, help="corpus decks imported (retrieval's neighbours)")
    parser.add_argument("--flood", type=int, default=100)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--alone", type=int, default=9)
    parser.add_argument("--crowd", type=int, default=100, help="then one request from each of this many clients "
                                                               "at once (the queue cap; 0: skip)")
    parser.add_argument("--output", default=str(RESULTS / "limits.json"))
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-limits-"))
    configure_env(args.stack, workdir)
    fresh_database(args.stack)
    print(f"setup ({args.stack}): real catalogue, {args.decks} corpus decks, shipped models", flush=True)
    data = setup_data(args.decks)
    from django.conf import settings

    queues = ",".join(settings.CELERY_ALL_QUEUES)
    worker = Proc("worker", [PY, "-m", "celery", "-A", "mtgsite", "worker", "--pool", "solo", "--without-gossip",
                             "--without-mingle", "-Q", queues, "--loglevel", "INFO"], workdir)
    rng = random.Random(7)
    rows = []
    try:
        worker.start(timeout=120)
        for mode, enabled in (("limits off", "0"), ("limits on", "1")):
            os.environ["MTG_LIMIT_ENABLED"] = enabled
            port = free_port()
            daphne = Proc(f"daphne-{enabled}", [PY, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                                                "mtgsite.asgi:application"], workdir, port=port)
            daphne.start()
            base = f"http://127.0.0.1:{port}"
            complete(base, address(rng))  # warm: the worker loads the models, the web process its caches
            drain()
            rows.append(run_mode(base, mode, args, rng))
            daphne.stop()
    finally:
        kill_all()
        if args.stack == "services":
            from django.db import connections

            connections.close_all()
            pg_admin(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
    info = services_machine()
    info["load_average_1min_at_end"] = round(os.getloadavg()[0], 2)
    doc = {
        "benchmark": "limits", "date": dt.date.today().isoformat(), "stack": args.stack,
        "command": command("limits"),
        "machine": info, "data": data, "request": REQUEST,
        "limits_on": {k: v for k, v in settings.MTG_LIMITS.items() if k.startswith("completion")},
        "batch_size": settings.COMPLETION_BATCH_SIZE, "modes": rows,
    }
    write_result(doc, Path(args.output))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
