"""The learned models in use, as the shell builds them (gameplay.models_in_use): the registry's active game_value and
game_policy_net versions, asked at most every few seconds, handed whole to the players the site plays against; the
shipped value model and no network while none is active."""
import numpy as np
import pytest

from gameplay import models_in_use
from gameplay.core.learning import network as policy
from gameplay.core.learning import value
from gameplay.models import PlayedGame
from gameplay.play import session
from ml import registry
from ml.models import ModelVersion

pytestmark = pytest.mark.django_db


def small_versions(tmp_path):
    """A value model and a network, each uploaded and activated as a version (small, untrained: the path is what is
    tested, not the play)."""
    rng = np.random.default_rng(0)
    rows = rng.uniform(0, 1, (60, len(value.FEATURES))).tolist()
    value_file = tmp_path / "value.safetensors"
    value.fit(rows, [int(r[0] > r[16]) for r in rows], hidden=(4,), epochs=20).save(value_file)
    net_file = tmp_path / "net.safetensors"
    policy.save(policy.build_net(16, 1, 2), net_file, {})
    return (registry.upload_version("game_value", "", str(value_file), {"hidden": [4]}, activate=True),
            registry.upload_version("game_policy_net", "", str(net_file), {"width": 16, "layers": 1, "heads": 2},
                                    activate=True))


def test_the_shell_hands_the_registrys_active_versions_to_the_search(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.delenv("MTG_GAME_VALUE_WEIGHTS", raising=False)
    models_in_use.forget()
    shipped = models_in_use.search_models()
    assert shipped.evaluator is None and shipped.leaf_model() is value.model_at(value.DEFAULT_WEIGHTS)

    value_version, net_version = small_versions(tmp_path)
    # asked again only after RESOLVE_SECONDS: within them, the last answer stands
    assert models_in_use.search_models().evaluator is None
    models_in_use.forget()
    now = models_in_use.search_models()
    assert now.evaluator.path == str(registry.resolve_path(net_version.weights_path))
    assert now.leaf_model().info["hidden"] == [4] and now.load_evaluator is policy.evaluator_at

    # the search player of a game against the AI searches with them
    row = PlayedGame(opponent="search:fast", seed=1, decisions=0)
    assert session._opponent(row).evaluator is now.evaluator
    assert session._opponent(row).models.leaf_model() is now.leaf_model()

    # a registry that fails keeps the last answer; a rollback is seen once it is asked again
    with monkeypatch.context() as down:
        down.setattr(models_in_use, "RESOLVE_SECONDS", 0.0)
        down.setattr(models_in_use, "active_weights", lambda kind: 1 / 0)
        assert models_in_use.search_models().evaluator is now.evaluator
    ModelVersion.objects.filter(pk__in=[value_version.pk, net_version.pk]).update(active=False)
    models_in_use.forget()
    after = models_in_use.search_models()
    assert after.evaluator is None and after.leaf_model() is value.model_at(value.DEFAULT_WEIGHTS)
    models_in_use.forget()
