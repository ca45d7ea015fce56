"""One job row and one recovery (issue 37, item 4): every kind of job is a ``plumbing.jobs.JobRow``, and
``plumbing.recovery.recover_stale`` alone decides what a dead worker left: queued again while it has runs left, else
failed with the one message (``worker_lost``). The apps' sweeps are tested with their tasks in
tests/mtgsite/test_faults.py; here the function itself, on one real job table."""
from __future__ import annotations

import datetime as dt
import inspect

import pytest
from django.utils import timezone

from decks.models import CompletionJob
from gameplay.gauntlet.models import GauntletGame
from gameplay.review.models import GameReview
from ml.models import TrainingRun
from plumbing import recovery
from plumbing.jobs import JobRow
from plumbing.recovery import recover_stale, worker_lost


def test_every_kind_of_job_is_one_job_row():
    for model in (CompletionJob, GauntletGame, GameReview, TrainingRun):
        assert issubclass(model, JobRow), model
        names = {f.name for f in model._meta.get_fields()}
        assert {"status", "attempts", "heartbeat", "error", "started", "finished"} <= names, model


def test_the_worker_lost_message_is_written_once():
    assert worker_lost("job", 3, then="Try again.") == \
        "The worker running this job stopped (killed or lost); it was tried 3 times. Try again."
    assert worker_lost("run", 1, progress=42.4) == "The worker running this run stopped (killed or lost) at 42%."
    # no app writes its own: the apps give recover_stale what the job is, and what the person may do
    import decks.completion.service
    import gameplay.gauntlet.service
    import gameplay.review.service
    import ml.training
    for module in (decks.completion.service, gameplay.gauntlet.service, gameplay.review.service, ml.training):
        source = inspect.getsource(module)
        assert "killed or lost" not in source and "recover_stale(" in source, module.__name__


@pytest.fixture
def jobs(settings):
    old = timezone.now() - dt.timedelta(seconds=settings.MTG_JOB_STALE_SECONDS + 5)
    fields = dict(format="modern", known_main=[["Lightning Bolt", 4]], status="running", started=old, heartbeat=old)

    def make(attempts, **more):
        return CompletionJob.objects.create(attempts=attempts, **{**fields, **more})
    return make


@pytest.mark.django_db
def test_a_stale_row_is_queued_again_while_it_has_runs_left_then_failed(settings, jobs):
    settings.MTG_JOB_MAX_ATTEMPTS = 3
    first, second, last = jobs(1), jobs(2), jobs(3)
    alive = jobs(1, heartbeat=timezone.now())
    done = jobs(3, status="done")
    again, failed = recover_stale(CompletionJob.objects.order_by("created"), what="job", then="Try again.",
                                  again=lambda job: {"status": "queued", "message": f"run {job.attempts + 1}"},
                                  failed={"message": "Failed"})
    assert [j.pk for j in again] == [first.pk, second.pk] and [j.pk for j in failed] == [last.pk]
    assert [j.status for j in again] == ["queued", "queued"] and again[1].message == "run 3"  # read again
    last.refresh_from_db()
    assert (last.status, last.message, last.finished is not None) == ("failed", "Failed", True)
    assert last.error == worker_lost("job", 3, then="Try again.")
    assert CompletionJob.objects.get(pk=alive.pk).status == "running"  # its worker still stamps it
    assert CompletionJob.objects.get(pk=done.pk).status == "done"
    assert recover_stale(CompletionJob.objects.all(), what="job", again=lambda job: {"status": "queued"}) == ([], [])


@pytest.mark.django_db
def test_a_kind_never_run_again_fails_at_once_and_a_custom_failure_is_called(settings, jobs):
    settings.MTG_JOB_MAX_ATTEMPTS = 3
    job = jobs(1, progress=42.0)
    again, failed = recover_stale(CompletionJob.objects.all(), what="run", progress=True)
    assert again == [] and [j.pk for j in failed] == [job.pk]
    assert failed[0].status == "failed" and failed[0].error == worker_lost("run", 1, progress=42.0)

    other = jobs(3)
    seen = []
    _, failed = recover_stale(CompletionJob.objects.filter(pk=other.pk), what="game",
                              again=lambda row: {"status": "queued"}, fail=lambda row, error: seen.append((row.pk, error)))
    assert seen == [(other.pk, worker_lost("game", 3))] and [j.pk for j in failed] == [other.pk]


@pytest.mark.django_db
def test_a_row_claimed_meanwhile_is_left_to_its_worker(settings, jobs, monkeypatch):
    """The updates are conditional: a row a redelivered task claimed between the look and the update (its
    heartbeat fresh again) is neither queued again nor failed."""
    settings.MTG_JOB_MAX_ATTEMPTS = 3
    job = jobs(1)
    real_stale = recovery.stale
    calls = []

    def claimed_meanwhile(rows):
        calls.append(rows)
        if len(calls) == 2:  # the second look is the row's own, just before its update
            CompletionJob.objects.filter(pk=job.pk).update(heartbeat=timezone.now())
        return real_stale(rows)

    monkeypatch.setattr(recovery, "stale", claimed_meanwhile)
    assert recover_stale(CompletionJob.objects.all(), what="job", again=lambda row: {"status": "queued"}) == ([], [])
    assert CompletionJob.objects.get(pk=job.pk).status == "running"
