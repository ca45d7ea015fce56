"""train_draftbot end to end on logs made here: a version is registered, activated only when better,
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
    call_command("train_draftbot", "--bot", "archetype", "--logs", str(logs_file), "--epochs", "3", "--plot", str(plot),
                 stdout=out, stderr=io.StringIO())
    assert "archetype:TST v1" in out.getvalue() and "now active" in out.getvalue()
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
    call_command("train_draftbot", "--bot", "archetype", "--logs", str(logs_file), "--epochs", "1", "--seed", "1",
                 stdout=(out := io.StringIO()), stderr=io.StringIO())
    second = ModelVersion.objects.get(kind="draft_bot", scope="archetype:TST", version=2)
    if second.metrics["held_out"]["all"]["top1"] <= held["top1"]:
        assert not second.active and "not activated" in out.getvalue()
    assert ModelVersion.objects.filter(kind="draft_bot", scope="archetype:TST", active=True).count() == 1


def test_train_refuses_bad_logs(draft_set, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("expansion,draft_id\nTST,x\n")
    with pytest.raises(CommandError, match="missing columns"):
        call_command("train_draftbot", "--bot", "archetype", "--logs", str(bad), stdout=io.StringIO())
    with pytest.raises(CommandError):
        call_command("train_draftbot", "--bot", "wizard", "--logs", str(bad), stdout=io.StringIO())


def test_train_on_stored_drafts(draft_set):
    from ml.models import ModelVersion

    call_command("simulate_drafts", "--set", "TST", "--pods", "12", "--bots", "draftsim", "--seed", "7", "--no-decks",
                 stdout=io.StringIO())
    out = io.StringIO()
    call_command("train_draftbot", "--bot", "archetype", "--stored", "TST", "--kind", "simulated", "--epochs", "2",
                 stdout=out, stderr=io.StringIO())
    version = ModelVersion.objects.get(scope="archetype:TST")
    assert version.data_snapshot["logs"] == "stored TST drafts (simulated)" and version.active
    with pytest.raises(CommandError, match="no stored online drafts of TST"):
        call_command("train_draftbot", "--bot", "archetype", "--stored", "TST", "--kind", "online", stdout=io.StringIO())


def test_trained_bots_ship_and_register_on_a_fresh_site(logs_file, tmp_path, monkeypatch):
    from ml import defaults
    from ml.models import ModelVersion

    monkeypatch.setattr(defaults, "WEIGHTS_DIR", tmp_path / "weights")
    monkeypatch.setattr(defaults, "MANIFEST", tmp_path / "weights" / "manifest.json")
    call_command("train_draftbot", "--bot", "archetype", "--logs", str(logs_file), "--epochs", "2",
                 stdout=io.StringIO(), stderr=io.StringIO())
    call_command("register_models", export=True, stdout=io.StringIO())
    entries = defaults.shipped()
    assert [(e["kind"], e["scope"], e["file"]) for e in entries] == [
        ("draft_bot", "archetype:TST", "drafts/archetype-TST.safetensors")]
    sha = entries[0]["sha256"]
    ModelVersion.objects.all().delete()
    call_command("register_models", no_train=True, stdout=io.StringIO(), stderr=io.StringIO())
    version = ModelVersion.objects.get(kind="draft_bot", scope="archetype:TST")
    assert version.active and version.weights_sha256 == sha

    from drafts.services import get_bot, set_list

    assert get_bot("archetype", set_list("TST"))[1].pk == version.pk
