"""The training tests write model versions into a temporary model folder (as the model-management tests do)."""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def model_dir(settings, tmp_path):
    settings.MTG_MODEL_DIR = tmp_path / "models"
    return settings.MTG_MODEL_DIR
