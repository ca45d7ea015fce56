"""Celery tasks of the decks app (run by a worker in the services stack, eagerly in the embedded one), and
their queueing (above the services they run)."""
from __future__ import annotations

import logging

from celery import shared_task
from django.db import transaction
from django.utils import timezone

from decks.analysis import analyze
from decks.completion.service import INTERNAL_ERROR, job_payload, publish_job, recover_stale_jobs, run_batch
from decks.models import CompletionJob, Deck
from plumbing import live
from plumbing.jobs import queue_on_commit
from plumbing.recovery import broker_came_back_empty, sweep_on_workers

log = logging.getLogger(__name__)


def deck_group(deck_id: int) -> str:
    return f"deck-{deck_id}"


@shared_task(name="decks.analyze_deck")
def analyze_deck(deck_id: int) -> dict:
    """Check a deck against every format, store the result and push it to the deck's websocket group."""
    with transaction.atomic():
        deck = Deck.objects.select_for_update().filter(pk=deck_id).first()
        if deck is None:
            return {"v": 1, "type": "error", "message": f"Deck {deck_id} does not exist."}
        result = analyze(deck)
        deck.analysis = result
        deck.analyzed_at = timezone.now()
        deck.save(update_fields=["analysis", "analyzed_at"])
    live.send_to_group(deck_group(deck_id), {"type": "deck.analysis", "analysis": result})
    return result


@shared_task(name="decks.complete_deck", acks_late=True, reject_on_worker_lost=True)
def complete_deck_task(job_id: str) -> dict:
    """Run deck completions as one batch: this job plus up to COMPLETION_BATCH_SIZE - 1 other queued ones
    (``decks.completion.service.run_batch``); progress and each result go to the job rows and their websocket groups.
    A task whose job another batch already took returns at once with that job's current state. Safe to run again
    (its message goes back to the queue when its worker dies): the claim lets one run through."""
    try:
        # leaves no claimed job running when it raises; the worker's name is kept on the jobs
        job, claimed = run_batch(job_id, worker=complete_deck_task.request.hostname or "")
    except Exception:
        log.exception("completion batch of job %s crashed", job_id)
        CompletionJob.objects.filter(pk=job_id, status__in=("queued", "running")).update(
            status="failed", error=INTERNAL_ERROR, finished=timezone.now())
        job = CompletionJob.objects.filter(pk=job_id).first()
        if job is not None:
            try:
                publish_job(job)
            except Exception:  # best effort (the channel layer may be down too): the batch's error is re-raised below
                log.warning("could not publish failed job %s", job_id, exc_info=True)
        raise
    if job is None:
        return {"id": job_id, "status": "failed", "error": "No such job."}
    return {**job_payload(job), "batch": [str(j.pk) for j in claimed]}


@sweep_on_workers
@shared_task(name="decks.recover_completions", ignore_result=True)
def recover_completions() -> int:
    """Every worker's sweep (``plumbing.recovery``): the jobs a dead worker left running are queued again, or
    failed with the reason once they have had their runs; after Redis came back empty, the waiting jobs' tasks
    are sent again. Returns how many were queued again."""
    again = recover_stale_jobs()
    if broker_came_back_empty("decks.completions"):
        again += list(CompletionJob.objects.filter(status="queued").exclude(pk__in=[j.pk for j in again]))
    for job in again:
        enqueue_completion(job)
    return len(again)


def enqueue_analysis(deck: Deck) -> bool:
    """Queue (or, in the embedded stack, run) the analysis of a saved deck. True when it is still pending
    (a broker outage must not lose the saved deck: the page shows the analysis as pending)."""
    try:
        analyze_deck.delay(deck.pk)
    except Exception:
        log.exception("could not queue analyze_deck for deck %s", deck.pk)
        return True
    deck.refresh_from_db(fields=["analysis", "analyzed_at"])
    return not deck.analysis


def enqueue_completion(job: CompletionJob) -> None:
    """Queue the completion of a stored job (``decks.completion.service.create_job``) once the request's transaction
    commits; with the broker down the job is marked failed, and its page says so, instead of a 500."""
    job_id = str(job.pk)
    queue_on_commit(lambda: complete_deck_task.delay(job_id), CompletionJob.objects.filter(pk=job.pk),
                    "The job could not be queued (task broker unavailable: {exc}). Try again.")
