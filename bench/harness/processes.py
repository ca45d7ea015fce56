"""The service processes a load benchmark starts (Daphne, Celery workers) on the services stack: their
environment (a throw-away PostgreSQL database and per-run Redis keys), start/restart/kill -9 with logs, and
their CPU time. Every started process is killed by :func:`kill_all`.

``BENCH_DB`` is read when called: a benchmark may set ``processes.BENCH_DB`` before :func:`configure_env`."""
from __future__ import annotations

import datetime as dt
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from bench.harness.machine import machine
from bench.harness.paths import ROOT

PY = sys.executable
BENCH_DB = os.environ.get("BENCH_PODS_DB", "bench_pods")  # another name keeps runs of two checkouts apart
REDIS_MAIN = os.environ.get("BENCH_PODS_REDIS", "redis://127.0.0.1:6379/14")  # broker, results, channel layer (prefixed)
REDIS_CACHE = os.environ.get("BENCH_PODS_REDIS_CACHE", "redis://127.0.0.1:6379/15")  # flushed at the end
TAG = f"benchpods{os.getpid()}"


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



def services_machine() -> dict:
    """The machine record with the versions of PostgreSQL, Redis, Daphne, Channels and websockets in use
    (after ``django.setup()``; those that cannot be read are left out)."""
    info = machine()
    try:
        from django.db import connection  # noqa: PLC0415 - Django is set up by the caller

        with connection.cursor() as cur:
            cur.execute("SHOW server_version")
            info["postgresql"] = cur.fetchone()[0]
        import redis  # noqa: PLC0415 - only on the services stack

        info["redis"] = redis.Redis.from_url(REDIS_MAIN).info("server").get("redis_version")
        import channels  # noqa: PLC0415 - versions for the record
        import daphne  # noqa: PLC0415 - versions for the record
        import websockets  # noqa: PLC0415 - versions for the record

        info.update(daphne=daphne.__version__, channels=channels.__version__, websockets=websockets.__version__)
    except Exception:  # noqa: BLE001 - a missing version is left out of the record
        pass
    return info
