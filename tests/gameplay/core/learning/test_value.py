"""The learned leaf (gameplay.core.learning.value): features of real positions, the model, its file, its use in the search."""
import json

import numpy as np
import pytest

from gameplay.core.matches import selfplay
from gameplay.core.learning import value
from gameplay.core.learning.weights import search_models, shipped_models
from gameplay.core.search.advisor import recommend
from gameplay.core.search.base import Budget, SearchConfig
from gameplay.core.learning.value import FEATURES, ValueModel, ValueModelError, features, fit, swap_sides
from tests.gameplay.conftest import deck_list
from tests.gameplay.core.search.test_search import drive, main_phase_choice


@pytest.fixture(scope="module")
def position(engine):
    """A real position a few turns in: mono-red against dimir, seat 0's main phase."""
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("dimir_terror"), seed=11)
    return drive(game, lambda g, seat, actions: g.turn >= 5 and main_phase_choice(g, seat, actions), level="Medium")


def test_features_read_the_position_from_either_side(position):
    state = position.state()
    st = state["state"]
    e0, e1 = position.evaluate(0), position.evaluate(1)
    mine, theirs = features(state, 0, e0), features(state, 1, e1)
    assert len(mine) == len(FEATURES) and all(np.isfinite(mine))
    named = dict(zip(FEATURES, mine))
    assert named["me_life"] * 20 == st["players"][0]["life"]
    assert named["opp_life"] * 20 == st["players"][1]["life"]
    assert round(named["me_hand"] * 7) == len(st["players"][0]["hand"])
    assert named["my_turn"] == float(st["active_player"] == 0)
    assert named["on_play"] + dict(zip(FEATURES, theirs))["on_play"] == 1.0
    # the other seat's view is the same numbers with the sides swapped
    assert swap_sides(mine, e1) == pytest.approx(theirs)
    # the inner state (without the engine's envelope) reads the same
    assert features(st, 0, e0) == mine


def test_features_refuse_a_state_without_the_seat(position):
    with pytest.raises(ValueError, match="seat 5"):
        features(position.state(), 5)
    with pytest.raises(ValueError):
        features({"state": {"players": []}}, 0)


def _synthetic(n=400, seed=0):
    """Positions where the side with more life and power wins: a rule the model must learn."""
    rng = np.random.default_rng(seed)
    rows, wins = [], []
    for _ in range(n):
        x = rng.uniform(0, 1, len(FEATURES))
        side = len(FEATURES[:-4]) // 2  # me_* then opp_*: life is first, power eighth on each side
        edge = (x[0] - x[side]) + 0.5 * (x[7] - x[side + 7])
        rows.append(x.tolist())
        wins.append(int(edge + rng.normal(0, 0.15) > 0))
    return rows, wins


def test_fit_learns_a_rule_and_the_file_round_trips(tmp_path):
    rows, wins = _synthetic()
    model = fit(rows, wins, hidden=(8,), epochs=300, groups=list(range(len(rows))))
    p = model.probability(np.array(rows))
    assert np.mean((p > 0.5) == np.array(wins)) > 0.85
    assert model.info["rows"] == len(rows) and model.info["valid_rows"] > 0
    path = tmp_path / "value.safetensors"
    model.save(path)
    again = ValueModel.load(path)
    assert np.allclose(again.probability(np.array(rows[:20])), p[:20], atol=1e-5)
    # antisymmetric by construction: both seats' estimates of one position sum to one
    a, b = rows[0], swap_sides(rows[0])
    assert again.predict(a, b) + again.predict(b, a) == pytest.approx(1.0)


def test_fit_refuses_rows_of_the_wrong_width():
    with pytest.raises(ValueError, match="len\\(FEATURES\\)"):
        fit([[0.0, 1.0]] * 20, [0, 1] * 10)


def _save_raw(path, tensors, meta):
    from safetensors.numpy import save_file

    save_file({k: np.asarray(v, dtype=np.float32) for k, v in tensors.items()}, str(path), metadata=meta)


@pytest.mark.parametrize("case", ["garbage", "format", "features", "shape", "nan", "no_norm"])
def test_a_bad_weights_file_is_refused_with_a_reason(tmp_path, case):
    n = len(FEATURES)
    good = {"mean": np.zeros(n), "std": np.ones(n), "layer0.weight": np.ones((4, n)), "layer0.bias": np.zeros(4),
            "layer1.weight": np.ones((1, 4)), "layer1.bias": np.zeros(1)}
    meta = {"format": value.FORMAT, "features": json.dumps(list(FEATURES)), "info": "{}"}
    path = tmp_path / "bad.safetensors"
    if case == "garbage":
        path.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all")
    elif case == "format":
        _save_raw(path, good, {**meta, "format": "draft-bot"})
    elif case == "features":
        _save_raw(path, good, {**meta, "features": json.dumps(list(FEATURES)[:-1])})
    elif case == "shape":
        _save_raw(path, {**good, "layer1.weight": np.ones((1, 5))}, meta)
    elif case == "nan":
        _save_raw(path, {**good, "layer0.bias": np.full(4, np.nan)}, meta)
    else:
        _save_raw(path, {k: v for k, v in good.items() if k != "std"}, meta)
    with pytest.raises(ValueModelError, match="bad.safetensors"):
        ValueModel.load(path)
    _save_raw(path, good, meta)  # and the good one loads
    assert ValueModel.load(path).probability(np.zeros((1, n))).shape == (1,)


def test_a_missing_model_says_how_to_make_one(tmp_path, monkeypatch):
    monkeypatch.setenv("MTG_GAME_VALUE_WEIGHTS", str(tmp_path / "none.safetensors"))
    with pytest.raises(ValueModelError, match="models train game_value"):
        shipped_models().leaf_model()


def test_the_models_built_from_files_take_the_file_given_then_the_shipped_one(tmp_path, monkeypatch):
    """``learning.weights.search_models``: the value model in the file given, else the shipped one (a given file that
    went missing gives way; one that cannot be read is an error); no network without a readable file; the models
    cross to a worker process (pickled) and load the same file there."""
    import pickle

    monkeypatch.delenv("MTG_GAME_VALUE_WEIGHTS", raising=False)
    shipped = shipped_models()
    assert shipped.evaluator is None and shipped.leaf_model() is value.model_at(value.DEFAULT_WEIGHTS)
    rows, wins = _synthetic()
    mine = tmp_path / "mine.safetensors"
    fit(rows, wins, hidden=(4,), epochs=20).save(mine)
    given = search_models(value=mine, network=tmp_path / "no-network.safetensors")
    assert given.leaf_model() is value.model_at(mine) and given.leaf_model().info["hidden"] == [4]
    assert given.evaluator is None
    assert pickle.loads(pickle.dumps(given)).leaf_model().info == given.leaf_model().info
    assert search_models(value=tmp_path / "gone.safetensors").leaf_model() is value.model_at(value.DEFAULT_WEIGHTS)
    broken = tmp_path / "broken.safetensors"
    broken.write_bytes(b"not a model")
    with pytest.raises(ValueModelError):
        search_models(value=broken).leaf_model()


def test_the_shipped_model_loads_and_reads_the_table(position):
    """The weights in the repo: trained on the current features, and a position where one side has
    lost most of its life and board is scored for the other side."""
    model = ValueModel.load(value.DEFAULT_WEIGHTS)
    assert model.info["games"] >= 100
    state = position.state()
    p0 = model.win_probability(state, 0, position.evaluate(0), position.evaluate(1))
    p1 = model.win_probability(state, 1, position.evaluate(1), position.evaluate(0))
    assert 0.0 < p0 < 1.0 and p0 + p1 == pytest.approx(1.0)
    st = json.loads(json.dumps(state))
    st["state"]["players"][1]["life"] = 1
    for oid in list(st["state"]["battlefield"]):
        if st["state"]["objects"][str(oid)].get("controller") == 1:
            st["state"]["battlefield"].remove(oid)
    assert model.win_probability(st, 0, position.evaluate(0), position.evaluate(1)) > max(p0, 0.8)


def test_self_play_rows_label_both_seats_with_the_winner(engine):
    rows = selfplay.self_play_rows(engine, deck_list("mono_red_aggro"), deck_list("mono_white_weenie"), seed=4,
                                levels=("Easy", "Easy"))
    assert rows, "a finished game yields positions"
    assert {r["seat"] for r in rows} == {0, 1}
    assert all(len(r["x"]) == len(FEATURES) for r in rows)
    by_seat = {s: {r["won"] for r in rows if r["seat"] == s} for s in (0, 1)}
    assert len(by_seat[0]) == len(by_seat[1]) == 1 and by_seat[0] != by_seat[1]
    assert min(r["turn"] for r in rows) >= 2


def test_the_search_scores_cut_rollouts_with_the_learned_leaf(position, monkeypatch):
    with pytest.raises(ValueError, match="leaf"):
        SearchConfig(leaf="oracle")
    called = []
    original = ValueModel.win_probability

    def spy(self, *args):
        called.append(1)
        return original(self, *args)

    monkeypatch.setattr(ValueModel, "win_probability", spy)
    cfg = SearchConfig(prior_level=None, horizon=1, determinizations=2, rollout_policy="VeryEasy",
                       opponent_policy="VeryEasy", leaf="learned")
    with pytest.raises(ValueError, match="leaf_model"):
        recommend(position, 0, budget=Budget(simulations=4), config=cfg, seed=1)
    rec = recommend(position, 0, budget=Budget(simulations=4), config=cfg, seed=1, models=shipped_models())
    assert called, "cut rollouts were scored by the model"
    assert 0.0 <= rec.win_estimate <= 1.0
    assert all(a["value"] is None or 0.0 <= a["value"] <= 1.0 for a in rec.alternatives)


def test_the_position_estimate_never_sees_the_hidden_cards(engine, position):
    """Two states that differ only in which of the opponent's unseen cards are in hand and which in
    the library, and in the order of both libraries, get the same estimate: it is computed on copies
    re-dealt from what the seat cannot see."""
    import random

    state = position.state()
    seat = 0
    p = value.position_estimate(engine, state, seat, random.Random(5), model=shipped_models().leaf_model)
    assert p is not None and 0.0 < p < 1.0
    shuffled = json.loads(json.dumps(state))
    opp = next(pl for pl in shuffled["state"]["players"] if pl["id"] != seat)
    pool = opp["hand"] + opp["library"]
    random.Random(1).shuffle(pool)
    opp["hand"], opp["library"] = pool[:len(opp["hand"])], pool[len(opp["hand"]):]
    for pl in shuffled["state"]["players"]:
        random.Random(2).shuffle(pl["library"])
    for oid in opp["hand"]:
        shuffled["state"]["objects"][str(oid)]["zone"] = "Hand"
    for oid in opp["library"]:
        shuffled["state"]["objects"][str(oid)]["zone"] = "Library"
    assert value.position_estimate(engine, shuffled, seat, random.Random(5),
                                   model=shipped_models().leaf_model) == pytest.approx(p)


def test_the_position_estimate_is_none_without_a_model(engine, position, tmp_path, monkeypatch):
    import random

    monkeypatch.setenv("MTG_GAME_VALUE_WEIGHTS", str(tmp_path / "missing.safetensors"))
    assert value.position_estimate(engine, position.state(), 0, random.Random(0),
                                   model=shipped_models().leaf_model) is None
