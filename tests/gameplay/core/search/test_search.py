"""The search over real phase.rs games, at small budgets (pure core: no database)."""
import json
import random
import time

import pytest

from gameplay.core.search.advisor import LEVELS, recommend
from gameplay.core.engine.adapter import EnginePanic, Game
from gameplay.core.engine.honest import honest_ai_action
from gameplay.core.matches.players import FACTORIES, SearchPlayer, make_player, modelling
from gameplay.core.search.pruning import groups, prune_actions
from gameplay.core.search.algorithms import ALGORITHMS
from gameplay.core.search.base import Budget, Recommendation, Search, SearchConfig, stalls
from gameplay.core.search.minimax import state_hash
from gameplay.core.search.evaluation import win_probability
from tests.gameplay.conftest import deck_list

# Cheap settings for tests: one-turn rollouts, no engine prior unless a test wants one.
QUICK = SearchConfig(prior_level=None, horizon=1, determinizations=2, rollout_policy="VeryEasy",
                     opponent_policy="VeryEasy", progress_seconds=0.0, progress_simulations=1)


def drive(game: Game, until, level: str = "Easy", limit: int = 600) -> Game:
    """Play both seats with the engine AI until ``until(game, seat, actions)`` holds."""
    for _ in range(limit):
        seat = game.seat_to_act()
        assert seat is not None and not game.is_over()
        actions = game.legal_actions(seat)
        if until(game, seat, actions):
            return game
        game.apply(seat, game.ai_action(seat, level) or actions[0])
    raise AssertionError("the position never came")


def main_phase_choice(game, seat, actions):
    return game.turn >= 3 and "Main" in game.phase and len(prune_actions(game, actions)) >= 3 \
        and game.active_player() == seat


@pytest.fixture(scope="module")
def midgame(engine):
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("mono_white_weenie"), seed=3)
    return drive(game, main_phase_choice)


def test_recommendation_is_legal_streams_and_leaves_the_game_alone(engine, midgame):
    seat = midgame.seat_to_act()
    before = json.dumps(midgame.state(), sort_keys=True)
    seen = []
    rec = recommend(midgame, seat, algorithm="mcts", budget=Budget(simulations=6), seed=1, config=QUICK,
                    on_progress=seen.append)
    assert rec.action.key in {a.key for a in midgame.legal_actions(seat)}
    assert json.dumps(midgame.state(), sort_keys=True) == before
    assert not rec.forced and rec.simulations == 6 and rec.algorithm == "mcts"
    assert len(seen) >= 3 and all(isinstance(r, Recommendation) for r in seen) and seen[-1].stats.get("final")
    assert 0.0 <= rec.win_estimate <= 1.0 and rec.line[0] == rec.action.label
    # every distinct root action was considered and is listed, best first
    assert len(rec.alternatives) == len(prune_actions(midgame, midgame.legal_actions(seat)))
    assert rec.alternatives[0]["key"] == rec.action.key and sum(a["visits"] for a in rec.alternatives) == 6
    json.dumps(rec.to_dict())


def test_flat_and_minimax_also_answer(midgame):
    seat = midgame.seat_to_act()
    legal = {a.key for a in midgame.legal_actions(seat)}
    flat = recommend(midgame, seat, algorithm="flat", budget=Budget(simulations=4), config=QUICK)
    assert flat.action.key in legal and flat.algorithm == "flat"
    # flat Monte Carlo compares actions on the same determinizations, round robin
    assert sorted(a["visits"] for a in flat.alternatives)[-1] - sorted(a["visits"] for a in flat.alternatives)[0] <= 1
    with pytest.raises(ValueError):
        recommend(midgame, seat, algorithm="alphazero")
    assert set(ALGORITHMS) == {"flat", "mcts", "minimax"}


def test_minimax_reuses_positions_through_its_caches(midgame):
    seat = midgame.seat_to_act()
    config = SearchConfig(prior_level=None, horizon=1, determinizations=1, max_depth=2, progress_seconds=0.0)
    rec = recommend(midgame, seat, algorithm="minimax", budget=Budget(seconds=25), config=config)
    assert rec.action.key in {a.key for a in midgame.legal_actions(seat)}
    # iterative deepening: depth 2 finds every depth-1 position in the cache instead of replaying it
    assert rec.stats["depth"] == 2 and rec.stats["cache_hits"] >= len(rec.alternatives)
    assert rec.stats["cache_entries"] > 0


def test_state_hash_ignores_bookkeeping_but_not_the_position(midgame):
    state = midgame.state()
    twin = json.loads(json.dumps(state))
    twin["state"]["rng_seed"] = 12345
    twin["state"]["next_timestamp"] = 999
    assert state_hash(twin) == state_hash(state)
    twin["state"]["players"][0]["life"] -= 3
    assert state_hash(twin) != state_hash(state)


def test_forced_decision_returns_at_once(engine):
    game = engine.new_game(deck_list("dimir_terror"), deck_list("mono_blue_faeries"), seed=5)
    game = drive(game, lambda g, s, a: g.turn >= 2 and len(a) == 1)
    seat = game.seat_to_act()
    seen = []
    t = time.perf_counter()
    rec = recommend(game, seat, budget=Budget(seconds=30), on_progress=seen.append)
    assert time.perf_counter() - t < 0.5
    assert rec.forced and rec.simulations == 0 and rec.action.key == game.legal_actions(seat)[0].key
    assert len(seen) == 1 and seen[0].forced


def test_determinized_search_never_sees_the_opponents_real_hand(engine, midgame, monkeypatch):
    seat = midgame.seat_to_act()
    real = midgame.state()["state"]["players"][1 - seat]["hand"]
    assert len(real) >= 3
    loaded = []
    original = type(engine).load

    def spy(self, state):
        loaded.append(json.loads(state) if isinstance(state, str) else state)
        return original(self, state)

    monkeypatch.setattr(type(engine), "load", spy)
    recommend(midgame, seat, algorithm="mcts", budget=Budget(simulations=6), seed=2,
              config=SearchConfig(prior_level="VeryEasy", horizon=1, determinizations=3, rollout_policy="VeryEasy",
                                  opponent_policy="VeryEasy"))
    assert len(loaded) >= 6  # the prior's copy and one per simulation
    hands = [s["state"]["players"][1 - seat]["hand"] for s in loaded]
    assert all(len(h) == len(real) for h in hands)
    assert all(h != real for h in hands)  # every searched copy has the opponent's hand re-dealt
    assert len({tuple(h) for h in hands}) >= 2  # an ensemble, not one guess
    # our own hand is never changed
    assert all(s["state"]["players"][seat]["hand"] == midgame.state()["state"]["players"][seat]["hand"] for s in loaded)


def test_an_engine_panic_in_a_rollout_drops_one_simulation(midgame, monkeypatch):
    seat = midgame.seat_to_act()
    original = Game.apply
    calls = {"n": 0}

    def flaky(self, who, action):
        calls["n"] += 1
        if calls["n"] == 3:
            raise EnginePanic("the rules engine crashed: test")
        return original(self, who, action)

    monkeypatch.setattr(Game, "apply", flaky)
    rec = recommend(midgame, seat, algorithm="mcts", budget=Budget(simulations=4), config=QUICK)
    assert rec.stats["dropped"] == 1 and "EnginePanic" in rec.stats["errors"][0]
    assert rec.simulations == 4 and rec.action.key in {a.key for a in midgame.legal_actions(seat)}


def test_equivalent_actions_are_pruned(engine):
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("mono_white_weenie"), seed=3)
    game = drive(game, lambda g, s, a: sum(x.plain == "Play Mountain" for x in a) >= 2)
    seat = game.seat_to_act()
    actions = game.legal_actions(seat)
    pruned = prune_actions(game, actions)
    assert [a.plain for a in pruned].count("Play Mountain") == 1
    assert len(pruned) < len(actions)
    mountains = [g for g in groups(game, actions).values() if g[0].plain == "Play Mountain"]
    assert len(mountains) == 1 and len(mountains[0]) == sum(a.plain == "Play Mountain" for a in actions)
    # different cards never merge (interchangeable copies share their label's group: "Play Mountain")
    assert len({a.plain for a in pruned}) == len({a.plain for a in actions})


def test_search_finds_the_lethal_attack(engine):
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("dimir_terror"), seed=8)
    game = drive(game, lambda g, s, a: g.prompt().get("type") == "DeclareAttackers" and s == g.active_player()
                 and len(a) >= 2)
    seat = game.seat_to_act()
    state = game.state()
    for p in state["state"]["players"]:
        if p["id"] != seat:
            p["life"] = 1  # any unblocked attacker wins now
    game = engine.load(state)
    rec = recommend(game, seat, algorithm="mcts", budget=Budget(simulations=8), config=QUICK)
    assert rec.action.kind == "DeclareAttackers" and rec.action.data["attacks"], rec.alternatives
    assert rec.win_estimate > 0.8
    no_attack = next(a for a in rec.alternatives if a["label"] == "No attack")
    assert no_attack["value"] is None or no_attack["value"] < rec.win_estimate


def test_root_parallelism_merges_the_workers(engine, midgame, tmp_path):
    seat = midgame.seat_to_act()
    path = tmp_path / "cards.json"
    from tests.gameplay.conftest import _deck_card_records  # noqa: F401 - same cards as the engine fixture
    import phase

    from gameplay.core.engine.carddata import build_card_data
    from gameplay.core.search.parallel import shutdown_pools

    path.write_text(json.dumps(build_card_data(list(_deck_card_records()), phase.build_oracle_face,
                                               phase.build_oracle_face_multi)))
    original, engine.card_source = engine.card_source, str(path)
    seen = []
    try:
        rec = recommend(midgame, seat, algorithm="mcts", budget=Budget(seconds=60, simulations=6), workers=2,
                        config=QUICK, on_progress=seen.append)
    finally:
        engine.card_source = original
        shutdown_pools()
    assert rec.stats["workers"] == 2 and rec.simulations == 6
    assert sum(a["visits"] for a in rec.alternatives) == 6
    assert rec.action.key in {a.key for a in midgame.legal_actions(seat)} and seen[-1].stats.get("final")


def test_root_parallelism_through_a_spread_function(engine, midgame):
    """The parts go through ``spread`` as plain JSON (as to Celery workers): they run on another engine
    over the same cards, their statistics are summed with the caller's, and a failed or late part costs
    its simulations, never the answer."""
    import threading

    from gameplay.core.engine.adapter import PhaseEngine
    from gameplay.core.search.parallel import part_payload, search_part

    seat = midgame.seat_to_act()
    other = PhaseEngine(json.loads(json.dumps(engine.card_source)))  # another "worker": its own engine, same cards
    sent = []

    def spread(parts):
        sent.extend(parts)
        results = {}
        threads = []
        for part in parts:
            payload = json.loads(json.dumps(part))  # what a broker would carry
            t = threading.Thread(target=lambda p=payload: results.__setitem__(p["index"], search_part(other, p)))
            t.start()
            threads.append(t)

        def waiter(index, thread):
            def wait(timeout):
                thread.join(timeout)
                return results[index]
            return wait
        return [waiter(p["index"], t) for p, t in zip(parts, threads)]

    rec = recommend(midgame, seat, algorithm="mcts", budget=Budget(seconds=60, simulations=8), workers=2,
                    config=QUICK, spread=spread)
    assert len(sent) == 1 and sent[0]["budget"] == {"seconds": 60, "simulations": 4}
    assert 0 < sent[0]["deadline"] - time.time() <= 60  # a spread part ends with the caller's own search
    assert rec.stats["workers"] == 2 and rec.stats["parts"] == {"asked": 1, "answered": 1, "via": "celery"}
    assert rec.simulations == 8 and sum(a["visits"] for a in rec.alternatives) == 8
    assert rec.action.key in {a.key for a in midgame.legal_actions(seat)}

    def broken(parts):
        def wait(timeout):
            raise ConnectionError("the worker went away")
        return [wait for _ in parts]

    alone = recommend(midgame, seat, algorithm="mcts", budget=Budget(seconds=60, simulations=4), workers=3,
                      config=QUICK, spread=broken)
    assert alone.stats["workers"] == 1 and alone.simulations == 2  # its own share of the simulations
    assert len(alone.stats["worker_errors"]) == 2 and "went away" in alone.stats["worker_errors"][0]

    late = part_payload(1, midgame.state(), seat, "mcts", Budget(seconds=5, simulations=4), 1, QUICK, None,
                        [a.key for a in midgame.legal_actions(seat)], deadline=time.time() - 1)
    assert search_part(other, late)["expired"] and search_part(other, late)["simulations"] == 0
    hurried = dict(late, deadline=time.time() + 1)  # less than half of its 5 s left: not worth starting
    assert search_part(other, hurried)["expired"]
    wrong = dict(late, deadline=None, card_source="/nowhere/other-cards.json")
    other.card_source = "/here/cards.json"
    with pytest.raises(ValueError, match="card data"):
        search_part(other, wrong)


def test_search_player_levels_and_registration(engine, midgame):
    assert {"fast", "default", "strong"} <= set(LEVELS)
    assert "search" in FACTORIES
    player = make_player("search:fast", seed=3)
    assert isinstance(player, SearchPlayer) and player.name == "search:fast"
    with pytest.raises(ValueError):
        SearchPlayer("godlike")
    # a forced decision is passed through without searching
    game = engine.new_game(deck_list("dimir_terror"), deck_list("mono_blue_faeries"), seed=5)
    game = drive(game, lambda g, s, a: g.turn >= 2 and len(a) == 1)
    seat = game.seat_to_act()
    t = time.perf_counter()
    assert player.choose(game, seat).key == game.legal_actions(seat)[0].key
    assert time.perf_counter() - t < 0.2 and player.stats["forced"] == 1 and player.stats["searched"] == 0
    # a real decision is searched and answered legally
    quick = SearchPlayer("fast", seed=1, budget=Budget(simulations=3), config=QUICK, defer="VeryEasy")
    seat = midgame.seat_to_act()
    action = quick.choose(midgame, seat)
    assert action.key in {a.key for a in midgame.legal_actions(seat)} and quick.stats["searched"] == 1
    # with its per-game CPU bank spent, the player takes the engine's choice without searching (on an honest copy
    # made from its seed, as every AI decides)
    broke = SearchPlayer("fast", seed=1, game_seconds=0.0, defer="VeryEasy")
    assert broke.choose(midgame, seat).key == honest_ai_action(midgame, seat, "VeryEasy", random.Random(1)).key
    assert broke.stats["bank_empty"] == 1 and broke.stats["searched"] == 0


def test_a_known_opponent_is_modelled_as_the_ai_it_is(midgame, monkeypatch):
    seat = midgame.seat_to_act()
    asked = []
    original = Game.ai_action

    def spy(self, who, difficulty="Medium"):
        asked.append((who, difficulty))
        return original(self, who, difficulty)

    monkeypatch.setattr(Game, "ai_action", spy)
    config = modelling(QUICK, "Easy")
    assert (config.opponent_policy, config.rollout_opponent_policy, config.rollout_policy) == ("Easy", "Easy", "VeryEasy")
    recommend(midgame, seat, budget=Budget(simulations=4), seed=1, config=config)
    assert {d for who, d in asked if who != seat} == {"Easy"}  # the opponent, in the tree and in rollouts
    assert {d for who, d in asked if who == seat} == {"VeryEasy"}  # our own rollout moves are unchanged
    assert modelling(QUICK, None) is QUICK
    with pytest.raises(ValueError):
        modelling(QUICK, "Godlike")
    player = make_player("search:fast@Medium", seed=1)
    assert player.opponent_model == "Medium" and player.config.rollout_opponent_policy == "Medium"
    assert make_player("search:fast", seed=1).config.rollout_opponent_policy is None


def test_win_probability_is_a_squash():
    assert win_probability(0) == 0.5 and win_probability(40) > 0.99 and win_probability(-40) < 0.01
    assert win_probability(5) + win_probability(-5) == pytest.approx(1.0)


def test_same_seed_same_answer(midgame):
    seat = midgame.seat_to_act()
    a = recommend(midgame, seat, budget=Budget(simulations=3), seed=4, config=QUICK)
    b = recommend(midgame, seat, budget=Budget(simulations=3), seed=4, config=QUICK)
    assert a.action.key == b.action.key and [x["value"] for x in a.alternatives] == [x["value"] for x in b.alternatives]


@pytest.fixture()
def stuck_game(engine):
    """A real game in which the engine's Easy AI passes every priority (seed 3, dimir vs mono-red):
    seat 0's first main phase, a land in hand."""
    game = engine.new_game(deck_list("dimir_terror"), deck_list("mono_red_aggro"), seed=3)
    return drive(game, lambda g, seat, actions: g.phase == "PreCombatMain" and seat == 0 and g.active_player() == 0)


def test_a_pass_with_a_land_in_hand_on_ones_own_main_phase_stalls(stuck_game):
    actions = stuck_game.legal_actions(0)
    passing = next(a for a in actions if a.kind == "PassPriority")
    land = next(a for a in actions if a.kind == "PlayLand")
    assert stalls(stuck_game, 0, passing)
    assert not stalls(stuck_game, 0, land)
    stuck_game.apply(0, land)  # the land drop is used: passing now is a choice, not a stall
    again = next(a for a in stuck_game.legal_actions(0) if a.kind == "PassPriority")
    assert not stalls(stuck_game, 0, again)


def spy_on_the_engine_ai(monkeypatch) -> list[str]:
    """The difficulties the engine's AI is asked for from now on (it still answers)."""
    asked, original = [], Game.ai_action

    def spy(self, who, difficulty="Medium"):
        asked.append(difficulty)
        return original(self, who, difficulty)

    monkeypatch.setattr(Game, "ai_action", spy)
    return asked


def test_a_stalled_cheap_policy_is_handed_to_the_rescue_ai(stuck_game, monkeypatch):
    assert stuck_game.ai_action(0, "Easy").kind == "PassPriority"  # the engine's Easy AI is stuck here
    plain = Search(stuck_game, 0, config=QUICK)
    assert plain._policy(stuck_game, 0, "Easy").kind == "PassPriority"

    asked = spy_on_the_engine_ai(monkeypatch)
    rescued = Search(stuck_game, 0, config=SearchConfig(**{**vars(QUICK), "rescue_policy": "Medium"}))
    assert rescued._policy(stuck_game, 0, "Easy").kind != "PassPriority"
    assert asked == ["Easy", "Medium"]
    asked.clear()
    rescued._policy(stuck_game, 0, "Easy")  # the seat stays rescued for the rest of the simulation ...
    assert asked == ["Medium"]
    asked.clear()
    rescued.load(0)  # ... and a new simulation starts with the cheap policy again
    rescued._policy(stuck_game, 0, "Easy")
    assert asked[0] == "Easy"
    asked.clear()
    rescued.load(0)
    rescued._policy(stuck_game, 0, "VeryHard")  # only the cheap AIs are watched
    assert asked == ["VeryHard"]


def test_a_config_naming_an_unknown_ai_is_refused():
    for field in ("rollout_policy", "opponent_policy", "rollout_opponent_policy", "prior_level", "rescue_policy"):
        with pytest.raises(ValueError, match=field):
            SearchConfig(**{field: "Medum"})
    assert SearchConfig(prior_level=None, rescue_policy=None).rescue_policy is None


@pytest.mark.parametrize("level", [name for name, spec in LEVELS.items()
                                   if spec.get("defer") == "VeryHard" and spec.get("game_seconds") is not None])
def test_a_level_that_defers_to_veryhard_keeps_it_once_its_bank_is_spent(midgame, monkeypatch, level):
    """With the per-game CPU bank spent, the player takes the AI it defers to, not a weaker one (the default level
    used to fall back to Medium: a long Modern mirror played 194 decisions on Medium)."""
    game = midgame.copy()
    seat = game.seat_to_act()
    real = Game.ai_action
    asked = spy_on_the_engine_ai(monkeypatch)
    player = SearchPlayer(level)
    player.bank_spent = (player.game_seconds or 0.0) + 1.0
    action = player.choose(game, seat)
    assert asked == ["VeryHard"] and player.stats["bank_empty"] == 1
    assert action.key == real(game, seat, "VeryHard").key
