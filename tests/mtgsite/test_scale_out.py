"""Scale-out (services stack): two Daphne processes and two Celery workers on one PostgreSQL and one Redis.

The eight people of one pod are split over the two Daphne processes (seats 0-3 on one, 4-7 on the other), so
every pack passed from seat 3 to 4 and from 7 to 0 crosses processes through the channel layer; the pod must
finish with every pick stored once and no seat left waiting for a message that went to the other process. At
the same time a batch of deck completions is queued one job per task (COMPLETION_BATCH_SIZE=1), and both
workers must take part, each job run once. bench/scale.py measures what the second process of each kind buys."""
from __future__ import annotations

import asyncio

import pytest
from django.db.models import Count

from decks.completion.service import CompletionRequest, create_job
from decks.models import CompletionJob, Deck
from decks.tasks import enqueue_completion
from drafts.models import DraftPick
from drafts.pods import service
from tests.decks.completion.conftest import tiny_corpus, tiny_models  # noqa: F401
from tests.drafts.conftest import draft_set  # noqa: F401
from tests.drafts.test_faults import Seat, counts
from tests.drafts.test_pod_live import check_complete, guest
from tests.faults import daphne, wait_until, worker

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]
JOBS = 6


def eight_person_pod():
    keys = [guest() for _ in range(8)]
    draft, _ = service.create_pod("TST", 8, "draftsim", 0, "p0", session_key=keys[0], consent=True)
    for n in range(1, 8):
        row, _ = service.join_pod(draft.pk, f"p{n}", session_key=keys[n], consent=True)
        assert row.seat == n
    return draft, keys


def test_a_pod_split_over_two_daphnes_and_completions_over_two_workers(draft_set, tiny_models, served,  # noqa: F811
                                                                       monkeypatch, settings, tmp_path):
    monkeypatch.setenv("MTG_MODEL_DIR", str(settings.MTG_MODEL_DIR))  # the workers read the models trained here
    monkeypatch.setenv("MTG_DATASET_DIR", str(settings.MTG_DATASET_DIR))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("COMPLETION_BATCH_SIZE", "1")  # one job per task: the jobs are shared out, not batched
    webs = [served(daphne(tmp_path, name=f"daphne{n}")) for n in (1, 2)]
    names = {served(worker(tmp_path, f"w{n}")).argv[-1].split("@")[0] for n in (1, 2)}  # w1-<pid>, w2-<pid>

    jobs = []
    for seed in range(JOBS):
        jobs.append(create_job(CompletionRequest("modern", [("Lightning Bolt", 4), ("Goblin Guide", 4)], [], True,
                                                 "full", seed, "manamorphosis")))
        enqueue_completion(jobs[-1])

    draft, keys = eight_person_pod()
    seats = [Seat(f"http://127.0.0.1:{webs[n // 4].port}", draft.pk, keys[n], n) for n in range(8)]

    async def everyone():
        await asyncio.gather(*(s.run(start=s.seat == 0) for s in seats))

    asyncio.run(everyone())

    out = counts(draft, seats)
    check_complete(draft, seats)  # 42 picks a seat, every acknowledged pick stored, no other seat's cards seen
    assert out["lost_picks"] == 0 and out["duplicated_picks"] == 0 and out["picks"] == 8 * 42, out
    assert not DraftPick.objects.filter(seat__draft=draft).values("seat", "pack_number", "pick_number").annotate(
        n=Count("id")).filter(n__gt=1).exists()
    assert out["stalls"] == 0, "a seat heard nothing for 5 s: a message stayed in the other process"
    for web in webs:  # each process served its four seats
        assert web.tail(10**6).count(f'"WSCONNECT /ws/pods/{draft.pk}/"') >= 4, web.tail()

    done = wait_until(lambda: (rows := list(CompletionJob.objects.filter(pk__in=[j.pk for j in jobs])))
                      and all(r.status in ("done", "failed") for r in rows) and rows, 240, "the completions")
    assert all(r.status == "done" and r.attempts == 1 for r in done), [(r.status, r.error, r.attempts) for r in done]
    assert {r.worker.split("@")[0] for r in done} == names, [r.worker for r in done]
    assert Deck.objects.filter(source="completion").count() == JOBS  # each job saved its deck once
