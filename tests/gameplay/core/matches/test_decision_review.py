"""gameplay.core.matches.decision_review: mistakes on constructed decisions, and the review of a real engine game (pure core)."""
from __future__ import annotations

import pytest

from gameplay.core.matches.players import EnginePlayer, PassPlayer, play_game
from gameplay.core.matches.decision_review import (ReviewSettings, mark_mistakes, positions, review_game,
                                                   skipped_land_drops)
from gameplay.core.search.base import Recommendation
from gameplay.core.engine.adapter import Action
from gameplay.core.engine.seatview import hidden_names, on_one_scale, recommendation_dict
from tests.gameplay.conftest import deck_list
from tests.leaks import assert_no_leak


def test_a_mistake_is_a_clear_gap_to_the_advisors_choice():
    decisions = mark_mistakes([
        {"played_key": "a", "best_key": "b", "played_value": 0.40, "best_value": 0.55},  # 0.15 behind: a mistake
        {"played_key": "a", "best_key": "b", "played_value": 0.50, "best_value": 0.55},  # within the margin
        {"played_key": "b", "best_key": "b", "played_value": 0.30, "best_value": 0.30},  # the advisor's own choice
        {"played_key": "a", "best_key": "b", "played_value": None, "best_value": 0.90},  # unknown value: no verdict
        {"played_key": "a", "best_key": "b", "played_value": 0.60, "best_value": 0.45},  # better than the advice
    ], margin=0.1)
    assert [d["mistake"] for d in decisions] == [True, False, False, False, False]
    assert decisions[0]["loss"] == pytest.approx(0.15) and decisions[3]["loss"] is None
    assert [d["mistake"] for d in mark_mistakes(decisions, margin=0.2)] == [False] * 5


def test_a_mistake_is_a_move_the_ensemble_clearly_rejects():
    def d(played_share, best_share, votes=4, same=False, played_value=0.5, best_value=0.6, fallback=None):
        return {"played_share": played_share, "best_share": best_share, "votes": votes, "same": same,
                "played_value": played_value, "best_value": best_value, "fallback": fallback}

    decisions = mark_mistakes([
        d(0.0, 1.0, played_value=None, best_value=None),  # every copy chose another move: a mistake, no value needed
        d(0.25, 0.75),                                    # one copy in four agreed, the search sides with the choice
        d(0.25, 0.75, best_value=0.4),                    # the copies split on it and the search sides with the move
        d(0.25, 0.75, played_value=None),                 # split, no value: no verdict
        d(0.5, 0.5),                                      # half the copies played it
        d(0.0, 0.34),                                     # no move got a clear share (three-way split)
        d(0.0, 1.0, votes=2),                             # too few votes
        d(1.0, 1.0, same=True),                           # the ensemble's own choice
        d(0.0, 1.0, fallback="no copy could be loaded"),  # the real game decided: no verdict
    ], margin=0.1)
    assert [x["mistake"] for x in decisions] == [True, True, False, False, False, False, False, False, False]
    assert decisions[0]["loss"] is None and decisions[1]["loss"] == pytest.approx(0.1)


def _rec(value_of_best=0.68):
    best = Action(0, "CastSpell", {"object_id": 5}, "Cast Shock")
    alts = [{"label": "Cast Shock", "key": best.key, "visits": 9, "value": value_of_best},
            {"label": "Pass priority", "key": "pass", "visits": 3, "value": value_of_best - 0.2},
            {"label": "Play Mountain", "key": "land", "visits": 0, "value": None}]
    return Recommendation(action=best, line=["Cast Shock"], win_estimate=value_of_best, alternatives=alts,
                          simulations=12, elapsed=1.0, algorithm="mcts")


def test_the_headline_estimate_and_the_table_agree():
    """The advisor's headline (the value model's 25%) sat beside a 0.68 value for the same move: now the
    recommended move's value is the headline, and the other moves keep the search's differences."""
    shown = recommendation_dict(_rec(0.68), estimate=0.25)
    values = {a["key"]: a for a in shown["alternatives"]}
    assert shown["win_estimate"] == 0.25
    assert values[shown["action"]["key"]]["value"] == shown["win_estimate"]
    assert values["pass"]["value"] == pytest.approx(0.05) and values["pass"]["search_value"] == pytest.approx(0.48)
    assert values["land"]["value"] is None
    assert on_one_scale(_rec(0.68), 0.1)[1][1]["value"] == 0.0  # clipped to 0..1
    plain = recommendation_dict(_rec(0.68))  # no value model: the search's own scale, headline = its best value
    assert plain["win_estimate"] == 0.68 and plain["alternatives"][0]["value"] == 0.68
    assert "search_value" not in plain["alternatives"][0]


@pytest.fixture(scope="module")
def played(engine):
    """A whole game between two engine AIs, its moves recorded as the site records them."""
    decks = (deck_list("mono_red_aggro"), deck_list("dimir_terror"))
    game = engine.new_game(*decks, seed=27, first_player=0)
    moves = []
    play_game(game, (EnginePlayer("Easy"), EnginePlayer("VeryEasy")), max_decisions=3000,
              on_decision=lambda g, seat, action: moves.append([seat, action.key]))
    assert game.is_over()
    return decks, moves, game


@pytest.fixture(scope="module")
def reviewed(engine, played):
    decks, moves, _ = played
    seen = []
    out = review_game(engine, decks, moves, seed=27, first_player=0, seat=0,
                      settings=ReviewSettings(copies=4, settle=2, max_decisions=3, determinizations=1),
                      on_progress=lambda done, total: seen.append((done, total)))
    return out, seen


QUICK = dict(copies=4, settle=3, workers=2, determinizations=1, max_decisions=60)  # unanimous: 4 votes


@pytest.fixture(scope="module")
def passed(engine):
    """Seat 0 passes every decision (never plays a land) for 6 turns against VeryEasy: mono red vs dimir, seed 27."""
    decks = (deck_list("mono_red_aggro"), deck_list("dimir_terror"))
    game = engine.new_game(*decks, seed=27, first_player=0)
    players, moves = (PassPlayer(), EnginePlayer("VeryEasy", seed=27)), []
    while not game.is_over() and game.turn <= 6:
        seat = game.seat_to_act()
        assert seat is not None
        moves.append([seat, game.apply_or_next(seat, players[seat].choose(game, seat)).key])
    return decks, moves


def test_every_skipped_land_drop_is_a_mistake(engine, passed):
    """The person who passes every decision: each pass in its own main phase with a land playable is marked a
    mistake, the ensemble's better line a land (the old judge, 2 simulations a decision, called "Pass priority"
    and "Play Island" equal on turn 1 and marked 2 of 10)."""
    decks, moves = passed
    skipped = skipped_land_drops(engine, decks, moves, seed=27, first_player=0, seat=0)
    assert len(skipped) >= 5, skipped  # two a turn (both main phases) on each of its turns
    out = review_game(engine, decks, moves, seed=27, first_player=0, seat=0, settings=ReviewSettings(**QUICK))
    judged = {d["move"]: d for d in out["decisions"]}
    assert out["not_reviewed"] == 0 and set(skipped) <= set(judged)
    for index in skipped:
        d = judged[index]
        assert d["mistake"], d
        assert d["played"] == "Pass priority" and d["played_share"] <= 0.25 and d["best_share"] >= 0.4
        assert d["line"] == [d["best"]] and d["best"] != "Pass priority"
    assert out["mistakes"] == sum(d["mistake"] for d in out["decisions"]) >= len(skipped)


def test_review_of_a_real_game(played, reviewed):
    _, moves, _ = played
    out, seen = reviewed
    assert seen and seen[-1][0] == seen[-1][1] == sum(1 for s, _ in moves if s == 0)
    assert 1 <= out["reviewed"] <= 3 and out["not_reviewed"] > 0
    assert out["turns"] and all(0 <= t["estimate"] <= 1 for t in out["turns"])
    assert [t["turn"] for t in out["turns"]] == sorted({t["turn"] for t in out["turns"]})
    assert out["judge"] == "ensemble" and out["settings"]["copies"] == 4
    for d in out["decisions"]:
        assert d["played_key"] == moves[d["move"]][1] and moves[d["move"]][0] == 0
        assert d["votes"] >= 2 and 0 <= d["played_share"] <= 1 and 0 < d["best_share"] <= 1
        assert sum(a["share"] for a in d["alternatives"]) == pytest.approx(1.0, abs=0.01)
        if d["same"]:  # the ensemble chose the move played: no gap to measure, never a mistake
            assert d["played_share"] == d["best_share"] and not d["mistake"] and d["loss"] is None
        else:  # the value gap is measured on the vote's copies
            assert d["best_value"] is not None and d["played_value"] is not None
        assert d["mistake"] == mark_mistakes([dict(d)], 0.1)[0]["mistake"]


def test_the_review_names_no_card_the_player_could_not_see(engine, played, reviewed):
    """At each reviewed decision, nothing in it names a card hidden from the player then (the AI's hand, the
    libraries), and the whole review never names a card of the AI's hand that stayed hidden to the end."""
    decks, moves, final = played
    out, _ = reviewed
    by_move = {d["move"]: d for d in out["decisions"]}
    for index, game, _ in positions(engine, decks, moves, seed=27, first_player=0, seat=0):
        if index in by_move:
            assert_no_leak(by_move[index], hidden_names(game.state(), 0, game.observation(0)), f"decision {index}")
    secret = never_seen(engine, decks, moves, seed=27, first_player=0, seat=0)
    assert secret, "the AI should hold a card the player never saw"
    assert_no_leak(out, secret, "the review")


def never_seen(engine, decks, moves, *, seed, first_player, seat) -> set[str]:
    """Names of the cards that were in the opponent's hand at some decision of ``seat`` and that ``seat`` saw
    nowhere (a battlefield, a graveyard, exile, the stack, its own hand) at any of its decisions. (Once the game
    is over the engine's last state shows every card; the review is of what was hidden while it was played.)"""
    held, seen = set(), set()
    for _, game, _ in positions(engine, decks, moves, seed=seed, first_player=first_player, seat=seat):
        state = game.state()
        objects = state["state"]["objects"]
        held |= {objects[str(o)]["name"] for p in state["state"]["players"] if p["id"] != seat for o in p["hand"]}
        seen |= _public(game.observation(seat))
    return held - seen


def _public(observation: dict) -> set[str]:
    names = {c["name"] for p in observation["players"] for zone in ("graveyard", "battlefield", "hand")
             for c in p.get(zone) or []}
    return names | {c["name"] for c in observation.get("exile") or []} | {e["name"] for e in observation.get("stack") or []}

