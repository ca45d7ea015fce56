"""Honest AI: every AI decides on what its seat can see (pure core: no database).

The first "Done when" line of issue 29: in real game states, everything the AI's seat cannot see (the other hand's
cards, both libraries' order, the engine's seed) is replaced, and the play page's opponent (``EnginePlayer``), the
search player (``SearchPlayer``, deferring to the engine's AI) and the advisor (``recommend``, and its default
level, the vote) make the same choice
with the same seed. With the old call on the real game (``game.ai_action``) the engine's AI reads the hidden cards
and the seed, and the choices differ.
"""
import random

import pytest

from gameplay.core.engine import honest
from gameplay.core.engine.adapter import BadState, determinize
from gameplay.core.matches.players import EnginePlayer, SearchPlayer, make_player
from gameplay.core.search.ensemble import EnsembleConfig, ensemble_vote
from gameplay.core.search.advisor import recommend
from gameplay.core.search.base import Budget, SearchConfig
from gameplay.core.search.pruning import prune_actions
from tests.gameplay.conftest import deck_list, rehidden

AI = 1  # the seat the AI plays in these games


@pytest.fixture(scope="module")
def decisions(engine):
    """Real states of a game of the sample decks where the AI's seat has a choice (more than one distinct action),
    each beside a copy with its hidden cards and seed replaced that the engine loads."""
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("dimir_terror"), seed=21, first_player=0)
    players = (make_player("engine:VeryEasy", 1), make_player("engine:VeryEasy", 2))
    out, rng = [], random.Random(5)
    for _ in range(400):
        seat = game.seat_to_act()
        if seat is None or len(out) >= 6:
            break
        if seat == AI and game.turn >= 3 and len(prune_actions(game, game.legal_actions(seat))) > 1:
            state = game.state()
            moved = rehidden(state, AI, rng)
            try:
                engine.load(moved)
                engine.load(state)
            except BadState:
                continue
            out.append((state, moved))
        game.apply_or_next(seat, players[seat].choose(game, seat))
    assert len(out) >= 4, "the game gave too few decisions with a choice"
    return out


def test_the_rehidden_copy_shows_the_seat_the_same_game(engine, decisions):
    for state, moved in decisions:
        real, other = engine.load(state), engine.load(moved)
        assert real.observation(AI) == other.observation(AI)
        assert [a.key for a in real.legal_actions(AI)] == [a.key for a in other.legal_actions(AI)]
        assert real.hidden_cards(AI) != other.hidden_cards(AI) or state["state"]["rng_seed"] != moved["state"]["rng_seed"]
        # and the honest copy of either is the same state: it depends on what the seat sees only
        assert determinize(state, AI, random.Random(3)) == determinize(moved, AI, random.Random(3))


def test_the_engine_opponent_decides_on_what_its_seat_sees(engine, decisions):
    for state, moved in decisions:
        choices = [EnginePlayer("Medium", seed=7).choose(engine.load(s), AI).key for s in (state, moved)]
        assert choices[0] == choices[1]


def test_the_ensemble_decides_on_what_its_seat_sees(engine, decisions):
    """Its copies are dealt from what the seat sees: the same votes, copy for copy, whatever the hidden cards."""
    config = EnsembleConfig(level="Medium", copies=3, settle=3)
    for state, moved in decisions[:4]:
        votes = [ensemble_vote(engine.load(s), AI, config, random.Random(11)) for s in (state, moved)]
        assert votes[0].action.key == votes[1].action.key
        assert votes[0].ballots == votes[1].ballots and votes[0].copies == votes[1].copies
        assert make_player("ensemble:Medium:3", seed=6).choose(engine.load(state), AI).key == \
            make_player("ensemble:Medium:3", seed=6).choose(engine.load(moved), AI).key


def test_the_search_player_and_its_deference_decide_on_what_its_seat_sees(engine, decisions):
    def search_player():
        return SearchPlayer("fast", seed=4, budget=Budget(simulations=2), game_seconds=None, defer="Medium",
                            config=SearchConfig(prior_level="Medium", determinizations=2, horizon=1, min_visits=1,
                                                max_candidates=3))

    for state, moved in decisions[:3]:
        choices = [search_player().choose(engine.load(s), AI).key for s in (state, moved)]
        assert choices[0] == choices[1]


def test_the_advisor_decides_on_what_its_seat_sees(engine, decisions):
    config = SearchConfig(prior_level="Medium", determinizations=2, horizon=1, min_visits=1, max_candidates=3)
    for state, moved in decisions[:3]:
        recs = [recommend(engine.load(s), AI, budget=Budget(simulations=2), seed=9, config=config) for s in (state, moved)]
        assert recs[0].action.key == recs[1].action.key
        assert [a["key"] for a in recs[0].alternatives] == [a["key"] for a in recs[1].alternatives]


def test_the_advisors_default_level_decides_on_what_its_seat_sees(engine, decisions, monkeypatch):
    """The vote (the advisor's default, at Easy here: Easy stays under the engine's wall-clock cap) deals its
    copies from what the seat sees: the same ballots and the same choice whatever was hidden."""
    from gameplay.core.search import advisor

    monkeypatch.setitem(advisor.VOTE_LEVELS, "vote", advisor.VoteLevel(EnsembleConfig("Easy", 4, 4, workers=2)))
    for state, moved in decisions[:2]:
        recs = [advisor.advise(engine.load(s), AI, "vote", seed=9) for s in (state, moved)]
        assert recs[0].action.key == recs[1].action.key
        assert recs[0].alternatives == recs[1].alternatives and recs[0].stats["vote"]["copies"] >= 1


def test_the_peeking_engine_is_only_a_named_reference(engine, decisions):
    peek = make_player("engine:VeryHard!peek")
    assert peek.name == "engine:VeryHard!peek" and peek.peek
    assert not make_player("engine:VeryHard").peek
    with pytest.raises(ValueError):
        make_player("engine:VeryHard!look")
    state, _ = decisions[0]
    game = engine.load(state)
    assert peek.choose(game, AI).key == game.ai_action(AI, "VeryHard").key  # the engine's AI on the real game


def test_a_copy_that_cannot_be_loaded_falls_back_to_the_real_game_and_is_counted(engine, decisions, monkeypatch):
    state, _ = decisions[0]
    game = engine.load(state)
    stats, before = honest.HonestStats(), honest.TOTALS.fallbacks

    def refuse(_state):
        raise BadState("the engine cannot load this state: copiable trigger origins do not align")

    monkeypatch.setattr(game.engine, "load", refuse)
    action = honest.honest_ai_action(game, AI, "Medium", random.Random(1), stats)
    assert action is not None and action.key == game.ai_action(AI, "Medium").key
    assert stats.fallbacks == 1 and stats.copies == 0 and honest.TOTALS.fallbacks == before + 1
    assert "copiable trigger origins" in next(iter(stats.reasons))
