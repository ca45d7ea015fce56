"""gameplay.core.engine.seatview: what one seat may see (pure core, a real engine game, no database)."""
from __future__ import annotations

from gameplay.core.engine.adapter import Action
from gameplay.core.search.base import Recommendation
from gameplay.core.engine.seatview import hidden_ids, hidden_names, humanize, log_entries, object_ids, recommendation_dict
from tests.gameplay.conftest import deck_list


def started(engine, turns=3):
    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("dimir_terror"), seed=11)
    while (game.turn or 0) < turns and not game.is_over():
        seat = game.seat_to_act()
        game.apply(seat, game.ai_action(seat, "VeryEasy") or game.legal_actions(seat)[0])
    return game


def test_hidden_cards_and_log_entries(engine):
    game = started(engine)
    state = game.state()
    players = {p["id"]: p for p in state["state"]["players"]}
    their_hand = set(players[1]["hand"])
    assert their_hand and their_hand <= hidden_ids(state, 0) and not set(players[0]["hand"]) & hidden_ids(state, 0)
    assert set(players[0]["library"]) <= hidden_ids(state, 0)  # one's own library is hidden too

    names = hidden_names(state, 0, game.observation(0))
    objects = state["state"]["objects"]
    public = {c["name"] for p in game.observation(0)["players"] for c in (p.get("battlefield") or []) + (p.get("hand") or [])}
    assert names and not names & public  # a name that is public anywhere is not hidden
    secret = next(o for o in their_hand if objects[str(o)]["name"] in names)

    raw = [(1, Action(1, "SelectCards", {"cards": [secret]}, f"Choose {objects[str(secret)]['name']}"), 4, {}),
           (1, Action(1, "PassPriority", None, "Pass priority"), 4, {}),
           (1, Action(1, "CastSpell", {"object_id": secret, "player": 0}, "Cast it at player 0"), 4, {}),
           (0, Action(0, "DeclareAttackers", {"attacks": []}, "Attack player 1"), 4, {"by": "advice"})]
    log = log_entries(raw, 0, state, last_turn=3)
    assert [e["who"] for e in log] == ["game", "ai", "ai", "you"] and log[0]["text"] == "Turn 4"
    assert log[1]["text"] == "chose cards you cannot see" and log[2]["text"] == "made a choice you cannot see"
    assert log[3] == {"turn": 4, "who": "you", "text": "Attack the AI", "kind": "DeclareAttackers", "by": "advice"}
    assert log_entries(raw[1:2], 0, state, last_turn=4) == []  # the AI's passes are not logged


def test_object_ids_humanize_and_advice_redaction():
    assert object_ids({"player": 1, "index": 2, "x": 5, "target": {"object": 42}, "ids": [7, True]}) == {42, 7}
    assert humanize("Deal 3 damage to player 1", 0) == "Deal 3 damage to the AI"
    assert humanize("player 0 draws", 0) == "you draws" and humanize("player 0 draws", 1) == "the AI draws"
    best = Action(0, "CastSpell", {"object_id": 3}, "Cast Lightning Bolt targeting player 1")
    other = Action(0, "CastSpell", {"object_id": 4}, "Cast Counterspell")
    rec = Recommendation(action=best, line=["Cast Lightning Bolt targeting player 1", "AI casts Counterspell"],
                         win_estimate=0.61234, alternatives=[
                             {"label": best.label, "key": best.key, "visits": 9, "value": 0.6},
                             {"label": other.label, "key": other.key, "visits": 3, "value": None}],
                         simulations=12, elapsed=1.23456, algorithm="mcts", forced=False, stats={"workers": 2})
    out = recommendation_dict(rec, {best.key}, names={"Counterspell"}, seat=0)
    assert out["action"]["label"] == "Cast Lightning Bolt targeting the AI" and out["playable"]
    assert out["line"][1] == "(hidden)" and out["alternatives"][1]["label"] == "(hidden)"
    assert not out["alternatives"][1]["playable"] and out["win_estimate"] == 0.6123 and out["workers"] == 2
