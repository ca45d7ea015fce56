"""Deck-completion jobs batched by the inference task: one task call claims the queued jobs (up to
COMPLETION_BATCH_SIZE), runs compatible ones through one ``Completer.complete_many`` call, and stores
each job's own result or error; a job another batch took is never run twice."""
from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from decks.models import CompletionJob
from decks.tasks import complete_deck_task
from decks.completion.models.manamorphosis.complete import Completer

pytestmark = pytest.mark.django_db


def totals(pairs):
    return sum(c for _, c in pairs)


@pytest.fixture
def batch_sizes(monkeypatch):
    """Record the number of requests of every complete_many call (the real method still runs)."""
    sizes: list[int] = []
    original = Completer.complete_many

    def spy(self, requests, *args, **kwargs):
        sizes.append(len(requests))
        return original(self, requests, *args, **kwargs)

    monkeypatch.setattr(Completer, "complete_many", spy)
    return sizes


def queue(fmt="modern", main=(("Lightning Bolt", 4),), side=(), seed=0, generate_side=True, model="manamorphosis",
          **extra):
    """A queued job (Manamorphosis unless said: the spies above watch its Completer)."""
    return CompletionJob.objects.create(format=fmt, known_main=[list(x) for x in main],
                                        known_side=[list(x) for x in side], seed=seed, model=model,
                                        generate_side=generate_side, message="Waiting for a worker", **extra)


def test_one_task_call_completes_the_queued_jobs_as_a_batch(tiny_models, batch_sizes, settings):
    settings.COMPLETION_BATCH_SIZE = 8
    burn = queue(seed=1, main=[("Lightning Bolt", 4), ("Goblin Guide", 4)], side=[("Path to Exile", 2)])
    blue = queue(fmt="legacy", seed=2, main=[("Counterspell", 4), ("Island", 10)])
    bad = queue(seed=3, main=[("Counterspell", 4)])  # not legal in Modern (stored without the request checks)
    no_side = queue(seed=4, generate_side=False)  # another setting: its own batch in the same call

    out = complete_deck_task(str(burn.pk))
    assert out["status"] == "done" and sorted(out["batch"]) == sorted(str(j.pk) for j in (burn, blue, bad, no_side))
    assert batch_sizes == [3, 1]  # (fast, with sideboard) x 3, then (fast, no sideboard) x 1
    rows = {j.pk: j for j in CompletionJob.objects.all()}
    for job in (burn, blue):
        row = rows[job.pk]
        assert row.status == "done" and row.progress == 1.0, row.error
        assert totals(row.result["main"]) == 60 and totals(row.result["side"]) == 15
        assert row.deck.main_count == 60 and row.model_version is not None
    assert dict(map(tuple, rows[burn.pk].result["main"]))["Goblin Guide"] >= 4
    assert dict(map(tuple, rows[blue.pk].result["main"]))["Counterspell"] == 4
    assert rows[bad.pk].status == "failed" and "Counterspell" in rows[bad.pk].error and rows[bad.pk].deck is None
    assert rows[no_side.pk].status == "done" and totals(rows[no_side.pk].result["side"]) == 0
    assert len({rows[j.pk].deck_id for j in (burn, blue, no_side)}) == 3

    # the other jobs' own tasks arrive later: they find their job taken and run nothing
    deck_before = rows[blue.pk].deck_id
    again = complete_deck_task(str(blue.pk))
    assert again["status"] == "done" and again["batch"] == [] and batch_sizes == [3, 1]
    assert CompletionJob.objects.get(pk=blue.pk).deck_id == deck_before


def test_batch_size_limits_the_claim(tiny_models, batch_sizes, settings):
    settings.COMPLETION_BATCH_SIZE = 2
    jobs = [queue(seed=i) for i in range(3)]
    out = complete_deck_task(str(jobs[2].pk))
    assert len(out["batch"]) == 2 and out["batch"][0] == str(jobs[2].pk)  # its own job, then the oldest queued
    assert batch_sizes == [2]
    assert CompletionJob.objects.get(pk=jobs[0].pk).status == "done"
    assert CompletionJob.objects.get(pk=jobs[1].pk).status == "queued"  # left for its own task
    complete_deck_task(str(jobs[1].pk))
    assert batch_sizes == [2, 1] and CompletionJob.objects.filter(status="done").count() == 3


def test_a_crashing_job_does_not_fail_the_rest_of_its_batch(tiny_models, monkeypatch):
    """A batch that crashes (not a per-request CompletionError) is retried one job at a time."""
    sizes = []
    original = Completer.complete_many

    def fragile(self, requests, *args, seeds=None, **kwargs):
        sizes.append(len(requests))
        if 666 in (seeds or []):
            raise RuntimeError("boom")
        return original(self, requests, *args, seeds=seeds, **kwargs)

    monkeypatch.setattr(Completer, "complete_many", fragile)
    good, poison, other = queue(seed=1), queue(seed=666), queue(fmt="legacy", main=[("Island", 20)], seed=2)
    complete_deck_task(str(good.pk))
    assert sizes == [3, 1, 1, 1]
    rows = {j.pk: j for j in CompletionJob.objects.all()}
    assert rows[good.pk].status == "done" and rows[other.pk].status == "done"
    assert rows[poison.pk].status == "failed" and "Internal error" in rows[poison.pk].error


def test_a_job_already_claimed_is_not_run_again(catalogue, batch_sizes):
    running = queue(status="running", started=timezone.now())
    finished = queue(status="done", progress=1.0)
    for job in (running, finished):
        out = complete_deck_task(str(job.pk))
        assert out["batch"] == [] and out["status"] == job.status
    assert batch_sizes == []
    assert CompletionJob.objects.get(pk=running.pk).status == "running"
    assert complete_deck_task("00000000-0000-0000-0000-000000000000")["error"] == "No such job."


def test_a_stale_running_job_is_claimed_again_by_its_redelivered_task(catalogue, settings):
    """Its worker died mid-batch: after MTG_JOB_STALE_SECONDS without a heartbeat the job's own task may take it
    again (here there is no model, so it fails with that message, proving it was run)."""
    from decks.completion import service

    service.reset_completers()
    stale = queue(status="running", started=timezone.now() - dt.timedelta(seconds=settings.MTG_JOB_STALE_SECONDS + 5),
                  attempts=1)
    fresh = queue()
    out = complete_deck_task(str(stale.pk))
    assert out["status"] == "failed" and "No active" in out["error"]
    assert sorted(out["batch"]) == sorted([str(stale.pk), str(fresh.pk)])
    assert CompletionJob.objects.get(pk=fresh.pk).status == "failed"


def test_claims_do_not_overlap(catalogue, settings):
    from decks.completion.service import claim_jobs

    jobs = [queue(seed=i) for i in range(5)]
    first = claim_jobs(jobs[0].pk, limit=3)
    second = claim_jobs(jobs[3].pk, limit=3)
    assert [j.pk for j in first] == [jobs[0].pk, jobs[1].pk, jobs[2].pk]
    assert [j.pk for j in second] == [jobs[3].pk, jobs[4].pk]
    assert claim_jobs(jobs[1].pk, limit=3) == [] and claim_jobs(jobs[4].pk) == []
    assert CompletionJob.objects.filter(status="running").count() == 5
