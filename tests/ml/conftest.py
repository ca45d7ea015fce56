"""Fixtures of the model-management tests: a temporary model folder, a small draft set with stored
simulated drafts (so a draft bot trains in a second or two), staff and non-staff users."""
from __future__ import annotations

import io
import os

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def model_dir(settings, tmp_path):
    settings.MTG_MODEL_DIR = tmp_path / "models"
    return settings.MTG_MODEL_DIR


@pytest.fixture
def drafted_set(db):
    """The hand-made TST set and 12 stored pods drafted by the draftsim bot."""
    from django.core.management import call_command

    from tests.drafts.conftest import make_set

    make_set("TST")
    call_command("simulate_drafts", "--set", "TST", "--pods", "12", "--bots", "draftsim", "--seed", "7", "--no-decks",
                 stdout=io.StringIO())
    return "TST"


@pytest.fixture
def staff(db, django_user_model):
    return django_user_model.objects.create_user("ada", password="pw-staff-123", is_staff=True)


@pytest.fixture
def member(db, django_user_model):
    return django_user_model.objects.create_user("bob", password="pw-member-123")


def tiny_tensors(kind="archetype", cards=5, k=3):
    import torch

    return {"weights": torch.rand(cards, k), "prior": torch.rand(k), "bias": torch.rand(cards)}


def archetype_config(cards=5, k=3):
    return {"format": "archetype-v1", "name": "archetype", "cards": [f"c{i}" for i in range(cards)],
            "archetypes": [f"A{i}" for i in range(k)], "hyperparameters": {}}
