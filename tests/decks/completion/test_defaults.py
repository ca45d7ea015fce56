"""Shipped default models: export the active versions, register them on a fresh database, refuse tampered files."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from ml import defaults
from ml.models import ModelVersion, TrainingRun

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]


@pytest.fixture
def weights_dir(tmp_path, monkeypatch):
    folder = tmp_path / "weights"
    monkeypatch.setattr(defaults, "WEIGHTS_DIR", folder)
    monkeypatch.setattr(defaults, "MANIFEST", folder / "manifest.json")
    return folder


def test_export_then_register_on_a_fresh_registry(tiny_models, weights_dir):
    call_command("register_models", export=True, stdout=io.StringIO())
    assert {e["kind"] for e in defaults.shipped()} == {"card_embeddings", "deck_diffusion"}
    TrainingRun.objects.all().delete()  # the fixtures' training runs protect the versions they made
    ModelVersion.objects.all().delete()
    out = io.StringIO()
    call_command("register_models", no_train=True, stdout=out)
    assert ModelVersion.objects.filter(active=True).count() == 2, out.getvalue()
    # idempotent: a second run registers nothing new
    call_command("register_models", no_train=True, stdout=io.StringIO())
    assert ModelVersion.objects.count() == 2
    from decks.completion import service

    service.reset_completers()
    done = service.get_completer().complete([("Lightning Bolt", 4)], [], "modern", seed=0)
    assert sum(c for _, c in done.main) == 60


def test_tampered_shipped_file_is_refused(tiny_models, weights_dir):
    call_command("register_models", export=True, stdout=io.StringIO())
    TrainingRun.objects.all().delete()  # the fixtures' training runs protect the versions they made
    ModelVersion.objects.all().delete()
    path = weights_dir / "deck_diffusion.safetensors"
    path.write_bytes(path.read_bytes()[:-10] + b"0123456789")
    out = io.StringIO()
    call_command("register_models", no_train=True, stdout=out)
    assert "does not match its manifest checksum" in out.getvalue()
    assert not ModelVersion.objects.filter(kind="deck_diffusion").exists()
    assert ModelVersion.objects.filter(kind="card_embeddings", active=True).exists()
