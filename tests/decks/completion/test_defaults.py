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


def test_the_refit_ships_active_and_the_dated_split_version_ships_for_the_figures(tiny_corpus, weights_dir):
    """Ship the refit on every deck (split_date = latest, active) with the dated-split version the held-out figures
    come from (--figures): on a fresh registry the refit is active and the figures version registered, inactive,
    and found by the benches (figures_versions)."""
    from decks.completion.completers import figures_versions
    from tests.decks.completion.conftest import train

    train("deck_masked", preset="quick", split_date="2026-06-01")
    dated = ModelVersion.objects.get(kind="deck_masked", active=True)
    train("deck_masked", preset="quick", split_date="latest")
    refit = ModelVersion.objects.get(kind="deck_masked", active=True)
    assert refit.pk != dated.pk and refit.config["split_date"] == "2026-06-19"
    with pytest.raises(Exception, match="--figures goes with"):
        call_command("register_models", export=True, figures=dated.pk, stdout=io.StringIO())
    call_command("register_models", export=True, kind="deck_masked", figures=dated.pk, stdout=io.StringIO())
    files = {e["file"]: e for e in defaults.shipped()}
    assert files["deck_masked.safetensors"]["config"]["split_date"] == "2026-06-19"
    assert files["deck_masked.figures.safetensors"]["config"]["role"] == "figures"
    TrainingRun.objects.all().delete()
    ModelVersion.objects.filter(kind="deck_masked").delete()
    call_command("register_models", no_train=True, stdout=io.StringIO())
    active = ModelVersion.objects.get(kind="deck_masked", active=True)
    assert active.config["split_date"] == "2026-06-19" and active.config.get("role") is None
    figures = ModelVersion.objects.get(kind="deck_masked", active=False)
    assert figures.config["split_date"] == "2026-06-01" and figures_versions() == (figures, None)


def test_a_figures_version_shipped_before_keeps_its_own_weights_when_the_refit_ships(tiny_corpus, weights_dir):
    """The path the site really takes: the dated-split version was the shipped default (registered in place on
    ``deck_masked.safetensors``); a refit is trained and shipped over that file with the dated one as --figures.
    The figures file must hold the dated version's weights, not the refit's (an export read the dated version's
    path before the refit's copy moved it: the shipped deck_rank.figures was the refit, its checksum refused on
    setup); every manifest entry matches its file, and a fresh registry gets both back."""
    from ml.registry import sha256_file
    from tests.decks.completion.conftest import train

    train("deck_masked", preset="quick", split_date="2026-06-01")
    call_command("register_models", export=True, kind="deck_masked", stdout=io.StringIO())
    TrainingRun.objects.all().delete()
    ModelVersion.objects.filter(kind="deck_masked").delete()
    call_command("register_models", no_train=True, stdout=io.StringIO())
    dated = ModelVersion.objects.get(kind="deck_masked", active=True)  # registered in place on the shipped file
    assert defaults.resolve_path(dated.weights_path).resolve() == (weights_dir / "deck_masked.safetensors").resolve()
    dated_sha = dated.weights_sha256

    train("deck_masked", preset="quick", split_date="latest")
    call_command("register_models", export=True, kind="deck_masked", figures=dated.pk, stdout=io.StringIO())
    for entry in defaults.shipped():
        assert sha256_file(weights_dir / entry["file"]) == entry["sha256"], entry["file"]
    assert sha256_file(weights_dir / "deck_masked.figures.safetensors") == dated_sha
    dated.refresh_from_db()
    assert sha256_file(defaults.resolve_path(dated.weights_path)) == dated_sha  # its own copy, still rollback-able

    TrainingRun.objects.all().delete()
    ModelVersion.objects.filter(kind="deck_masked").delete()
    out = io.StringIO()
    call_command("register_models", no_train=True, stdout=out)
    assert "does not match" not in out.getvalue()
    assert ModelVersion.objects.filter(kind="deck_masked", active=False, weights_sha256=dated_sha).exists()


def test_a_figures_version_shipped_at_half_size_loads_back_as_float32(tiny_corpus, weights_dir):
    """--half: the figures version's float tensors are shipped as float16 (the weight budget of ml/weights), its
    manifest checksum is the float16 file's, setup registers it (inactive) and loading casts it back to float32:
    the dated version's weights rounded to float16, which the completer runs on."""
    import torch
    from safetensors.torch import load_file

    from decks.completion.completers import build_masked_completer, figures_versions
    from ml.registry import load_version, sha256_file
    from tests.decks.completion.conftest import train

    train("deck_masked", preset="quick", split_date="2026-06-01")
    dated = ModelVersion.objects.get(kind="deck_masked", active=True)
    train("deck_masked", preset="quick", split_date="latest")
    with pytest.raises(Exception, match="--half goes with --figures"):
        call_command("register_models", export=True, kind="deck_masked", half=True, stdout=io.StringIO())
    call_command("register_models", export=True, kind="deck_masked", figures=dated.pk, half=True,
                 stdout=io.StringIO())
    files = {e["file"]: e for e in defaults.shipped()}
    entry = files["deck_masked.figures.safetensors"]
    assert entry["config"]["storage"] == "float16" and entry["config"]["role"] == "figures"
    assert "storage" not in files["deck_masked.safetensors"]["config"]
    path = weights_dir / "deck_masked.figures.safetensors"
    assert sha256_file(path) == entry["sha256"] != dated.weights_sha256
    stored = load_file(str(path))
    assert all(t.dtype == torch.float16 for t in stored.values() if t.is_floating_point())
    original = load_version(dated).tensors

    TrainingRun.objects.all().delete()
    ModelVersion.objects.filter(kind="deck_masked").delete()
    out = io.StringIO()
    call_command("register_models", no_train=True, stdout=out)
    assert "does not match" not in out.getvalue()
    figures, _ = figures_versions()
    assert figures is not None and not figures.active and figures.config["split_date"] == "2026-06-01"
    loaded = load_version(figures).tensors
    assert set(loaded) == set(original)
    for name, tensor in loaded.items():
        if original[name].is_floating_point():
            assert tensor.dtype == torch.float32
            assert torch.equal(tensor, original[name].to(torch.float16).float())
    completer = build_masked_completer(version=figures, split_date="2026-06-01", rank=False)
    assert completer.version == figures
