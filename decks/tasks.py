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
