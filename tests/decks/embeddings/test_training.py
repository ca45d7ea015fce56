"""manage.py models train card_embeddings on the 23-card test catalogue (tiny dim/epochs), then the service on top
of it."""
import io
import json

import pytest
from django.core.management import call_command

from decks.models import Card
from ml.models import ModelVersion

pytestmark = pytest.mark.django_db

TINY = dict(epochs=3, dim=8, classifier_epochs=2, workers=1)


@pytest.fixture
def model_dir(settings, tmp_path):
    settings.MTG_MODEL_DIR = tmp_path / "models"
    return settings.MTG_MODEL_DIR


def run(activate=True, **options):
    out = io.StringIO()
    call_command("models", "train", "card_embeddings", *(["--activate"] if activate else []),
                 "--params", json.dumps({**TINY, **options}), stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_similar_cards_is_empty_without_an_active_version(db):
    from decks.embeddings.service import similar_cards

    assert similar_cards("Lightning Bolt") == []


def test_trains_registers_and_activates(catalogue, model_dir):
    from decks.embeddings.service import active_embeddings, similar_cards
    from ml.registry import load_active, resolve_path

    output = run()
    assert "succeeded: card_embeddings" in output
    version = ModelVersion.objects.get(kind="card_embeddings", active=True)
    names = list(Card.objects.order_by("name").values_list("name", flat=True))
    assert version.version == 1 and len(names) == 23
    assert version.config["vocab"] == 23 and version.config["dim"] == 8 and version.config["dm"] == 0
    assert version.config["min_count"] == 2 and len(version.config["names_sha1"]) == 40
    assert 0 <= version.metrics["classifier_top1_clean"] <= 1
    assert "Counterspell -> Mana Leak" not in version.metrics["neighbour_ranks"]  # Mana Leak is not in the sample
    assert resolve_path(version.weights_path).is_relative_to(model_dir)

    loaded = load_active("card_embeddings")
    assert json.loads(loaded.metadata["names"]) == names
    assert tuple(loaded.tensors["embeddings"].shape) == (23, 8)
    assert str(loaded.tensors["embeddings"].dtype) == "torch.float16"
    assert tuple(loaded.tensors["classifier.weight"].shape) == (23, 8)
    assert str(loaded.tensors["classifier.weight"].dtype) == "torch.float16"
    assert tuple(loaded.tensors["classifier.bias"].shape) == (23,)
    assert str(loaded.tensors["classifier.bias"].dtype) == "torch.float32"

    emb = active_embeddings()
    assert emb.names == names and emb.index["Lightning Bolt"] == names.index("Lightning Bolt")
    assert emb.E.shape == (23, 8) and str(emb.E.dtype) == "torch.float32"
    assert emb.classifier.predict(emb.E).shape == (23,)

    similar = similar_cards("Lightning Bolt", k=5)
    assert len(similar) == 5 and all(name in names and name != "Lightning Bolt" for name, _ in similar)
    assert [s for _, s in similar] == sorted((s for _, s in similar), reverse=True)
    assert similar_cards("lightning bolt", k=5) == similar  # case-insensitive fallback
    assert similar_cards("Brazen Borrower", k=3)  # front-face name of an adventure card
    assert similar_cards("No Such Card") == []


def test_second_run_makes_version_two_active(catalogue, model_dir):
    from decks.embeddings.service import active_embeddings

    run()
    first = active_embeddings()
    run(seed=8)
    versions = ModelVersion.objects.filter(kind="card_embeddings").order_by("version")
    assert [(v.version, v.active) for v in versions] == [(1, False), (2, True)]
    assert versions[0].weights_path != versions[1].weights_path
    assert active_embeddings().version_id == versions[1].pk != first.version_id
    # without --activate: version 3 is registered and leaves version 2 active.
    run(seed=9, activate=False)
    assert ModelVersion.objects.get(kind="card_embeddings", active=True).version == 2
    assert ModelVersion.objects.filter(kind="card_embeddings").count() == 3
