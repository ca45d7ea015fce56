"""The advisor's levels (gameplay.core.search.advisor): ``vote``, the ensemble's majority, and ``vote+search``, the
search run only where the copies split, on the copies the vote asked. Pure core: real engine, real sample decks.

The levels are the real ones with the engine's Easy AI in place of VeryHard (``VOTE_LEVELS`` is a setting): Easy
never reaches the engine's 1.5 s wall-clock cap, so its votes do not depend on the machine's load."""
import random

import pytest

from gameplay.core.engine.adapter import BadState
from gameplay.core.matches.players import make_player
from gameplay.core.search import advisor
from gameplay.core.search.advisor import VOTE_LEVELS, VoteLevel, advice_levels, advise, resolve_level
from gameplay.core.search.algorithms import make_search
from gameplay.core.search.base import Budget
from gameplay.core.search.ensemble import EnsembleConfig, ensemble_vote
from gameplay.core.search.pruning import prune_actions
from tests.gameplay.conftest import deck_list

CONFIG = EnsembleConfig("Easy", copies=4, settle=4, workers=2)
SEARCH = Budget(simulations=4)


@pytest.fixture
def easy_levels(monkeypatch):
    monkeypatch.setitem(VOTE_LEVELS, "vote", VoteLevel(CONFIG, None))
    monkeypatch.setitem(VOTE_LEVELS, "vote+search", VoteLevel(CONFIG, "default"))


@pytest.fixture(scope="module")
def positions(engine):
    """(split, unanimous): a decision of seat 0 where 4 Easy copies disagree, and one where they all agree."""
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("dimir_terror"), seed=31, first_player=0)
    players = (make_player("engine:Easy", 1), make_player("engine:Easy", 2))
    found = {}
    for _ in range(600):
        seat = game.seat_to_act()
        if seat is None or len(found) == 2:
            break
        if seat == 0 and game.turn >= 2 and len(prune_actions(game, game.legal_actions(seat))) > 1:
            vote = ensemble_vote(game, 0, CONFIG, random.Random(0))
            if not vote.fallback and not vote.tie_break:
                found.setdefault("split" if vote.split else "unanimous", game.state())
        game.apply_or_next(seat, players[seat].choose(game, seat))
    assert set(found) == {"split", "unanimous"}, found.keys()
    return found["split"], found["unanimous"]


def test_the_levels_are_named_by_what_they_do():
    assert advice_levels()[0] == advisor.DEFAULT_LEVEL == "vote" and "vote+search" in advice_levels()
    assert "search:default" in advice_levels() and resolve_level(None) == ("vote", "vote")
    assert resolve_level("search:fast") == resolve_level("fast") == ("search", "fast")  # the old names still work
    for bad in ("godlike", "search:vote", 3, ""):
        with pytest.raises(ValueError, match="unknown level"):
            resolve_level(bad)


def test_vote_takes_the_majority_and_shows_each_share(engine, positions, easy_levels):
    for state in positions:
        game = engine.load(state)
        progress = []
        rec = advise(game, 0, "vote", seed=0, on_progress=progress.append)
        vote = rec.stats["vote"]
        top = max(a["votes"] for a in rec.alternatives)
        assert next(a for a in rec.alternatives if a["key"] == rec.action.key)["votes"] == top  # the majority
        assert rec.alternatives[0]["key"] == rec.action.key
        assert sum(a["votes"] for a in rec.alternatives) == vote["copies"] == 4  # 4 agree, or all 4 were asked
        assert abs(sum(a["share"] for a in rec.alternatives) - 1) < 1e-3
        assert rec.algorithm == "vote" and rec.simulations == 0 and not vote["searched"] and "search" not in rec.stats
        assert 0 < rec.win_estimate < 1 and not vote["fallback"] and vote["position_by"] == "engine evaluation"
        assert [p.stats.get("final", False) for p in progress] == [False, False, True]  # after each batch of 2
        assert game.state()["state"] == state["state"]


def test_the_search_runs_only_where_the_vote_splits_on_its_copies(engine, positions, easy_levels):
    split, unanimous = positions
    rec = advise(engine.load(unanimous), 0, "vote+search", seed=0, budget=SEARCH)
    assert rec.algorithm == "vote" and rec.simulations == 0 and not rec.stats["vote"]["searched"]
    assert all(a["visits"] is None for a in rec.alternatives)

    rec = advise(engine.load(split), 0, "vote+search", seed=0, budget=SEARCH)
    vote, search = rec.stats["vote"], rec.stats["search"]
    assert vote["split"] and vote["searched"] and rec.algorithm == "vote+mcts" and rec.simulations >= 4
    # the search dealt no copy of its own: it ran on the vote's (checked copy by copy below)
    assert search["given_determinizations"] == search["determinizations"] == vote["copies_dealt"] == 4
    # it weighed only the actions some copy chose; each row keeps its share beside the search's value
    for a in rec.alternatives:
        assert (a["visits"] is not None) == (a["votes"] > 0), a
        if a["votes"]:
            assert a["visits"] >= 1 and 0 <= a["value"] <= 1
    assert rec.action.key in {a["key"] for a in rec.alternatives if a["votes"]}


def test_a_search_given_copies_searches_exactly_those(engine, positions):
    split, _ = positions
    game = engine.load(split)
    vote = ensemble_vote(game, 0, CONFIG, random.Random(0))
    search = make_search(game, 0, algorithm="mcts", budget=Budget(simulations=6), seed=0,
                         determinizations=vote.states, hint=vote.action)
    search.run()
    assert len(search.dets) == len(vote.states) and all(a is b for a, b in zip(search.dets, vote.states))


def test_no_copy_loads_the_real_game_decides_and_the_answer_says_so(engine, positions, easy_levels, monkeypatch):
    game = engine.load(positions[0])
    expected = game.ai_action(0, "Easy").key

    def refuse(_state):
        raise BadState("the engine cannot load this state: copiable trigger origins do not align")

    monkeypatch.setattr(game.engine, "load", refuse)
    rec = advise(game, 0, "vote+search", seed=0, budget=SEARCH)
    vote = rec.stats["vote"]
    assert vote["fallback"] == "no copy could be loaded" and vote["refused"] >= 1 and vote["copies"] == 0
    assert rec.action.key == expected and not vote["searched"] and rec.algorithm == "vote"


def test_a_tie_broken_by_the_copies_own_evaluations_loads_nothing_more(engine, positions, monkeypatch):
    split, _ = positions
    game = engine.load(split)
    config = EnsembleConfig("Easy", copies=2, settle=2, workers=1, tie_break="copies")
    for seed in range(12):  # two copies, one vote each: a tie
        vote = ensemble_vote(game, 0, config, random.Random(seed))
        if vote.tie_break:
            break
    else:
        pytest.skip("no tie among 12 two-copy votes")
    loads = []
    real_load = game.engine.load
    monkeypatch.setattr(game.engine, "load", lambda state: loads.append(1) or real_load(state))
    again = ensemble_vote(game, 0, config, random.Random(seed))
    assert again.tie_break and again.action.key == vote.action.key and len(loads) == 2  # the two copies only
    assert again.action.key in {b["key"] for b in again.ballots if b["votes"]}
