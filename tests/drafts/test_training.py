"""models train draft_bot end to end on logs made here: a version is registered, activated only when better,
and from then on is what the bot's name means (pages, API, simulations)."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command


@pytest.fixture
def logs_file(draft_set, tmp_path):
    """20 simulated 8-seat pods of the draftsim bot, exported as a 17Lands file."""
    from drafts.models import Draft

    call_command("simulate_drafts", "--set", "TST", "--pods", "20", "--bots", "draftsim", "--seed", "100", "--no-decks",
                 stdout=io.StringIO())
    path = tmp_path / "draft_data.TST.csv.gz"
    call_command("export_drafts", "--set", "TST", "--out", str(path), stdout=io.StringIO())
    Draft.objects.all().delete()
    return path


def test_train_archetype_registers_activates_and_is_used(logs_file, client, tmp_path):
    from drafts.services import get_bot, set_list
    from ml.models import ModelVersion

    out = io.StringIO()
    plot = tmp_path / "loss.svg"
    call_command("models", "train", "draft_bot", "--scope", "archetype:", "--param", f"logs={logs_file}",
                 "--param", "epochs=3", "--param", f"plot={plot}", "--activate-if-better", stdout=out,
                 stderr=io.StringIO())
    assert "draft_bot[archetype:TST] v1 (active)" in out.getvalue()
    version = ModelVersion.objects.get(kind="draft_bot", scope="archetype:TST")
    assert version.active and version.weights_bytes < 100_000
    held = version.metrics["held_out"]["all"]
    assert held["picks"] > 0 and 0 < held["top1"] <= held["top3"] <= 1
    assert len(version.metrics["history"]["train_loss"]) == 3
    assert b"<svg" in plot.read_bytes()[:400]

    bot, used = get_bot("archetype", set_list("TST"))
    assert used.pk == version.pk and bot.cards[: 3] == version.config["cards"][:3]
    page = client.get("/drafts/bots/")
    assert b"archetype:TST" in page.content
    loss = client.get(f"/drafts/bots/versions/{version.pk}/loss.svg")
    assert loss.status_code == 200 and b"<svg" in loss.content[:400]

    # a worse run (1 epoch from the same start) is registered but does not replace the active version
    call_command("models", "train", "draft_bot", "--scope", "archetype:TST", "--param", f"logs={logs_file}",
                 "--param", "epochs=1", "--param", "seed=1", "--activate-if-better", stdout=(out := io.StringIO()),
                 stderr=io.StringIO())
    second = ModelVersion.objects.get(kind="draft_bot", scope="archetype:TST", version=2)
    if second.metrics["held_out"]["all"]["top1"] <= held["top1"]:
        assert not second.active and "draft_bot[archetype:TST] v2" in out.getvalue() and "(active)" not in out.getvalue()
    assert ModelVersion.objects.filter(kind="draft_bot", scope="archetype:TST", active=True).count() == 1


def test_train_refuses_bad_logs(draft_set, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("expansion,draft_id\nTST,x\n")
    from ml.models import TrainingRun

    with pytest.raises(CommandError, match="missing columns"):
        call_command("models", "train", "draft_bot", "--scope", "archetype:", "--param", f"logs={bad}",
                     stdout=io.StringIO(), stderr=io.StringIO())
    runs = TrainingRun.objects.count()
    with pytest.raises(CommandError, match="FAMILY:SET"):
        call_command("models", "train", "draft_bot", "--scope", "wizard:", "--param", f"logs={bad}",
                     stdout=io.StringIO())
    with pytest.raises(CommandError, match="parameter epochs: 'many' is not a int"):
        call_command("models", "train", "draft_bot", "--scope", "archetype:", "--param", "epochs=many",
                     stdout=io.StringIO())
    with pytest.raises(CommandError, match="parameter consented: 'maybe' is not a bool"):
        call_command("models", "train", "draft_bot", "--scope", "archetype:TST", "--param", "consented=maybe",
                     stdout=io.StringIO())
    with pytest.raises(CommandError, match="unknown parameters: bot"):
        call_command("models", "train", "draft_bot", "--scope", "archetype:TST", "--param", "bot=wizard",
                     stdout=io.StringIO())
    assert TrainingRun.objects.count() == runs  # refused before any run was written


def test_train_on_stored_drafts(draft_set):
    from ml.models import ModelVersion

    call_command("simulate_drafts", "--set", "TST", "--pods", "12", "--bots", "draftsim", "--seed", "7", "--no-decks",
                 stdout=io.StringIO())
    out = io.StringIO()
    call_command("models", "train", "draft_bot", "--scope", "archetype:TST", "--param", "stored=true",
                 "--param", "draft_kind=simulated", "--param", "epochs=2", "--activate-if-better", stdout=out,
                 stderr=io.StringIO())
    version = ModelVersion.objects.get(scope="archetype:TST")
    assert version.data_snapshot["logs"] == "stored TST drafts (simulated)" and version.active
    with pytest.raises(CommandError, match="no stored online drafts of TST"):
        call_command("models", "train", "draft_bot", "--scope", "archetype:TST", "--param", "stored=yes",
                     "--param", "draft_kind=online", stdout=io.StringIO(), stderr=io.StringIO())


def test_trained_bots_ship_and_register_on_a_fresh_site(logs_file, tmp_path, monkeypatch):
    from ml import defaults
    from ml.models import ModelVersion, TrainingRun

    monkeypatch.setattr(defaults, "WEIGHTS_DIR", tmp_path / "weights")
    monkeypatch.setattr(defaults, "MANIFEST", tmp_path / "weights" / "manifest.json")
    call_command("models", "train", "draft_bot", "--scope", "archetype:", "--param", f"logs={logs_file}",
                 "--param", "epochs=2", "--activate-if-better", stdout=io.StringIO(), stderr=io.StringIO())
    call_command("register_models", export=True, stdout=io.StringIO())
    entries = defaults.shipped()
    assert [(e["kind"], e["scope"], e["file"]) for e in entries] == [
        ("draft_bot", "archetype:TST", "drafts/archetype-TST.safetensors")]
    sha = entries[0]["sha256"]
    TrainingRun.objects.all().delete()  # the run that made the version protects it
    ModelVersion.objects.all().delete()
    call_command("register_models", no_train=True, stdout=io.StringIO(), stderr=io.StringIO())
    version = ModelVersion.objects.get(kind="draft_bot", scope="archetype:TST")
    assert version.active and version.weights_sha256 == sha

    from drafts.services import get_bot, set_list

    assert get_bot("archetype", set_list("TST"))[1].pk == version.pk


def test_evaluate_a_version_on_a_split_to_a_file(logs_file, tmp_path):
    import json

    from ml.models import ModelVersion

    call_command("models", "train", "draft_bot", "--scope", "archetype:", "--param", f"logs={logs_file}",
                 "--param", "epochs=1", "--activate", stdout=io.StringIO(), stderr=io.StringIO())
    out = tmp_path / "eval.json"
    call_command("models", "evaluate", "draft_bot", "--scope", "archetype:TST", "--param", f"logs={logs_file}",
                 "--param", "split=all", "--param", "limit=400", "--out", str(out), stdout=io.StringIO(),
                 stderr=io.StringIO())
    report = json.loads(out.read_text())
    assert report["split"] == "all picks" and report["picks"] == 400 and 0 <= report["top1"] <= report["top3"] <= 1
    assert ModelVersion.objects.get(scope="archetype:TST").metrics["eval"] == report
    with pytest.raises(CommandError, match="no active draft_bot"):
        call_command("models", "evaluate", "draft_bot", "--scope", "neural:TST", stdout=io.StringIO())
