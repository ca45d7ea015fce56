"""Refitting on every deck the site has: ``split_date=latest`` trains on every corpus deck (the shipped refit)."""
from __future__ import annotations

import pytest

from tests.decks.completion.conftest import train


def test_split_date_latest_trains_on_every_corpus_deck(tiny_corpus):
    from decks.completion.datasets import deck_arrays, resolve_split
    from decks.embeddings.service import active_embeddings
    from ml.models import ModelVersion

    arrays = deck_arrays(active_embeddings().names)
    latest = resolve_split("latest", arrays)
    assert latest == "2026-06-19"  # the day after the newest deck of the tiny corpus (2026-06-18)
    assert resolve_split("2026-05-01", arrays) == "2026-05-01"
    train("deck_masked", preset="quick", split_date="latest")
    version = ModelVersion.objects.get(kind="deck_masked", active=True)
    assert version.config["split_date"] == latest and version.metrics["test_decks"] == 0


def test_split_date_latest_without_decks_is_a_clear_error():
    import numpy as np

    from decks.completion.datasets import resolve_split

    class Empty:
        day = np.zeros(0)

        def __len__(self):
            return 0

    with pytest.raises(ValueError, match="import the deck corpus"):
        resolve_split("latest", Empty())
