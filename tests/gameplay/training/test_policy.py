"""The search's policy/value network as a registry kind (game_policy_net): ``models train game_policy_net --quick`` end
to end (self-play, fit, a version row, activation), the advisor searching with the active version and without
one, a training run and an evaluation through the registry, and uploads checked against this code's network."""
import io
import json

import pytest
from django.core.management import call_command

from gameplay.core.learning import network as policy
from gameplay.core.search.advisor import recommend
from gameplay.core.search.pruning import prune_actions
from gameplay.core.search.base import Budget, SearchConfig
from gameplay import models_in_use
from ml import registry
from ml.models import ModelVersion, TrainingRun
from tests.conftest import stack
from tests.gameplay.conftest import deck_list

pytestmark = pytest.mark.django_db

CHEAP = SearchConfig(prior_level=None, horizon=1, determinizations=2, rollout_policy="VeryEasy",
                     opponent_policy="VeryEasy")


def in_use():
    """The learned models the shell hands the search now (the registry asked again, not its answer of 5 s ago)."""
    models_in_use.forget()
    return models_in_use.search_models()


def a_decision(engine):
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("mono_white_weenie"), seed=3)
    for _ in range(400):
        seat = game.seat_to_act()
        if game.turn >= 3 and len(prune_actions(game, game.legal_actions(seat))) >= 2:
            return game, seat
        game.apply(seat, game.ai_action(seat, "Easy") or game.legal_actions(seat)[0])
    raise AssertionError("no decision came")


def test_the_quick_preset_trains_registers_activates_and_the_advisor_uses_it(game_catalogue, engine, tmp_path):
    assert in_use().evaluator is None  # no version: the search plays as before, without a network
    game, seat = a_decision(engine)
    before = recommend(game, seat, budget=Budget(simulations=4), seed=1, config=CHEAP, models=in_use())
    assert "net" not in before.stats

    records = tmp_path / "records.jsonl"
    out = io.StringIO()
    call_command("models", "train", "game_policy_net", "--quick", "--activate", "--params",
                 json.dumps({"records": str(records)}), stdout=out, stderr=io.StringIO())
    version = ModelVersion.objects.get(kind="game_policy_net")
    assert version.active and "succeeded" in out.getvalue() and "(active)" in out.getvalue()
    assert version.config == {"format": policy.FORMAT, "width": 16, "layers": 1, "heads": 2}
    assert version.metrics["games"] == 2 and version.metrics["decisions"] > 20
    assert 0 <= version.metrics["valid_accuracy"] <= 1 and 0 <= version.metrics["valid_brier"] <= 1
    path = registry.resolve_path(version.weights_path)
    assert path.is_file() and path.stat().st_size < 5_000_000
    assert len(records.read_text().splitlines()) == version.metrics["decisions"]

    evaluator = in_use().evaluator
    assert evaluator is not None and evaluator.info["games"] == 2 and evaluator.info["imitate"] == "Easy"
    after = recommend(game, seat, budget=Budget(simulations=4), seed=1, config=CHEAP, models=in_use())
    assert after.stats["net"]["calls"] >= 4  # the root prior and a value per simulation
    net, _ = evaluator.predict(game.state(), seat, prune_actions(game, game.legal_actions(seat)))
    assert sorted(a["prior"] for a in after.alternatives) == pytest.approx(sorted(net), abs=1e-3)

    # trained again from the same records without playing: another version; deactivated, the advisor goes back
    call_command("models", "train", "game_policy_net", "--quick", "--params",
                 json.dumps({"games": 0, "from_records": [str(records)]}), stdout=io.StringIO(), stderr=io.StringIO())
    assert ModelVersion.objects.filter(kind="game_policy_net").count() == 2
    ModelVersion.objects.filter(kind="game_policy_net").update(active=False)
    assert in_use().evaluator is None
    assert "net" not in recommend(game, seat, budget=Budget(simulations=4), seed=1, config=CHEAP,
                                  models=in_use()).stats


def test_a_training_run_and_an_evaluation_through_the_registry(game_catalogue):
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


# --- AlphaZero's round: the search's visit counts as the policy target ------------------------------------------

def test_a_records_policy_target_is_the_visit_shares_else_the_choice():
    from gameplay.training.policy import policy_target

    actions = [{"type": "PassPriority"}] * 3
    assert policy_target({"actions": actions, "choice": 0, "visits": [1, 6, 1]}).tolist() == [0.125, 0.75, 0.125]
    assert policy_target({"actions": actions, "choice": 2}).tolist() == [0.0, 0.0, 1.0]
    assert policy_target({"actions": actions, "choice": 2, "visits": [0, 0, 0]}).tolist() == [0.0, 0.0, 1.0]
    assert policy_target({"actions": actions, "choice": 1, "visits": [1, 2]}).tolist() == [0.0, 1.0, 0.0]  # wrong length
    assert policy_target({"actions": actions, "choice": None}) is None


def test_training_on_visit_counts_follows_the_search_not_the_move_played(engine):
    """The same position in several games, the move played always the first action but the search's visits
    mostly on the second: the fitted network must rank the second first (with the visits dropped, the first)."""
    from gameplay.core.learning.network import slim_state
    from gameplay.training.policy import DEFAULTS, fit_records
    from ml.progress import Progress

    game, seat = a_decision(engine)
    actions = [a.to_dict() for a in prune_actions(game, game.legal_actions(seat))]
    state = slim_state(game.state())
    visits = [1] + [12] + [0] * (len(actions) - 2)
    records = [{"state": state, "seat": seat, "actions": actions, "choice": 0, "visits": visits, "won": g % 2,
                "seed": g, "value_x": [[0.0] * 36, [0.0] * 36]} for g in range(8)]
    params = {**DEFAULTS, "width": 16, "layers": 1, "heads": 2, "epochs": 25, "lr": 1e-2, "teacher": 0.0,
              "weight_decay": 0.0}
    net, info = fit_records(records, params, Progress())
    assert info["valid_accuracy"] == 1.0  # validation: argmax of the visits
    probs = policy.NetEvaluator(net, {}, "test").predict(state, seat, actions)[0]
    assert max(range(len(actions)), key=probs.__getitem__) == 1
    net, info = fit_records([{k: v for k, v in r.items() if k != "visits"} for r in records], params, Progress())
    probs = policy.NetEvaluator(net, {}, "test").predict(state, seat, actions)[0]
    assert max(range(len(actions)), key=probs.__getitem__) == 0


def test_search_self_play_records_the_searchs_visits(engine, monkeypatch):
    from gameplay.core.search import advisor
    from gameplay.core.matches.selfplay import decision_records

    tiny = {**advisor.LEVELS["fast"], "budget": Budget(simulations=2), "game_seconds": 4.0, "defer": "Easy",
            "defer_low": "VeryEasy", "config": CHEAP}
    monkeypatch.setitem(advisor.LEVELS, "fast", tiny)
    records = decision_records(engine, deck_list("mono_red_aggro"), deck_list("mono_white_weenie"), seed=5,
                               levels=("search:fast", "Medium"), imitate="search:fast")
    assert records and {r["seat"] for r in records} == {0}
    searched = [r for r in records if "visits" in r]
    assert searched, "no decision of the search seat was searched"
    for r in searched:
        assert len(r["visits"]) == len(r["actions"]) and sum(r["visits"]) >= 1


@pytest.mark.parametrize("name", ["Impossible", "search:nolevel", "random", "net:missing.safetensors"])
def test_training_refuses_a_player_it_cannot_imitate(name):
    from gameplay.training.policy import check_imitate
    from ml.kinds import TrainingError

    with pytest.raises(TrainingError, match="imitate"):
        check_imitate(name)
