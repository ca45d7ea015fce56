"""Registry rules: one active version, rollback through the activation history, deleting only unused
versions, uploads checked before anything is written."""
import io
import pickle

import pytest
import torch
from django.core.management import CommandError, call_command
from safetensors.torch import save_file

from ml import registry
from ml.models import ActivationEvent, ModelVersion, TrainingRun
from ml.safetensors_check import UploadRejected
from tests.ml.conftest import archetype_config, tiny_tensors

pytestmark = pytest.mark.django_db
SCOPE = "archetype:TST"


def version(activate=False):
    return registry.save_version("draft_bot", tiny_tensors(), archetype_config(), scope=SCOPE, activate=activate)


def active():
    return list(ModelVersion.objects.filter(kind="draft_bot", scope=SCOPE, active=True).values_list("version", flat=True))


def test_activate_keeps_one_active_and_rollback_walks_back():
    v1 = version(activate=True)
    v2, v3 = version(), version()
    assert active() == [1]
    registry.activate_version(v2)
    registry.activate_version(v3)
    assert active() == [3] and ActivationEvent.objects.count() == 3
    assert registry.rollback("draft_bot", SCOPE).pk == v2.pk and active() == [2]
    assert registry.rollback("draft_bot", SCOPE).pk == v1.pk and active() == [1]
    with pytest.raises(registry.RegistryError, match="no earlier active version"):
        registry.rollback("draft_bot", SCOPE)
    assert active() == [1]
    with pytest.raises(registry.RegistryError, match="No active"):
        registry.rollback("deck_diffusion")
    registry.activate_version(v1)  # activating the active version records nothing
    assert ActivationEvent.objects.filter(version=v1, action="activate").count() == 1


def test_rollback_of_versions_registered_before_the_history():
    v1, v2 = version(), version()
    ModelVersion.objects.filter(pk=v2.pk).update(active=True)  # as the old registry did, no event
    assert registry.rollback("draft_bot", SCOPE).pk == v1.pk and active() == [1]


def test_delete_only_unused_versions(model_dir):
    v1, v2, v3 = version(activate=True), version(), version()
    path2 = registry.resolve_path(v2.weights_path)
    with pytest.raises(registry.RegistryError, match="is active"):
        registry.delete_version(v1)
    TrainingRun.objects.create(kind="draft_bot", scope=SCOPE, status="succeeded", result_version=v3)
    with pytest.raises(registry.RegistryError, match="in use.*training run"):
        registry.delete_version(v3)
    assert path2.exists()
    registry.delete_version(v2)
    assert not ModelVersion.objects.filter(pk=v2.pk).exists() and not path2.exists()
    assert ModelVersion.objects.count() == 2
    out = io.StringIO()
    with pytest.raises(CommandError, match="is active"):
        call_command("models", "delete", str(v1.pk), stdout=out)


def write(path, tensors, metadata=None):
    save_file(tensors, str(path), metadata=metadata)
    return path


def files(model_dir):
    return sorted(p for p in model_dir.rglob("*") if p.is_file()) if model_dir.exists() else []


def test_upload_accepts_a_matching_file(tmp_path, model_dir):
    path = write(tmp_path / "ok.safetensors", tiny_tensors())
    v = registry.upload_version("draft_bot", SCOPE, str(path), archetype_config(), notes="by hand")
    assert v.version == 1 and not v.active and v.weights_bytes == path.stat().st_size
    assert registry.resolve_path(v.weights_path).is_relative_to(model_dir)
    from drafts.services import _load_bot

    bot = _load_bot(v)
    assert bot.cards == archetype_config()["cards"]


@pytest.mark.parametrize("case", ["pickle", "torch_save", "truncated", "wrong_shape", "missing", "wrong_dtype",
                                  "too_big", "bad_config", "text"])
def test_upload_rejections_leave_no_row_and_no_file(case, tmp_path, model_dir, settings):
    config = archetype_config()
    path = tmp_path / "upload.safetensors"
    if case == "pickle":
        path.write_bytes(pickle.dumps(tiny_tensors()))
        match = "pickle"
    elif case == "torch_save":
        torch.save(tiny_tensors(), path)
        match = "zip|pickle"
    elif case == "truncated":
        write(path, tiny_tensors())
        path.write_bytes(path.read_bytes()[:-7])
        match = "truncated"
    elif case == "wrong_shape":
        write(path, {**tiny_tensors(), "weights": torch.rand(6, 3)})
        match = r"weights: shape \(6, 3\), the config needs \(5, 3\)"
    elif case == "missing":
        write(path, {"weights": torch.rand(5, 3), "prior": torch.rand(3)})
        match = "missing tensors: bias"
    elif case == "wrong_dtype":
        write(path, {**tiny_tensors(), "prior": torch.arange(3)})
        match = "prior: dtype I64"
    elif case == "too_big":
        settings.MTG_MODEL_UPLOAD_MAX_BYTES = 100
        write(path, tiny_tensors())
        match = "limited to"
    elif case == "bad_config":
        write(path, tiny_tensors())
        config = {"format": "archetype-v1"}
        match = "config does not fit"
    else:
        path.write_text('{"weights": [1, 2, 3]}')
        match = "JSON text"
    with pytest.raises(UploadRejected, match=match):
        registry.upload_version("draft_bot", SCOPE, str(path), config)
    assert not ModelVersion.objects.exists() and files(model_dir) == []
    with pytest.raises(CommandError, match="rejected"):
        import json

        call_command("models", "upload", str(path), "--kind", "draft_bot", "--scope", SCOPE, "--config",
                     json.dumps(config), stdout=io.StringIO())
    assert not ModelVersion.objects.exists() and files(model_dir) == []


def test_embeddings_upload_needs_the_names_metadata(tmp_path):
    import json

    tensors = {"embeddings": torch.rand(3, 4).half(), "classifier.weight": torch.rand(3, 4).half(),
               "classifier.bias": torch.rand(3)}
    config = {"vocab": 3, "dim": 4}
    bare = write(tmp_path / "bare.safetensors", tensors)
    with pytest.raises(UploadRejected, match="metadata 'names' is missing"):
        registry.upload_version("card_embeddings", "", str(bare), config)
    good = write(tmp_path / "good.safetensors", tensors, {"names": json.dumps(["a", "b", "c"])})
    v = registry.upload_version("card_embeddings", "", str(good), config, activate=True)
    assert registry.load_active("card_embeddings").version.pk == v.pk


def test_models_command_list_activate_rollback():
    version(activate=True)
    v2 = version()
    out = io.StringIO()
    call_command("models", "activate", str(v2.pk), stdout=out)
    assert "now active" in out.getvalue() and active() == [2]
    call_command("models", "list", stdout=(out := io.StringIO()))
    assert "archetype:TST" in out.getvalue() and out.getvalue().count("draft_bot") == 2
    call_command("models", "rollback", "draft_bot", "--scope", SCOPE, stdout=(out := io.StringIO()))
    assert active() == [1]
    with pytest.raises(CommandError, match="no model version 999"):
        call_command("models", "activate", "999", stdout=io.StringIO())


def test_export_keeps_the_weights_of_a_version_registered_in_place(tmp_path, monkeypatch):
    """A shipped default is registered where it lies (ml/weights/); exporting a newer version over that file
    must not change the weights of the version registered on it (it may still be rolled back to)."""
    from ml import defaults

    monkeypatch.setattr(defaults, "WEIGHTS_DIR", tmp_path / "weights")
    monkeypatch.setattr(defaults, "MANIFEST", tmp_path / "weights" / "manifest.json")
    shipped_file = tmp_path / "weights" / "draft_bot.safetensors"
    shipped_file.parent.mkdir()
    save_file({k: v.contiguous() for k, v in tiny_tensors().items()}, str(shipped_file))
    old = registry.register_file("draft_bot", shipped_file, archetype_config(), activate=True)
    new = registry.save_version("draft_bot", tiny_tensors(), archetype_config(), activate=True)
    defaults.export_active(kinds=("draft_bot",), scoped_kinds=())
    old.refresh_from_db()
    assert registry.sha256_file(shipped_file) == new.weights_sha256
    assert registry.sha256_file(registry.resolve_path(old.weights_path)) == old.weights_sha256
    registry.activate_version(old)  # and rolling back still loads the old weights
    assert registry.sha256_file(registry.resolve_path(registry.active_version("draft_bot").weights_path)) == old.weights_sha256


def test_the_active_cache_never_serves_another_rows_config():
    """load_active's per-process cache: a row with the same id and the same weights is not the same version when it
    was written again (SQLite reuses the id of a rolled-back row; a deterministic quick training gives the same
    weights) or when its config changed; a clean-clone run once served a stale config that way."""
    import datetime as dt

    v = version(activate=True)
    first = registry.load_active("draft_bot", SCOPE)
    assert registry.load_active("draft_bot", SCOPE) is first  # cached
    ModelVersion.objects.filter(pk=v.pk).update(config={**v.config, "note": "changed"})
    assert registry.load_active("draft_bot", SCOPE).config["note"] == "changed"
    ModelVersion.objects.filter(pk=v.pk).update(config=v.config, created=v.created + dt.timedelta(seconds=1))
    again = registry.load_active("draft_bot", SCOPE)
    assert "note" not in again.config and again.version.created == v.created + dt.timedelta(seconds=1)


@pytest.mark.django_db
def test_the_active_version_is_one_registry_call():
    """``active_version`` is the one way the apps ask for a kind's active version: it raises with what to do, or
    answers None when asked not to require one (issue 37)."""
    from ml.registry import NoActiveModel, active_version

    with pytest.raises(NoActiveModel, match="No active draft_bot model for nowhere"):
        active_version("draft_bot", "nowhere")
    assert active_version("draft_bot", "nowhere", required=False) is None
