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


def test_the_staff_refit_action_trains_on_every_deck(client, tiny_corpus, django_user_model,
                                                      django_capture_on_commit_callbacks, monkeypatch):
    """The staff page's 'Refit on every deck' box: the run gets split_date=latest and the version learns every deck."""
    from ml.models import ModelVersion, TrainingRun
    from ml.tasks import train_task

    monkeypatch.setattr(train_task, "apply_async", lambda args: train_task.apply(args=args))  # here, on both stacks
    staff = django_user_model.objects.create_user("ada", password="x", is_staff=True)
    client.force_login(staff)
    with django_capture_on_commit_callbacks(execute=True):
        r = client.post("/models/train/", {"kind": "deck_masked", "parameters": "{}", "quick": "on", "refit": "on",
                                           "activate": "on"})
    assert r.status_code == 302, r.content.decode()[-2000:]
    run = TrainingRun.objects.filter(kind="deck_masked").get()  # (the fixture trained the card embeddings)
    assert run.parameters["split_date"] == "latest" and run.status == "succeeded", run.error
    assert ModelVersion.objects.get(kind="deck_masked", active=True).config["split_date"] == "2026-06-19"


def test_an_evaluation_never_uses_a_ranker_fitted_after_its_split(tiny_corpus):
    """A completer built for a dated split (benches, evaluations) refuses a deck_rank refit that saw the held-out
    decks; the site's completer (no split) uses it."""
    from decks.completion.completers import build_masked_completer
    from ml.registry import NoActiveModel

    train("deck_rank", months=2, per_month=20, val=10, epochs=2, width=16, layers=1, heads=2, slots=16,
          split_date="latest")
    assert build_masked_completer().rank_version is not None
    with pytest.raises(NoActiveModel, match="after the split"):
        build_masked_completer(split_date="2026-05-01")
