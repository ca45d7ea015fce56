"""The Manamorphosis kind (deck_diffusion) through a training run and an evaluation run: the functions it
registered with ml.kinds, called by ml.training with the run's progress."""
import pytest

from ml import training
from ml.models import TrainingRun

pytestmark = pytest.mark.django_db

TINY = {"steps": 12, "batch": 8, "d_model": 16, "heads": 2, "layers": 1, "ff": 32, "side_layers": 1,
        "context_layers": 1, "eval_every": 0, "split_date": "2026-06-01"}


def test_a_diffusion_run_trains_registers_and_evaluates(tiny_corpus):
    run = training.execute(TrainingRun.objects.create(kind="deck_diffusion", parameters={**TINY, "quick": True}).pk)
    assert run.status == "succeeded", run.error + run.log
    assert run.progress == 100.0 and run.metric_name in ("loss", "val") and "decks:" in run.log and "registered" in run.log
    version = run.result_version
    assert not version.active and version.config["model"]["d_model"] == 16 and version.notes.startswith("Deck completion diffusion · trained on")
    run = training.execute(TrainingRun.objects.create(job="evaluate", kind="deck_diffusion", target_version=version,
                                                      parameters={"n": 3, "known": [10], "steps": 5}).pk)
    assert run.status == "succeeded", run.error + run.log
    version.refresh_from_db()
    assert 0.0 <= version.metrics["eval"]["main_recall_k10"] <= 1.0 and run.metric_name == "main_recall_k10"


def test_a_run_without_embeddings_fails_with_the_reason(db, settings, tmp_path):
    settings.MTG_MODEL_DIR = tmp_path
    run = training.execute(TrainingRun.objects.create(kind="deck_masked", parameters={"preset": "quick"}).pk)
    assert run.status == "failed" and "train card_embeddings first" in run.error
    run = training.execute(TrainingRun.objects.create(kind="deck_masked", parameters={"preset": "large"}).pk)
    assert run.status == "failed" and "preset: quick or default" in run.error
