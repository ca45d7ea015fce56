"""The search's learned value model as a registry kind (game_policy): trained by a run, evaluated on
fresh self-play, activated (the advisor and the learned leaf switch to it), rolled back, uploaded."""
import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from gameplay.core import value
from gameplay.training import active_value_weights
from ml import registry
from ml.models import ModelVersion, TrainingRun
from tests.gameplay.conftest import card_records, game_catalogue, real_data_dir_session  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def in_use() -> value.ValueModel:
    value.set_resolver(active_value_weights)  # forget the resolver's last answer (it is re-read every 5 s)
    return value.default_model()


def synthetic(tmp_path):
    """A small model fitted on made-up rows, saved: a file to upload."""
    rng = np.random.default_rng(0)
    rows = rng.uniform(0, 1, (60, len(value.FEATURES))).tolist()
    model = value.fit(rows, [int(r[0] > r[16]) for r in rows], hidden=(4,), epochs=20)
    path = tmp_path / "good.safetensors"
    model.save(path)
    return path


def test_a_training_run_registers_activates_evaluates_and_rolls_back(game_catalogue, tmp_path):  # noqa: F811
    shipped = in_use()
    assert shipped.info["games"] >= 100  # no version active: the shipped file
    out = io.StringIO()
    call_command("models", "train", "game_policy", "--quick", "--activate", stdout=out, stderr=io.StringIO())
    run = TrainingRun.objects.get(job="train")
    assert run.status == "succeeded", run.error + run.log
    version = run.result_version
    assert version.active and version.kind == "game_policy" and version.config["hidden"] == [8]
    assert version.metrics["games"] == 5 and 0 < version.metrics["valid_log_loss"] < 2
    assert registry.resolve_path(version.weights_path).is_file()
    assert in_use().info["games"] == 5  # what the search and the advisor use now

    call_command("models", "evaluate", str(version.pk), "--params", json.dumps({"games": 2}), stdout=io.StringIO(),
                 stderr=io.StringIO())
    version.refresh_from_db()
    ev = version.metrics["eval"]
    assert ev["games"] >= 1 and ev["positions"] > 0
    assert 0 <= ev["model_brier"] <= 1 and 0 <= ev["engine_brier"] <= 1

    # another version (uploaded) made active, then rolled back: the trained one serves again
    other = registry.upload_version("game_policy", "", str(synthetic(tmp_path)), {"hidden": [4]}, activate=True)
    assert other.active and in_use().info.get("games") is None
    call_command("models", "rollback", "game_policy", stdout=io.StringIO(), stderr=io.StringIO())
    assert ModelVersion.objects.get(kind="game_policy", active=True) == version
    assert in_use().info["games"] == 5


def test_a_game_policy_upload_is_checked_against_this_codes_features(tmp_path, model_dir):
    good = synthetic(tmp_path)
    v = registry.upload_version("game_policy", "", str(good), {"hidden": [4]}, notes="by hand")
    assert v.version == 1 and not v.active
    with pytest.raises(Exception, match="shape|hidden|layer"):
        registry.upload_version("game_policy", "", str(good), {"hidden": [5]})
    from safetensors.numpy import load_file, save_file

    other = tmp_path / "other.safetensors"
    save_file(load_file(str(good)), str(other), metadata={"format": value.FORMAT, "features": json.dumps(["life"])})
    with pytest.raises(Exception, match="features"):
        registry.upload_version("game_policy", "", str(other), {"hidden": [4]})
    assert ModelVersion.objects.filter(kind="game_policy").count() == 1
    value.set_resolver(active_value_weights)
