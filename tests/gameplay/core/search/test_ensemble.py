"""The ensemble (gameplay.core.search.ensemble): the engine's AI asked on honest copies, the action most chose.
Pure core: real engine, real sample decks, no database."""
import random

import pytest

from gameplay.core.engine.adapter import BadState
from gameplay.core.matches.players import EnsemblePlayer, make_player, play_game
from gameplay.core.search.ensemble import EnsembleConfig, EnsembleStats, ensemble_vote
from gameplay.core.search.pruning import prune_actions
from tests.gameplay.conftest import deck_list


@pytest.fixture(scope="module")
def choices(engine):
    """Positions of a real game where seat 0 has more than one distinct action (states, seat)."""
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("dimir_terror"), seed=31, first_player=0)
    players = (make_player("engine:Medium", 1), make_player("engine:Medium", 2))
    out = []
    for _ in range(500):
        seat = game.seat_to_act()
        if seat is None or len(out) >= 5:
            break
        if seat == 0 and game.turn >= 2 and len(prune_actions(game, game.legal_actions(seat))) > 1:
            out.append(game.state())
        game.apply_or_next(seat, players[seat].choose(game, seat))
    assert len(out) >= 3
    return out


def test_a_vote_names_a_legal_action_and_adds_up(engine, choices):
    stats = EnsembleStats()
    for state in choices:
        game = engine.load(state)
        vote = ensemble_vote(game, 0, EnsembleConfig(level="Medium", copies=4, settle=2), random.Random(3), stats=stats)
        assert vote.action.key in {a.key for a in game.legal_actions(0)} or vote.action.kind == "DeclareAttackers"
        assert vote.copies == sum(b["votes"] for b in vote.ballots) and 2 <= vote.copies <= 4
        assert abs(sum(b["share"] for b in vote.ballots) - 1.0) < 1e-3
        assert vote.ballots[0]["votes"] == max(b["votes"] for b in vote.ballots)
        assert vote.split == (sum(1 for b in vote.ballots if b["votes"]) > 1)
        if not vote.split:  # unanimous: stopped once `settle` copies agreed
            assert vote.copies == 2
        assert game.state()["state"] == state["state"]  # the real game is never changed
    assert stats.decisions == len(choices) and stats.unanimous + stats.split == len(choices)


def test_the_same_rng_gives_the_same_vote_and_threads_change_nothing(engine, choices):
    state = choices[-1]
    one = ensemble_vote(engine.load(state), 0, EnsembleConfig("Medium", 4, 4, workers=1), random.Random(8))
    two = ensemble_vote(engine.load(state), 0, EnsembleConfig("Medium", 4, 4, workers=2), random.Random(8))
    assert one.ballots == two.ballots and one.action.key == two.action.key


def test_a_forced_decision_asks_no_copy(engine):
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("dimir_terror"), seed=2, first_player=0)
    while len(prune_actions(game, game.legal_actions(game.seat_to_act()))) > 1:
        seat = game.seat_to_act()
        game.apply(seat, game.legal_actions(seat)[0])
    seat = game.seat_to_act()
    vote = ensemble_vote(game, seat, EnsembleConfig("Medium", 8), random.Random(1))
    assert vote.forced and vote.copies == 0 and not vote.states


def test_refused_copies_fall_back_to_the_real_game_and_are_counted(engine, choices, monkeypatch):
    game = engine.load(choices[0])
    expected = game.ai_action(0, "Medium").key

    def refuse(_state):
        raise BadState("the engine cannot load this state: copiable trigger origins do not align")

    monkeypatch.setattr(game.engine, "load", refuse)
    stats = EnsembleStats()
    vote = ensemble_vote(game, 0, EnsembleConfig("Medium", 4), random.Random(1), stats=stats)
    assert vote.fallback == "no copy could be loaded" and vote.refused >= 1 and vote.copies == 0
    assert vote.action.key == expected
    assert stats.fallbacks == 1 and stats.reasons == {"no copy could be loaded": 1}


def test_the_player_spec_and_a_whole_game(engine):
    player = make_player("ensemble:Medium:2", seed=4)
    assert isinstance(player, EnsemblePlayer) and player.name == "ensemble:Medium:2" and player.config.settle == 2
    assert make_player("ensemble").name == "ensemble:VeryHard:8"
    from gameplay.core.search.advisor import VOTE_LEVELS  # noqa: PLC0415 - only this check needs the advisor's levels

    advisor = make_player("advisor")  # the advisor's default level exactly as the site runs it, for the benches
    assert advisor.name == "advisor:vote" and advisor.config == VOTE_LEVELS["vote"].ensemble
    for bad in ("ensemble:Godlike:4", "ensemble:Medium:many", "ensemble:Medium:0", "advisor:vote+search",
                "advisor:nope"):
        with pytest.raises(ValueError):
            make_player(bad)
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("mono_white_weenie"), seed=12)
    result = play_game(game, (player, make_player("engine:Easy", 3)), max_decisions=400)
    assert result["decisions"] > 20 and player.stats.decisions > 10
    assert player.stats.fallbacks == 0 and player.stats.discarded == 0


def test_an_attack_on_the_other_player_names_no_hidden_card():
    """``{"type": "Player", "data": 1}`` is seat 1, not object 1 (which may be a card in a library): an attack that a
    copy chose was discarded as naming a hidden card, and the decision fell back to the real game."""
    from gameplay.core.engine.honest import named_ids

    attack = {"attacks": [[24, {"data": 1, "type": "Player"}], [40, {"data": 1, "type": "Player"}]], "bands": []}
    assert named_ids(attack) == {24, 40}
    assert named_ids({"target": {"type": "Object", "data": 7}}) == {7}


def test_a_wall_budget_never_stops_a_vote_before_four_copies(engine, choices):
    """Votes that counted 2 of 8 copies ("stopped at its time budget") left ties to the engine's evaluation: the
    budget may stop a vote only once ``min_copies`` copies (4) were counted, or every copy was asked."""
    for state in choices[:2]:
        config = EnsembleConfig("Medium", copies=8, settle=8, workers=2, seconds=1e-6)
        vote = ensemble_vote(engine.load(state), 0, config, random.Random(5))
        assert vote.out_of_time and 4 <= vote.copies < 8
        fewer = ensemble_vote(engine.load(state), 0, EnsembleConfig("Medium", 8, 8, 2, seconds=1e-6, min_copies=2),
                              random.Random(5))
        assert fewer.out_of_time and fewer.copies == 2
    with pytest.raises(ValueError):
        EnsembleConfig("Medium", min_copies=0)


def test_a_bench_keeps_every_batch_of_a_budgeted_vote_as_wide_as_its_cores(engine, choices):
    """Under a wall budget the vote asks its first ``min_copies`` copies at once (one batch at the engine's cap, not
    two); a bench that must run no more engine searches than cores sets ``first_batch``: the same floor of four
    copies, asked two at a time. The batches are seen through ``on_batch`` (called after each)."""
    def batches(config):
        seen = []
        ensemble_vote(engine.load(choices[0]), 0, config, random.Random(5), on_batch=lambda v: seen.append(v.copies))
        return seen

    wide = batches(EnsembleConfig("Medium", copies=8, settle=8, workers=2, seconds=1e-6))
    assert wide[0] == 4
    narrow = batches(EnsembleConfig("Medium", copies=8, settle=8, workers=2, seconds=1e-6, first_batch=2))
    assert narrow[:2] == [2, 4] and narrow[-1] >= 4
    with pytest.raises(ValueError):
        EnsembleConfig("Medium", first_batch=0)
