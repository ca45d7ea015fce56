"""A tiny but real model stack for the completion tests: a generated corpus of burn and blue decks
over the 23-card sample catalogue, Doc2Vec embeddings and a diffusion model trained for a few steps
through the real management commands."""
from __future__ import annotations

import io
import json
import random

import pytest
from django.core.management import call_command

BURN_CORE = ["Goblin Guide", "Monastery Swiftspear", "Eidolon of the Great Revel", "Lightning Bolt", "Lava Spike",
             "Rift Bolt", "Skewer the Critics", "Searing Blaze", "Skullcrack", "Light Up the Stage"]
BURN_LANDS = ["Inspiring Vantage", "Sacred Foundry"]
BURN_SIDE = ["Path to Exile", "Skullcrack", "Searing Blaze", "Relentless Rats"]
BLUE_CORE = ["Counterspell", "Jace, the Mind Sculptor", "Brazen Borrower", "Fire // Ice", "Lim-Dûl's Vault"]


def burn_deck(rng: random.Random) -> dict:
    main = {name: 4 for name in rng.sample(BURN_CORE, 8)}
    for land in BURN_LANDS:
        main[land] = rng.choice([2, 3, 4])
    main["Mountain"] = 60 - sum(main.values())
    side = {"Path to Exile": 4, "Relentless Rats": rng.choice([3, 4, 5])}
    side["Skullcrack"] = min(4 - main.get("Skullcrack", 0), 15 - sum(side.values())) or 0
    side = {k: v for k, v in side.items() if v}
    side["Relentless Rats"] += 15 - sum(side.values())
    return {"format": "Modern", "main": [[k, v] for k, v in main.items()], "side": [[k, v] for k, v in side.items()]}


def blue_deck(rng: random.Random) -> dict:
    main = {name: 4 for name in BLUE_CORE}
    main["Island"] = 60 - sum(main.values()) - 4
    main["Mountain"] = 4
    side = {"Relentless Rats": 15}
    return {"format": "Legacy", "main": [[k, v] for k, v in main.items()], "side": [[k, v] for k, v in side.items()]}


def realistic_burn_deck(rng: random.Random) -> dict:
    """Modern Burn as played: 38-40 spells (nine of the core four times, a tenth 2-4 times) and 20-22 lands; a
    sideboard of Path to Exile, Skullcrack and Relentless Rats, no basic land."""
    spells = rng.sample(BURN_CORE, 10)
    main = {name: 4 for name in spells[:9]}
    main[spells[9]] = rng.choice([2, 3, 4])
    for land in BURN_LANDS:
        main[land] = rng.choice([2, 3, 4])
    main["Mountain"] = 60 - sum(main.values())
    side = {"Path to Exile": 4, "Skullcrack": min(3, 4 - main.get("Skullcrack", 0))}
    side = {k: v for k, v in side.items() if v}
    side["Relentless Rats"] = 15 - sum(side.values())
    return {"format": "Modern", "main": [[k, v] for k, v in main.items()], "side": [[k, v] for k, v in side.items()]}


def two_archetypes_deck(rng: random.Random, i: int) -> dict:
    """Legacy, two archetypes sharing 4 Lightning Bolt: Burn as played (even ``i``) and blue-red control (odd)."""
    if i % 2 == 0:
        return {**realistic_burn_deck(rng), "format": "Legacy"}
    deck = blue_deck(rng)
    main = {**dict(deck["main"]), "Lightning Bolt": 4, "Fire // Ice": rng.choice([2, 3, 4]),
            "Brazen Borrower // Petty Theft": rng.choice([2, 3, 4])}
    main.pop("Brazen Borrower", None)
    main["Island"] = 0
    main["Island"] = 60 - sum(main.values())
    return {**deck, "main": [[k, v] for k, v in main.items()]}


def import_tiny_corpus(folder, realistic: bool = False, two_archetypes: bool = False) -> None:
    """Real commands: import a generated corpus (40 decks, Modern burn and Legacy blue; written in ``folder``) and
    train embeddings (dim 8). Needs the sample catalogue. Also what bench/scale.py trains its workers' model on.
    ``realistic``: the Burn decks are :func:`realistic_burn_deck` (20-22 lands); ``two_archetypes``: Legacy decks of
    :func:`two_archetypes_deck` instead."""
    rng = random.Random(3)
    corpus = folder / "corpus.jsonl"
    with open(corpus, "w") as fh:
        for i in range(40):
            if two_archetypes:
                deck = two_archetypes_deck(rng, i)
            else:
                deck = (realistic_burn_deck(rng) if realistic else burn_deck(rng)) if i % 4 else blue_deck(rng)
            deck.update(date=f"2026-0{1 + i % 6}-1{i % 9}", source="test", event=f"Event {i}", result="1st")
            fh.write(json.dumps(deck) + "\n")
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    call_command("import_decks", corpus=str(corpus), **quiet)
    train("card_embeddings", epochs=3, dim=8, classifier_epochs=2, workers=1)


def train(kind: str, **params) -> None:
    """``manage.py models train KIND --activate --params JSON``, quietly."""
    call_command("models", "train", kind, "--activate", "--params", json.dumps(params), stdout=io.StringIO(),
                 stderr=io.StringIO())


def train_tiny_diffusion() -> None:
    """A 1-layer Manamorphosis denoiser trained for a few steps (deck_diffusion) on the imported corpus, active."""
    train("deck_diffusion", steps=25, batch=8, d_model=16, heads=2, layers=1, ff=32, side_layers=1, context_layers=1,
          eval_every=0, split_date="2026-06-01")


@pytest.fixture
def tiny_corpus(catalogue, settings, tmp_path):
    """:func:`import_tiny_corpus`: enough for the masked completer's neighbour vote; ``tiny_models`` adds a
    Manamorphosis model."""
    settings.MTG_MODEL_DIR = tmp_path / "models"
    settings.MTG_DATASET_DIR = tmp_path / "datasets"
    import_tiny_corpus(tmp_path)
    from decks.completion import service

    service.reset_completers()
    return tmp_path


@pytest.fixture
def burn_corpus(catalogue, settings, tmp_path):
    """:func:`import_tiny_corpus` with Burn decks as played (:func:`realistic_burn_deck`): the collection tests."""
    settings.MTG_MODEL_DIR = tmp_path / "models"
    settings.MTG_DATASET_DIR = tmp_path / "datasets"
    import_tiny_corpus(tmp_path, realistic=True)
    from decks.completion import service

    service.reset_completers()
    return tmp_path


@pytest.fixture
def two_archetypes_corpus(catalogue, settings, tmp_path):
    """:func:`import_tiny_corpus` of :func:`two_archetypes_deck`: Legacy Burn and blue-red control, both with Bolt."""
    settings.MTG_MODEL_DIR = tmp_path / "models"
    settings.MTG_DATASET_DIR = tmp_path / "datasets"
    import_tiny_corpus(tmp_path, two_archetypes=True)
    from decks.completion import service

    service.reset_completers()
    return tmp_path


@pytest.fixture
def tiny_models(tiny_corpus):
    """``tiny_corpus`` and :func:`train_tiny_diffusion`."""
    train_tiny_diffusion()
    from decks.completion import service

    service.reset_completers()  # a fresh process would build them from the new versions
    return tiny_corpus


@pytest.fixture
def masked_model(tiny_corpus):
    """``tiny_corpus`` and a quick masked model (deck_masked, preset quick), active."""
    from ml.models import ModelVersion

    train("deck_masked", preset="quick", split_date="2026-06-01")
    from decks.completion import service

    service.reset_completers()
    return ModelVersion.objects.get(kind="deck_masked", active=True)


@pytest.fixture
def eager_tasks():
    """Run Celery tasks in-process (the in-process shell tests; real workers are in test_completion_live)."""
    from mtgsite.celery import app

    before = (app.conf.task_always_eager, app.conf.task_eager_propagates)
    app.conf.update(task_always_eager=True, task_eager_propagates=True)
    yield
    app.conf.update(task_always_eager=before[0], task_eager_propagates=before[1])
