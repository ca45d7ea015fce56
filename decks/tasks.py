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
    """Run one deck completion; progress and the result go to the job row and its websocket group."""
    import logging

    from decks.completion import publish_job, job_payload, run_job
    from decks.models import CompletionJob

    try:
        return job_payload(run_job(job_id))
    except CompletionJob.DoesNotExist:
        return {"id": job_id, "status": "failed", "error": "No such job."}
    except Exception:
        logging.getLogger(__name__).exception("completion job %s crashed", job_id)
        CompletionJob.objects.filter(pk=job_id).update(
            status="failed", error="Internal error while completing the deck; nothing was saved.", finished=timezone.now())
        job = CompletionJob.objects.filter(pk=job_id).first()
        if job is not None:
            publish_job(job)
        raise
