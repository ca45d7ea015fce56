"""Training and evaluation runs in-process (the task body; a real worker runs the same in test_worker.py)."""
import io

import pytest
from django.core.management import CommandError, call_command

from ml import training
from ml.models import ModelVersion, TrainingRun

pytestmark = pytest.mark.django_db


def test_train_command_quick_archetype_then_evaluate(drafted_set):
    out = io.StringIO()
    call_command("models", "train", "draft_bot", "--scope", "archetype:TST", "--quick", "--activate", stdout=out,
                 stderr=io.StringIO())
    run = TrainingRun.objects.get()
    assert run.status == "succeeded" and run.progress == 100.0 and run.parameters["epochs"] == 3
    assert run.metric_name == "held_out_top1" and 0 <= run.metric_value <= 1
    assert run.log.count("] epoch ") == 3 and "held-out top-1" in run.log and run.started <= run.finished
    version = run.result_version
    assert version.active and version.scope == "archetype:TST" and version.data_snapshot["stored"] == "TST"
    assert "succeeded" in out.getvalue()

    call_command("models", "evaluate", str(version.pk), stdout=(out := io.StringIO()), stderr=io.StringIO())
    version.refresh_from_db()
    ev = version.metrics["eval"]
    assert ev["picks"] > 0 and 0 <= ev["top1"] <= ev["top3"] <= 1
    assert ev["top1"] == pytest.approx(version.metrics["held_out"]["all"]["top1"])
    assert TrainingRun.objects.filter(job="evaluate", target_version=version, status="succeeded").exists()
    flat = training.flat_metrics(version.metrics)
    assert "eval.top1" in flat and "held_out.all.top1" in flat and not any(k.startswith("by_pick") for k in flat)


def test_quick_neural_run_registers_an_inactive_version(drafted_set):
    run = TrainingRun.objects.create(kind="draft_bot", scope="neural:TST",
                                     parameters=training.parameters_for("draft_bot", "neural:TST", {}, True))
    run = training.execute(run.pk)
    assert run.status == "succeeded", run.error + run.log
    version = run.result_version
    assert not version.active and version.config["net"]["hidden"] == [64]
    from drafts.services import _load_bot

    ranking = _load_bot(version).pick(version.config["cards"][:5], [])
    assert len(ranking) == 5


def test_failures_and_bad_parameters_are_recorded(drafted_set):
    run = TrainingRun.objects.create(kind="draft_bot", scope="archetype:TST", parameters={"epochs": 1, "wizard": 2})
    run = training.execute(run.pk)
    assert run.status == "failed" and "unknown parameters: wizard" in run.error and run.finished
    assert training.execute(run.pk).status == "failed"  # a redelivered task does nothing
    run = TrainingRun.objects.create(kind="draft_bot", scope="archetype:ZZZ", parameters={})
    assert training.execute(run.pk).status == "failed"
    with pytest.raises(CommandError, match="FAMILY:SET"):
        call_command("models", "train", "draft_bot", "--scope", "TST", stdout=io.StringIO())
    assert not ModelVersion.objects.exists()


def test_cancelled_run_stops_at_its_next_report(drafted_set, monkeypatch):
    run = TrainingRun.objects.create(kind="draft_bot", scope="archetype:TST", parameters={"epochs": 50})
    original = training.Reporter.flush

    def flush(self, force=False):
        if "epoch 2:" in "\n".join(self.lines):
            TrainingRun.objects.filter(pk=self.run.pk).update(status="cancelled")
        return original(self, force=True)
    monkeypatch.setattr(training.Reporter, "flush", flush)
    run = training.execute(run.pk)
    assert run.status == "cancelled" and run.result_version is None and not ModelVersion.objects.exists()


def test_quick_card_embeddings_on_the_sample_catalogue(catalogue):
    run = TrainingRun.objects.create(kind="card_embeddings",
                                     parameters={**training.parameters_for("card_embeddings", "", {}, True), "dim": 8,
                                                 "epochs": 3})
    run = training.execute(run.pk)
    assert run.status == "succeeded", run.error + run.log
    assert "doc2vec" in run.log and "registered" in run.log
    version = run.result_version
    assert not version.active and version.config["dim"] == 8 and version.config["vocab"] == 23
    run = training.execute(TrainingRun.objects.create(job="evaluate", kind="card_embeddings",
                                                      target_version=version).pk)
    assert run.status == "succeeded", run.error
    version.refresh_from_db()
    assert 0 <= version.metrics["eval"]["classifier_top1_clean"] <= 1
