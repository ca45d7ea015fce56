"""The search's policy/value network as a registry kind (game_policy_net): the training command's quick preset end
to end (self-play, fit, a version row, activation), the advisor searching with the active version and without
one, a training run and an evaluation through the registry, and uploads checked against this code's network."""
import io
import json

import pytest
from django.core.management import call_command

from gameplay.core import policy
from gameplay.core.advisor import recommend
from gameplay.core.pruning import prune_actions
from gameplay.core.search.base import Budget, SearchConfig
from gameplay.policy_training import active_net_weights
from ml import registry
from ml.models import ModelVersion, TrainingRun
from tests.conftest import stack
from tests.gameplay.conftest import card_records, deck_list, engine, game_catalogue, real_data_dir_session  # noqa: F401

pytestmark = pytest.mark.django_db

CHEAP = SearchConfig(prior_level=None, horizon=1, determinizations=2, rollout_policy="VeryEasy",
                     opponent_policy="VeryEasy")


def in_use():
    policy.set_resolver(active_net_weights)  # forget the resolver's last answer (it is re-read every 5 s)
    return policy.active_evaluator()


def a_decision(engine):  # noqa: F811
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("mono_white_weenie"), seed=3)
    for _ in range(400):
        seat = game.seat_to_act()
        if game.turn >= 3 and len(prune_actions(game, game.legal_actions(seat))) >= 2:
            return game, seat
        game.apply(seat, game.ai_action(seat, "Easy") or game.legal_actions(seat)[0])
    raise AssertionError("no decision came")


def test_the_quick_preset_trains_registers_activates_and_the_advisor_uses_it(game_catalogue, engine, tmp_path):  # noqa: F811
    assert in_use() is None  # no version: the search plays as before, without a network
    game, seat = a_decision(engine)
    before = recommend(game, seat, budget=Budget(simulations=4), seed=1, config=CHEAP)
    assert "net" not in before.stats

    records = tmp_path / "records.jsonl"
    out = io.StringIO()
    call_command("train_game_policy", "--preset", "quick", "--activate", "--records", str(records), stdout=out,
                 stderr=io.StringIO())
    version = ModelVersion.objects.get(kind="game_policy_net")
    assert version.active and "registered" in out.getvalue() and "(active)" in out.getvalue()
    assert version.config == {"format": policy.FORMAT, "width": 16, "layers": 1, "heads": 2}
    assert version.metrics["games"] == 2 and version.metrics["decisions"] > 20
    assert 0 <= version.metrics["valid_accuracy"] <= 1 and 0 <= version.metrics["valid_brier"] <= 1
    path = registry.resolve_path(version.weights_path)
    assert path.is_file() and path.stat().st_size < 5_000_000
    assert len(records.read_text().splitlines()) == version.metrics["decisions"]

    evaluator = in_use()
    assert evaluator is not None and evaluator.info["games"] == 2 and evaluator.info["imitate"] == "Easy"
    after = recommend(game, seat, budget=Budget(simulations=4), seed=1, config=CHEAP)
    assert after.stats["net"]["calls"] >= 4  # the root prior and a value per simulation
    net, _ = evaluator.predict(game.state(), seat, prune_actions(game, game.legal_actions(seat)))
    assert sorted(a["prior"] for a in after.alternatives) == pytest.approx(sorted(net), abs=1e-3)

    # trained again from the same records without playing: another version; deactivated, the advisor goes back
    call_command("train_game_policy", "--preset", "quick", "--games", "0", "--from-records", str(records),
                 stdout=io.StringIO(), stderr=io.StringIO())
    assert ModelVersion.objects.filter(kind="game_policy_net").count() == 2
    ModelVersion.objects.filter(kind="game_policy_net").update(active=False)
    assert in_use() is None
    assert "net" not in recommend(game, seat, budget=Budget(simulations=4), seed=1, config=CHEAP).stats


def test_a_training_run_and_an_evaluation_through_the_registry(game_catalogue):  # noqa: F811
    # the games as Celery tasks where Celery is eager (the embedded stack: the task's own code, in this process);
    # on the services stack no worker of this test holds the test's card data, so the games run in this process
    params = {"celery": True} if stack() == "embedded" else {}
    call_command("models", "train", "game_policy_net", "--quick", "--params", json.dumps(params),
                 stdout=io.StringIO(), stderr=io.StringIO())
    run = TrainingRun.objects.get(job="train", kind="game_policy_net")
    assert run.status == "succeeded", run.error + run.log
    version = run.result_version
    assert not version.active and version.metrics["games"] == 2
    call_command("models", "evaluate", str(version.pk), "--params", json.dumps({"games": 1, "imitate": "Easy"}),
                 stdout=io.StringIO(), stderr=io.StringIO())
    version.refresh_from_db()
    ev = version.metrics["eval"]
    assert ev["games"] == 1 and ev["labelled"] > 0 and 0 <= ev["net_accuracy"] <= 1
    assert ev["constant_brier"] == 0.25 and 0 <= ev["net_brier"] <= 1 and 0 <= ev["value_model_brier"] <= 1
    with pytest.raises(Exception, match="unknown parameters"):
        call_command("models", "train", "game_policy_net", "--params", json.dumps({"hidden": "8"}),
                     stdout=io.StringIO(), stderr=io.StringIO())


def test_an_upload_is_checked_against_this_codes_network(tmp_path):
    path = tmp_path / "net.safetensors"
    policy.save(policy.build_net(16, 1, 2), path, {})
    v = registry.upload_version("game_policy_net", "", str(path), {"width": 16, "layers": 1, "heads": 2})
    assert v.version == 1 and not v.active
    with pytest.raises(Exception, match="shape|config|tensor"):
        registry.upload_version("game_policy_net", "", str(path), {"width": 32, "layers": 1, "heads": 2})
    with pytest.raises(Exception, match="multiple of heads"):
        registry.upload_version("game_policy_net", "", str(path), {"width": 16, "layers": 1, "heads": 3})
    assert ModelVersion.objects.filter(kind="game_policy_net").count() == 1
