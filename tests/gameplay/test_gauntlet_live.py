"""A gauntlet played by a real Celery worker process (services stack: PostgreSQL, Redis).

The worker runs two prefork children, so two games are played at the same time and their results
are counted concurrently on the run's row; the command queues the games and waits like an admin would.
"""
import io

import pytest
from django.core.management import call_command

from gameplay.gauntlet.models import GauntletRun
from tests.conftest import start_worker

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def gauntlet_worker(game_catalogue, tmp_path, monkeypatch):
    """A real worker (two processes) that finds the test's engine card database under MTG_VAR_DIR."""
    monkeypatch.setenv("MTG_VAR_DIR", str(tmp_path))
    yield from start_worker(tmp_path, "--pool", "prefork", "--concurrency", "2")


def test_a_real_worker_plays_a_gauntlet_to_the_end(gauntlet_worker, tmp_path):
    out = io.StringIO()
    call_command("gauntlet", decks="mono_red_aggro,mono_white_weenie,mono_blue_faeries", games=2,
                 player="engine:VeryEasy", max_decisions=150, seed=4, celery=True, plot=str(tmp_path / "h.svg"),
                 stdout=out, stderr=io.StringIO())
    run = GauntletRun.objects.get()
    assert (run.status, run.runner, run.total, run.done, run.errors) == ("done", "celery", 6, 6, 0)
    games = list(run.games.all())
    assert all(g.status == "done" and g.attempts == 1 and g.decisions for g in games)
    starts = sorted((g.started, g.finished) for g in games)
    assert any(b[0] < a[1] for a, b in zip(starts, starts[1:])), "two games should overlap in time"
    summary = run.results["summary"]
    assert summary["games"]["scored"] == 6 and len(run.results["cards"]) > 10
    assert "standings" in out.getvalue() and (tmp_path / "h.svg").read_bytes().startswith(b"<?xml")
    # the worker survives and takes the next run too
    call_command("gauntlet", decks="dimir_terror,mono_red_aggro", games=1, player="random", max_decisions=40,
                 celery=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert GauntletRun.objects.order_by("-id").first().status == "done"
    assert gauntlet_worker.poll() is None
