"""The game value model is a registered version like every other kind: the shipped default (ml/weights/manifest.json)
is registered on setup (``manage.py register_models``) and /models/ lists it with its calibration on held-out games
(``bench/game_calibration.py``)."""
import io
import json
import shutil

import pytest
from django.core.management import call_command

from gameplay.core.learning import value
from ml import defaults
from ml.models import ModelVersion

pytestmark = pytest.mark.django_db


@pytest.fixture
def shipped_value_only(tmp_path, monkeypatch, settings):
    """A weights folder holding only the shipped game_value file and its manifest entry (the real ones)."""
    settings.MTG_MODEL_DIR = tmp_path / "models"
    entry = next(e for e in defaults.shipped() if e["kind"] == "game_value")
    folder = tmp_path / "weights"
    folder.mkdir()
    shutil.copyfile(defaults.WEIGHTS_DIR / entry["file"], folder / entry["file"])
    (folder / "manifest.json").write_text(json.dumps([entry]))
    monkeypatch.setattr(defaults, "WEIGHTS_DIR", folder)
    monkeypatch.setattr(defaults, "MANIFEST", folder / "manifest.json")
    return entry


def test_the_shipped_value_model_is_the_calibrated_default():
    entry = next(e for e in defaults.shipped() if e["kind"] == "game_value")
    assert entry["file"] == value.DEFAULT_WEIGHTS.name
    model = value.ValueModel.load(value.DEFAULT_WEIGHTS)
    assert model.calibration is not None and model.shown_source in ("value", "engine", "baseline", "blend", "logistic")
    cal = entry["metrics"]["calibration"]
    assert cal["heldout_games"] > 0 and cal["heldout_positions"] > 0  # (the targets are the bench's: its JSON)
    for phase in ("turns_1_3", "turns_4_7", "turns_8_plus"):
        assert 0 <= cal[f"ece_{phase}"] <= 1 and 0 <= cal[f"brier_{phase}"] <= 1


def test_setup_registers_it_and_models_page_lists_it_with_its_calibration(shipped_value_only, client,
                                                                            django_user_model):
    out = io.StringIO()
    call_command("register_models", no_train=True, stdout=out, stderr=io.StringIO())
    version = ModelVersion.objects.get(kind="game_value")
    assert version.active and version.version == 1, out.getvalue()
    assert version.metrics["calibration"]["ece_all"] == shipped_value_only["metrics"]["calibration"]["ece_all"]
    call_command("register_models", no_train=True, stdout=io.StringIO())  # idempotent
    assert ModelVersion.objects.filter(kind="game_value").count() == 1

    client.force_login(django_user_model.objects.create_user("ada", password="pw-staff-123", is_staff=True))
    page = client.get("/models/").content.decode()
    assert 'data-kind="game_value"' in page and "Game value model" in page
    assert "calibration.ece_turns_1_3" in page and "calibration.brier_all" in page  # the columns' keys
    assert "calibrated" in page  # the version's notes
    assert f"{shipped_value_only['metrics']['calibration']['ece_all']:.3g}"[:4] in page
