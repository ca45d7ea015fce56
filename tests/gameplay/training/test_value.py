"""The search's learned value model as a registry kind (game_value, called game_policy until this release): trained
by a run, evaluated on fresh self-play, activated (the advisor and the learned leaf switch to it), rolled back,
uploaded; the training parameters that were the train_game_value command's flags; the old kind name as an alias."""
import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from gameplay import models_in_use
from gameplay.core.learning import value
from gameplay.core.learning.value import FEATURES, ValueModel
from ml import registry
from ml.models import ModelVersion, TrainingRun

pytestmark = pytest.mark.django_db


def in_use() -> value.ValueModel:
    """The value model the shell hands the search now (the registry asked again, not its answer of 5 s ago)."""
    models_in_use.forget()
    return models_in_use.search_models().leaf_model()


def synthetic(tmp_path):
    """A small model fitted on made-up rows, saved: a file to upload."""
    rng = np.random.default_rng(0)
    rows = rng.uniform(0, 1, (60, len(value.FEATURES))).tolist()
    model = value.fit(rows, [int(r[0] > r[16]) for r in rows], hidden=(4,), epochs=20)
    path = tmp_path / "good.safetensors"
    model.save(path)
    return path


def rows_file(path, games: int = 4, per_game: int = 30):
    """Made-up position rows of ``games`` games (seeds 0..): what a training run reads from ``from_rows``. The
    path is what these tests prove, not the model: real self-play costs about 10 CPU-s an Easy game."""
    rng = np.random.default_rng(3)
    with open(path, "w", encoding="utf-8") as fh:
        for seed in range(games):
            for _ in range(per_game):
                x = rng.uniform(0, 1, len(value.FEATURES)).round(4).tolist()
                fh.write(json.dumps({"x": x, "won": int(x[0] > x[16]), "seed": seed, "game": seed}) + "\n")
    return path


@pytest.mark.timeout(120)  # one Easy self-play game for the evaluation, in a worker process
def test_a_training_run_registers_activates_evaluates_and_rolls_back(game_catalogue, tmp_path):
    shipped = in_use()
    assert shipped.calibration is not None  # no version active: the shipped file, calibrated (bench/game_calibration.py)
    out = io.StringIO()
    call_command("models", "train", "game_value", "--activate", "--params",
                 json.dumps({"games": 0, "from_rows": [str(rows_file(tmp_path / "rows.jsonl"))], "hidden": "8",
                             "epochs": 30}), stdout=out, stderr=io.StringIO())
    run = TrainingRun.objects.get(job="train")
    assert run.status == "succeeded", run.error + run.log
    version = run.result_version
    assert version.active and version.kind == "game_value" and version.config["hidden"] == [8]
    assert version.metrics["games"] == 4 and 0 < version.metrics["valid_log_loss"] < 2
    assert registry.resolve_path(version.weights_path).is_file()
    assert in_use().info["games"] == 4  # what the search and the advisor use now

    call_command("models", "evaluate", str(version.pk), "--params", json.dumps({"games": 1, "level": "Easy"}),
                 stdout=io.StringIO(), stderr=io.StringIO())
    version.refresh_from_db()
    ev = version.metrics["eval"]
    assert ev["games"] >= 1 and ev["positions"] > 0
    assert 0 <= ev["model_brier"] <= 1 and 0 <= ev["engine_brier"] <= 1

    # another version (uploaded) made active, then rolled back: the trained one serves again
    other = registry.upload_version("game_value", "", str(synthetic(tmp_path)), {"hidden": [4]}, activate=True)
    assert other.active and in_use().info.get("games") is None
    said = io.StringIO()
    call_command("models", "rollback", "game_policy", stdout=io.StringIO(), stderr=said)  # the old name, for a release
    assert "game_policy is now game_value" in said.getvalue()
    assert ModelVersion.objects.get(kind="game_value", active=True) == version
    assert in_use().info["games"] == 4


def test_a_game_value_upload_is_checked_against_this_codes_features(tmp_path, model_dir):
    good = synthetic(tmp_path)
    v = registry.upload_version("game_value", "", str(good), {"hidden": [4]}, notes="by hand")
    assert v.version == 1 and not v.active
    with pytest.raises(Exception, match="shape|hidden|layer"):
        registry.upload_version("game_value", "", str(good), {"hidden": [5]})
    from safetensors.numpy import load_file, save_file

    other = tmp_path / "other.safetensors"
    save_file(load_file(str(good)), str(other), metadata={"format": value.FORMAT, "features": json.dumps(["life"])})
    with pytest.raises(Exception, match="features"):
        registry.upload_version("game_value", "", str(other), {"hidden": [4]})
    assert ModelVersion.objects.filter(kind="game_value").count() == 1
    models_in_use.forget()


def train(**params):
    call_command("models", "train", "game_value", "--params", json.dumps(params), stdout=io.StringIO(),
                 stderr=io.StringIO())


@pytest.mark.timeout(120)  # one Easy self-play game in a worker process
def test_the_parameters_that_were_train_game_values_flags(game_catalogue, tmp_path):
    """``models train game_value``: positions recorded before (a JSON-lines file) plus a game it plays itself in a
    worker process, fitted, registered and also written to ``out``; a malformed rows file is refused with its line."""
    rows = rows_file(tmp_path / "rows.jsonl")
    out = tmp_path / "model.safetensors"
    played = tmp_path / "played.jsonl"
    train(games=1, workers=1, seed=900, from_rows=[str(rows)], rows=str(played), out=str(out), hidden="8",
          epochs=30, level="Easy")
    model = ValueModel.load(out)
    assert model.info["games"] == 5 and model.info["hidden"] == [8]
    version = ModelVersion.objects.get(kind="game_value")
    assert not version.active and version.metrics["games"] == 5
    recorded = [json.loads(line) for line in played.read_text().splitlines()]
    assert recorded and {r["seed"] for r in recorded} == {900} and all(len(r["x"]) == len(FEATURES) for r in recorded)

    bad = tmp_path / "bad.jsonl"
    bad.write_text(rows.read_text().splitlines()[0] + "\n{\"x\": [1, 2], \"won\": 1, \"seed\": 1}\n")
    with pytest.raises(CommandError, match="bad.jsonl:2"):
        train(games=0, from_rows=[str(bad)], out=str(tmp_path / "never.safetensors"))
    with pytest.raises(CommandError, match="too few games"):
        train(games=0, from_rows=[str(played)], out=str(tmp_path / "never.safetensors"))
    with pytest.raises(CommandError, match="hidden"):
        train(games=0, hidden="wide")
    with pytest.raises(CommandError, match="level must be one of"):
        train(games=1, level="Godlike")
    assert not (tmp_path / "never.safetensors").exists()


def test_the_old_kind_name_is_an_alias_for_one_release():
    from gameplay.kinds import GAME_VALUE
    from ml import kinds

    assert kinds.get("game_policy") is kinds.get("game_value") is GAME_VALUE
    assert kinds.canonical("game_policy") == "game_value" and kinds.canonical("game_value") == "game_value"
    assert kinds.renamed("game_policy") == "game_policy is now game_value" and kinds.renamed("game_value") is None
