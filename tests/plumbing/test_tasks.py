"""Queueing and live rows shared by the apps (plumbing.jobs, plumbing.live), and the layering they allow:
each app's tasks.py queues its work; no service imports its tasks module."""
from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest
from django.db import connection, transaction
from kombu.exceptions import OperationalError

from decks import tasks as deck_tasks
from decks.models import CompletionJob
from drafts.pods import service
from drafts.models import Draft
from gameplay.models import PlayedGame
from gameplay.play import PlayError, session
from plumbing import live

ROOT = Path(__file__).resolve().parents[2]


def _broker_down(*args, **kwargs):
    raise OperationalError("connection refused")


@pytest.mark.django_db
def test_a_job_is_queued_after_the_commit_and_marked_failed_when_the_broker_is_down(monkeypatch,
                                                                                    django_capture_on_commit_callbacks):
    monkeypatch.setattr(deck_tasks.complete_deck_task, "delay", _broker_down)
    job = CompletionJob.objects.create(format="modern", known_main=[["Lightning Bolt", 4]], known_side=[])
    with django_capture_on_commit_callbacks() as callbacks:
        deck_tasks.enqueue_completion(job)
    assert len(callbacks) == 1
    job.refresh_from_db()
    assert job.status == "queued" and not job.error  # nothing is sent before the commit
    callbacks[0]()
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error == "The job could not be queued (task broker unavailable: connection refused). Try again."


@pytest.mark.django_db
def test_a_rolled_back_request_queues_nothing(monkeypatch, django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr(deck_tasks.complete_deck_task, "delay", sent.append)
    job = CompletionJob.objects.create(format="modern", known_main=[["Lightning Bolt", 4]], known_side=[])
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            deck_tasks.enqueue_completion(job)
            raise RuntimeError("the request failed")
    assert callbacks == [] and sent == []


def _draft() -> Draft:
    return Draft.objects.create(set_code="TST", kind="online", status="open", seats=2)


def _game() -> PlayedGame:
    return PlayedGame.objects.create(human_deck_name="a", ai_deck_name="b", opponent="random", state="{}")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["pod", "game"])
def test_a_locked_row_holds_the_sqlite_write_lock_before_it_is_read(kind):
    """SQLite ignores FOR UPDATE, and a transaction that reads then writes fails at once when another
    connection wrote in between: pods and games alike take the database's write lock first."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite only (PostgreSQL locks the row with SELECT ... FOR UPDATE)")
    row = _draft() if kind == "pod" else _game()
    locked = service.locked if kind == "pod" else session.locked
    other = sqlite3.connect(connection.settings_dict["NAME"], timeout=0)
    try:
        with locked(row.pk) as held:
            assert held.pk == row.pk and held.revision == 0
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
        other.execute("BEGIN IMMEDIATE")  # released with the transaction
        other.rollback()
    finally:
        other.close()


@pytest.mark.django_db
def test_a_missing_row_raises_the_callers_error():
    with pytest.raises(service.PodError) as pod:
        with service.locked(Draft.objects.create(set_code="TST", kind="offline").pk):  # not an online pod
            pass
    assert pod.value.code == 404
    with pytest.raises(PlayError) as game:
        with session.locked("00000000-0000-0000-0000-000000000000"):
            pass
    assert game.value.code == 404


@pytest.mark.django_db
def test_the_revision_cache_returns_only_the_current_revision_and_keeps_only_what_commits(
        django_capture_on_commit_callbacks):
    cache = live.RevisionCache(size=2)
    cache.put("a", 3, "a@3")
    assert cache.take("a", 2) is None and "a" not in cache  # stale: dropped, never returned
    cache.put("a", 3, "a@3")
    cache.put("a", 2, "a@2")  # an older one never replaces a newer one
    assert cache.peek("a") == (3, "a@3") and cache.take("a", 3) == "a@3" and "a" not in cache
    assert (cache.hits, cache.misses) == (1, 1)
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            cache.keep("a", 4, "a@4")
            raise RuntimeError("rolled back")
    assert "a" not in cache
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            cache.keep("a", 4, "a@4")
            assert "a" not in cache  # not before the commit
    assert cache.peek("a") == (4, "a@4")
    cache.put("b", 1, "b")
    cache.put("c", 1, "c")  # past the size: the least recently used goes
    assert "a" not in cache and "b" in cache and "c" in cache


SERVICES = {"decks/completion/service.py": "decks.tasks", "drafts/pods/service.py": "drafts.pods.tasks",
            "gameplay/play/choice.py": "gameplay.tasks", "gameplay/play/session.py": "gameplay.tasks",
            "gameplay/play/advice.py": "gameplay.tasks", "gameplay/gauntlet/service.py": "gameplay.gauntlet.tasks"}


@pytest.mark.parametrize("path", sorted(SERVICES))
def test_no_service_imports_its_tasks_module(path):
    tasks_module = SERVICES[path]
    imported = set()
    for node in ast.walk(ast.parse((ROOT / path).read_text())):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    assert not any(m == tasks_module or m.startswith(tasks_module + ".") for m in imported), \
        f"{path} imports {tasks_module}"
