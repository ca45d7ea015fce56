"""The policy/value network over real phase.rs positions: the encoder, the network's shapes and masking, its
file, the recorder of self-play decisions, and the search with it (pure core: no database)."""
import math
import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gameplay.core.learning import network as policy  # noqa: E402
from gameplay.core.search.advisor import recommend  # noqa: E402
from gameplay.core.engine.adapter import Action, determinize  # noqa: E402
from gameplay.core.search.pruning import prune_actions  # noqa: E402
from gameplay.core.search.base import Budget, Edge, SearchConfig  # noqa: E402
from gameplay.core.search.evaluation import SearchModels  # noqa: E402
from gameplay.core.search.mcts import MCTSSearch  # noqa: E402
from gameplay.core.matches.selfplay import decision_records  # noqa: E402
from tests.gameplay.conftest import deck_list  # noqa: E402
from tests.gameplay.core.search.test_search import QUICK, drive, main_phase_choice  # noqa: E402


@pytest.fixture(scope="module")
def position(engine):
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("mono_white_weenie"), seed=3)
    drive(game, main_phase_choice)
    seat = game.seat_to_act()
    return game, seat, prune_actions(game, game.legal_actions(seat))


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    """A small untrained network, saved and loaded as a version file is."""
    torch.manual_seed(1)
    path = tmp_path_factory.mktemp("net") / "net.safetensors"
    policy.save(policy.build_net(16, 1, 2), path, {"kind_order": ["PlayLand", "CastSpell"]})
    return policy.evaluator_at(path)


def test_the_encoder_reads_the_mechanics_the_seat_may_see(position):
    game, seat, actions = position
    state = game.state()
    st = state["state"]
    ent, act = policy.encode(state, seat, actions)
    me, them = (next(p for p in st["players"] if p["id"] == s) for s in (seat, 1 - seat))
    objects = len(st["battlefield"]) + len(st["stack"]) + len(me["hand"]) + len(me["graveyard"]) + len(them["graveyard"])
    assert ent.shape == (objects + 3, policy.ENTITY_SIZE) and act.shape == (len(actions), policy.ACTION_SIZE)
    players = ent[ent[:, 1] == 1]  # the player tokens: mine first
    assert players[0, 3] == 1 and players[0, 4] == pytest.approx(me["life"] / 20)
    assert players[1, 4] == pytest.approx(them["life"] / 20) and players[1, 6] == pytest.approx(len(them["hand"]) / 7)
    # a creature spell's token carries its power and mana value; its kind is CastSpell
    kinds = policy.ACTION_KINDS
    numbers = len(kinds) + 7 + 1 + len(policy.ZONES) + len(policy.CORE_TYPES) + len(policy.COLOURS)
    for a, row in zip(actions, act):
        assert row[kinds.index(a.kind)] == 1 if a.kind in kinds else row[len(kinds)] == 1
        if a.kind == "CastSpell":
            card = st["objects"][str(a.data["object_id"])]
            assert row[numbers + 3] == pytest.approx(min(3, policy._mana_value(card) / 5))
            if card.get("power") is not None:
                assert row[numbers] == pytest.approx(card["power"] / 5)
    # the slim copy encodes the same, and re-dealing what the seat cannot see changes nothing
    assert np.array_equal(policy.encode(policy.slim_state(state), seat, actions)[0], ent)
    redealt = determinize(state, seat, random.Random(5))
    assert np.array_equal(policy.encode(redealt, seat, actions)[0], ent)
    assert not np.array_equal(policy.encode(state, 1 - seat, [])[0][-3:], ent[-3:])  # the other side's view differs


def test_the_network_masks_padding_and_gives_a_distribution(position, evaluator):
    game, seat, actions = position
    state = game.state()
    samples = [policy.encode(state, seat, actions), policy.encode(state, seat, actions[:2]),
               policy.encode(state, 1 - seat, [])]
    with torch.no_grad():
        logits, value = evaluator.net(*(torch.from_numpy(a) for a in policy.batch(samples)))
    assert logits.shape == (3, len(actions)) and value.shape == (3,)
    assert torch.isinf(logits[1, 2:]).all() and torch.isfinite(logits[1, :2]).all() and torch.isinf(logits[2]).all()
    priors, v = evaluator.predict(state, seat, actions)
    assert len(priors) == len(actions) and sum(priors) == pytest.approx(1.0) and 0 < v < 1
    assert priors == pytest.approx(torch.softmax(logits[0], -1).tolist(), abs=1e-5)
    # the padded copy of a sample scores it as alone
    assert evaluator.predict(state, seat, actions[:2])[0] == pytest.approx(torch.softmax(logits[1, :2], -1).tolist(), abs=1e-5)


def test_puct_selection_follows_the_formula():
    search = MCTSSearch.__new__(MCTSSearch)
    search.cfg = SearchConfig(c_puct=1.5)
    edges = [Edge(Action(0, "PassPriority", None, f"a{i}"), p) for i, p in enumerate((0.6, 0.3, 0.1))]
    # nothing visited: the highest prior (all values equal the parent's mean)
    assert search._select(edges, 0, 0.5) is edges[0]
    edges[0].n, edges[0].w = 10, 3.0   # 0.3 + 1.5 * 0.6 * sqrt(12) / 11 = 0.5834
    edges[1].n, edges[1].w = 1, 0.6    # 0.6 + 1.5 * 0.3 * sqrt(12) / 2  = 1.3794
    edges[2].n, edges[2].w = 1, 1.0    # 1.0 + 1.5 * 0.1 * sqrt(12) / 2  = 1.2598
    assert search._select(edges, 12, 0.5) is edges[1]
    score = [e.w / e.n + 1.5 * e.prior * math.sqrt(12) / (1 + e.n) for e in edges]
    assert score == pytest.approx([0.5834, 1.3794, 1.2598], abs=1e-4)
    edges[1].prior, edges[2].prior = 0.1, 0.3  # the prior moves the choice
    assert search._select(edges, 12, 0.5) is edges[2]


def test_the_search_takes_the_networks_prior_and_value(position, evaluator):
    game, seat, actions = position
    config = SearchConfig(**{**vars(QUICK), "max_candidates": 3})
    rec = recommend(game, seat, budget=Budget(simulations=6), seed=1, config=config,
                    models=SearchModels(evaluator=evaluator))
    net, _ = evaluator.predict(game.state(), seat, actions)
    keep = sorted(zip(net, (a.key for a in actions)), reverse=True)[:3]
    total = sum(p for p, _ in keep)
    priors = {a["key"]: a["prior"] for a in rec.alternatives}
    assert set(priors) == {k for _, k in keep}  # the cut keeps the network's favourites, renormalised
    assert all(priors[k] == pytest.approx(p / total, abs=1e-3) for p, k in keep)
    assert rec.stats["net"]["calls"] > 6 and rec.simulations == 6
    # without rollouts, a leaf's value is the network's: every root mean is a mean of network values in (0, 1)
    assert all(0 < a["value"] < 1 for a in rec.alternatives if a["value"] is not None)
    without = recommend(game, seat, budget=Budget(simulations=6), seed=1, config=config, models=SearchModels())
    assert "net" not in without.stats


def test_a_corrupt_or_foreign_file_is_refused_with_the_reason(evaluator, tmp_path):
    good = open(evaluator.path, "rb").read()
    (tmp_path / "cut.safetensors").write_bytes(good[: len(good) // 2])
    with pytest.raises(policy.PolicyModelError, match="not a readable safetensors"):
        policy.load(tmp_path / "cut.safetensors")
    from safetensors.torch import load_file, save_file

    tensors = load_file(evaluator.path)
    save_file(tensors, str(tmp_path / "value.safetensors"), metadata={"format": "game-value-v1"})
    with pytest.raises(policy.PolicyModelError, match="not a game-policy-net-v1"):
        policy.load(tmp_path / "value.safetensors")
    meta = {"format": policy.FORMAT, "config": '{"width": 16, "layers": 1, "heads": 2}', "sizes": "[1, 2]"}
    save_file(tensors, str(tmp_path / "sizes.safetensors"), metadata=meta)
    with pytest.raises(policy.PolicyModelError, match="other tokens"):
        policy.load(tmp_path / "sizes.safetensors")
    meta["sizes"] = f"[{policy.ENTITY_SIZE}, {policy.ACTION_SIZE}]"
    bad = dict(tensors)
    bad[next(iter(bad))] = bad[next(iter(bad))] * float("nan")
    save_file(bad, str(tmp_path / "nan.safetensors"), metadata=meta)
    with pytest.raises(policy.PolicyModelError, match="non-finite"):
        policy.load(tmp_path / "nan.safetensors")
    meta["config"] = '{"width": 32, "layers": 1, "heads": 2}'
    save_file(tensors, str(tmp_path / "shape.safetensors"), metadata=meta)
    with pytest.raises(policy.PolicyModelError, match="wrong tensors"):
        policy.load(tmp_path / "shape.safetensors")
    with pytest.raises(policy.PolicyModelError, match="no policy network"):
        policy.evaluator_at(tmp_path / "missing.safetensors")


def test_self_play_records_the_imitated_ais_real_decisions(engine):
    records = decision_records(engine, deck_list("mono_red_aggro"), deck_list("mono_blue_faeries"), seed=4,
                               levels=("Easy", "VeryEasy"), imitate="Easy")
    assert records and {r["seat"] for r in records} == {0}
    winner = 0 if records[0]["won"] else 1
    for r in records:
        assert len(r["actions"]) > 1 and r["won"] == int(r["seat"] == winner)
        assert r["choice"] is None or 0 <= r["choice"] < len(r["actions"])
        assert len(r["value_x"]) == 2 and len(r["value_x"][0]) == 36
        ent, act = policy.encode(r["state"], r["seat"], r["actions"])
        assert len(act) == len(r["actions"]) and ent.shape[1] == policy.ENTITY_SIZE
    assert sum(r["choice"] is not None for r in records) >= 0.9 * len(records)


def test_player_specs_name_the_network_to_search_with(evaluator):
    """``search:<level>+net`` searches with the shipped network whatever the caller's models hold (the yardstick
    measures the search with and without it side by side); without a suffix a search player searches with the
    caller's models (none given: the shipped ones, no network); ``net`` alone is the caller's network, else the
    shipped file; a typo is refused."""
    from gameplay.core.learning.weights import search_models
    from gameplay.core.matches.players import SHIPPED_NET, make_player

    mine = search_models().with_evaluator(evaluator)
    with_net = make_player("search:default+net", models=mine)
    assert isinstance(with_net.evaluator, policy.NetEvaluator) and with_net.name == "search:default+net"
    assert with_net.evaluator is policy.evaluator_at(SHIPPED_NET) and with_net.models.leaf_model == mine.leaf_model
    assert make_player("search:default").evaluator is None
    assert make_player("search:default", models=mine).models is mine
    assert make_player(f"search:fast@VeryHard+net={SHIPPED_NET}").opponent_model == "VeryHard"
    assert make_player("net").evaluator is policy.evaluator_at(SHIPPED_NET)
    assert make_player("net", models=mine).evaluator is evaluator
    with pytest.raises(ValueError, match=r"\+net"):
        make_player("search:default+nett")
