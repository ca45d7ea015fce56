"""Celery tasks of the decks app (run by a worker in the services stack, eagerly in the embedded one)."""
from __future__ import annotations

from asgiref.sync import async_to_sync
from celery import shared_task
from channels.layers import get_channel_layer
from django.db import transaction
from django.utils import timezone

from decks.analysis import analyze
from decks.models import Deck


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
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(deck_group(deck_id), {"type": "deck.analysis", "analysis": result})
    return result


@shared_task(name="decks.complete_deck", acks_late=True)
def complete_deck_task(job_id: str) -> dict:
    """Run deck completions as one batch: this job plus up to COMPLETION_BATCH_SIZE - 1 other queued ones
    (``decks.completion.run_batch``); progress and each result go to the job rows and their websocket groups.
    A task whose job another batch already took returns at once with that job's current state."""
    import logging

    from decks.completion import INTERNAL_ERROR, job_payload, publish_job, run_batch
    from decks.models import CompletionJob

    try:
        job, claimed = run_batch(job_id)  # leaves no claimed job running when it raises
    except Exception:
        logging.getLogger(__name__).exception("completion batch of job %s crashed", job_id)
        CompletionJob.objects.filter(pk=job_id, status__in=("queued", "running")).update(
            status="failed", error=INTERNAL_ERROR, finished=timezone.now())
        job = CompletionJob.objects.filter(pk=job_id).first()
        if job is not None:
            try:
                publish_job(job)
            except Exception:
                pass
        raise
    if job is None:
        return {"id": job_id, "status": "failed", "error": "No such job."}
    return {**job_payload(job), "batch": [str(j.pk) for j in claimed]}
