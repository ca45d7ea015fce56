"""The machinery of the fault tests (``tests/*/test_faults.py``, services stack) and of bench/faults.py.

Every fault test runs against its own Redis server (:class:`PrivateRedis`, on a free port, no
persistence): a worker killed with ``kill -9`` leaves its messages unacknowledged in Redis, and the
small visibility timeout these tests use (:data:`FAST_RECOVERY`) would make a worker of ours hand out
the in-flight messages of another test run sharing the machine's Redis; restarting Redis would break
theirs. The test process itself is pointed at that server too (:func:`private_services`): its Celery
producer, its cache (advice tickets) and its channel layer.

:class:`Worker` is a real Celery worker (``prefork``, one pool process, in its own process group, so
that :meth:`Worker.kill9` kills the main process and its pool child at once, as the machine losing it
would). :func:`record` appends a fault's counts to ``MTG_FAULTS_REPORT`` when the bench runs the tests.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import kombu.pools
import pytest

from tests.conftest import ROOT, free_port, service_env, wait_for_port

# Recovery in seconds rather than minutes: a heartbeat every 0.5 s, stale after 3 s, a sweep every second,
# a dead worker's message handed out again after 6 s (searched for every second).
FAST_RECOVERY = {
    "MTG_JOB_HEARTBEAT_SECONDS": "0.5",
    "MTG_JOB_STALE_SECONDS": "3",
    "MTG_JOB_SWEEP_SECONDS": "1",
    "MTG_JOB_MAX_ATTEMPTS": "3",
    "CELERY_VISIBILITY_TIMEOUT": "6",
    "CELERY_UNACKED_RESTORE_INTERVAL": "1",
}


# a worker's log line about one of the recovery sweeps it queues every MTG_JOB_SWEEP_SECONDS (plumbing/recovery.py)
_SWEEP_LINE = re.compile(r"Task \w+\.recover_\w+\[")


def wait_until(predicate, timeout: float, what: str, interval: float = 0.1):
    """Poll ``predicate`` until it returns something true (returned); AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"{what}: not after {timeout} s")


class PrivateRedis:
    """A redis-server of this test alone, on a free port, keeping nothing on disk; :meth:`restart` kills it
    with SIGKILL and starts an empty one on the same port (what a crashed Redis comes back as)."""

    def __init__(self, logdir: Path):
        self.port = free_port()
        self.logdir = logdir
        self.proc: subprocess.Popen | None = None
        self.restarts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = open(self.logdir / f"redis-{self.port}.log", "a")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--dir", str(self.logdir)], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        wait_for_port(self.port, self.proc, timeout=10)

    def kill9(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def restart(self, down_for: float = 0.0) -> None:
        self.kill9()
        time.sleep(down_for)
        self.start()
        self.restarts += 1

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill9()


def redis_env(url: str) -> dict:
    """The environment that points a served process (worker, Daphne) at ``url``: broker, cache, channel layer."""
    return {"REDIS_URL": f"{url}/0", "REDIS_CACHE_URL": f"{url}/1", "REDIS_CHANNELS_URL": f"{url}/2"}


@contextlib.contextmanager
def celery_broker(url: str, transport_options: dict):
    """This process's Celery producer on broker ``url`` for the block (the app's pools are rebuilt). Its result
    backend stays where it was: a backend bound to a Redis that a test then stopped would retry its connection
    from the results' clean-up, and this process reads no results of the tasks it queues here."""
    from mtgsite.celery import app

    saved = {k: app.conf[k] for k in ("broker_url", "broker_transport_options")}

    def reset_pools():
        # kombu keeps process-wide connection and producer pools by broker URL besides the app's own: closing
        # the app's would leave kombu's entry for the URL closed, and the next test of this process (make test
        # runs the fault tests among the others) would fail to queue anything ("Acquire on closed pool")
        if app._pool is not None:
            app._pool.force_close_all()
        app._pool = None
        app.amqp._producer_pool = None
        kombu.pools.reset()

    reset_pools()
    app.conf.update(broker_url=url, broker_transport_options=transport_options)
    try:
        yield app
    finally:
        reset_pools()
        app.conf.update(**saved)


@pytest.fixture
def private_services(transactional_db, settings, monkeypatch, tmp_path):
    """A private Redis for this test: the served processes' environment and this process's settings point at it,
    with the fast recovery timings; yields the :class:`PrivateRedis`."""
    if settings.STACK != "services":
        pytest.skip("needs MTG_STACK=services")
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    redis = PrivateRedis(tmp_path)
    redis.start()
    env = {**redis_env(redis.url), **FAST_RECOVERY}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    options = {"visibility_timeout": int(FAST_RECOVERY["CELERY_VISIBILITY_TIMEOUT"]),
               "unacked_restore_interval": 1, "unacked_restore_throttle": 1}
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": env["REDIS_CACHE_URL"]}}
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": settings.CHANNEL_LAYERS["default"]["BACKEND"], "CONFIG": {
        "hosts": [{"address": env["REDIS_CHANNELS_URL"], "socket_timeout": None}],
        "prefix": os.environ.get("MTG_CHANNEL_PREFIX", "mtg")}}}
    for key in ("MTG_JOB_HEARTBEAT_SECONDS", "MTG_JOB_STALE_SECONDS", "MTG_JOB_SWEEP_SECONDS"):
        setattr(settings, key, float(FAST_RECOVERY[key]))
    settings.MTG_JOB_MAX_ATTEMPTS = int(FAST_RECOVERY["MTG_JOB_MAX_ATTEMPTS"])
    try:
        with celery_broker(env["REDIS_URL"], options):
            yield redis
    finally:
        redis.stop()


class Served:
    """A served process (a Celery worker, Daphne) in its own process group; restartable; :meth:`kill9` kills the
    whole group with SIGKILL. ``ready`` is a line of its log that says it is up, or ``port`` a port it listens on."""

    def __init__(self, name: str, argv: list[str], logdir: Path, ready: str | None = None, port: int | None = None):
        self.name, self.argv, self.ready, self.port = name, argv, ready, port
        self.log_path = logdir / f"{name}.log"
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self, timeout: float = 90.0) -> "Served":
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(self.argv, cwd=ROOT, env=service_env(), stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        log.close()
        self.starts += 1
        if self.port is not None:
            wait_for_port(self.port, self.proc, timeout=timeout)
            return self

        def up():
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.tail()}")
            with open(self.log_path, errors="replace") as fh:
                fh.seek(offset)
                return self.ready in fh.read()

        try:
            wait_until(up, timeout, f"{self.name} ready", interval=0.2)
        except AssertionError:
            self.stop()
            raise AssertionError(f"{self.name} did not start:\n{self.tail()}") from None
        return self

    def pids(self) -> list[int]:
        """The processes of its group (the worker's main process and its pool children)."""
        if self.proc is None:
            return []
        out = subprocess.run(["pgrep", "-g", str(self.proc.pid)], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    def kill9(self) -> int:
        """SIGKILL to every process of the group, at once; returns how many there were."""
        if self.proc is None or self.proc.poll() is not None:
            return 0
        n = len(self.pids())
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        return n

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()  # the main process: a worker's warm shutdown stops its pool children itself
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill9()

    def tail(self, n: int = 4000, skip: re.Pattern | None = None) -> str:
        """The last ``n`` characters of its log, without the lines ``skip`` matches."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        if skip is not None:
            text = "".join(line for line in text.splitlines(keepends=True) if not skip.search(line))
        return text[-n:]


def kill_worker(w: Served) -> str:
    """``kill -9`` a worker mid-job, as MTG_FAULTS_KILL says (the bench runs both): ``worker`` (the default) its
    main process and its pool process at once, as a machine losing it would; ``pool`` the pool process alone
    (the main process sees it die, gives a message back to the queue if its task says it may, and starts
    another pool process). Returns what was killed, for the counts."""
    if os.environ.get("MTG_FAULTS_KILL", "worker") == "pool":
        children = [pid for pid in w.pids() if pid != w.proc.pid]
        assert children, "the worker has no pool process"
        for pid in children:
            os.kill(pid, signal.SIGKILL)
        return "pool process"
    assert w.kill9() >= 2  # the main process and its pool process
    return "worker"


def worker(tmp_path: Path, name: str = "worker") -> Served:
    """A Celery worker on this run's queues: prefork with one pool process (not yet started)."""
    from django.conf import settings

    argv = [sys.executable, "-m", "celery", "-A", "mtgsite", "worker", "--pool", "prefork", "--concurrency", "1",
            "--without-gossip", "--without-mingle", "--without-heartbeat", "-Q", ",".join(settings.CELERY_ALL_QUEUES),
            "--loglevel", "INFO", "-n", f"{name}-{os.getpid()}@%h"]
    return Served(name, argv, tmp_path, ready=" ready.")


def daphne(tmp_path: Path, port: int | None = None, name: str = "daphne") -> Served:
    port = port or free_port()
    argv = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "mtgsite.asgi:application"]
    return Served(name, argv, tmp_path, port=port)


@pytest.fixture
def served(tmp_path):
    """Start served processes through ``served(proc)``; every one is stopped at the end (its log tail printed)."""
    started: list[Served] = []

    def start(proc: Served) -> Served:
        if proc not in started:
            started.append(proc)
        return proc.start()

    yield start
    for proc in started:
        proc.stop()
        print(f"--- {proc.name} (its periodic recovery sweeps left out) ---\n{proc.tail(3000, skip=_SWEEP_LINE)}")


def record(fault: str, **counts) -> None:
    """Append one fault's counts to the bench's report file (MTG_FAULTS_REPORT), when the bench runs the tests."""
    path = os.environ.get("MTG_FAULTS_REPORT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"fault": fault, **counts}, default=str) + "\n")
