"""gameplay.core.engine.labels: every action says what it does, no two actions of a decision alike, and no label
names a card its seat cannot see (pure core: constructed positions, and real engine games of the sample decks)."""
from __future__ import annotations

import random

import pytest

from gameplay.core.engine.adapter import Action, observe
from gameplay.core.engine.labels import Position, counter_text, decision_labels, describe, mana_text
from gameplay.core.engine.seatview import humanize, log_entries
from gameplay.core.matches.players import describe_player


def obj(oid, name, controller=0, zone="Battlefield", **more):
    return {"id": oid, "name": name, "controller": controller, "owner": more.pop("owner", controller), "zone": zone,
            "tapped": False, "counters": {}, **more}


def state(objects, prompt, battlefield=None, hands=None):
    """A small engine ``state["state"]``: the objects, the prompt, the battlefield in order and the hands."""
    hands = hands or {}
    return {"objects": {str(o["id"]): o for o in objects}, "waiting_for": prompt,
            "battlefield": battlefield if battlefield is not None else [o["id"] for o in objects if o["zone"] == "Battlefield"],
            "players": [{"id": p, "life": 20, "hand": hands.get(p, []), "library": [], "graveyard": []} for p in (0, 1)],
            "stack": [], "exile": [], "turn_number": 5, "active_player": 0, "priority_player": 0}


def texts(st, actions, seat=0):
    return [lb.text for lb in decision_labels(actions, Position.of_state(st, seat))]


def test_a_modes_text_is_on_its_action():
    # Manifold Mouse's beginning-of-combat trigger: the engine sends both modes' texts with the prompt
    prompt = {"type": "ChooseOneOfBranch", "data": {"player": 0, "source_id": 34, "parent_targets": [{"Object": 34}],
                                                     "branch_descriptions": ["gain Double Strike", "gain Trample"]}}
    st = state([obj(34, "Manifold Mouse", power=1, toughness=2)], prompt)
    actions = [{"type": "ChooseBranch", "data": {"index": 0}}, {"type": "ChooseBranch", "data": {"index": 1}}]
    assert texts(st, actions) == ["Manifold Mouse: gain Double Strike", "Manifold Mouse: gain Trample"]


def test_same_named_permanents_carry_the_boards_tag_and_then_their_state():
    claws = [obj(10, "Hired Claw", power=1, toughness=2), obj(11, "Hired Claw", power=2, toughness=2, tapped=True),
             obj(12, "Hired Claw", controller=1, power=1, toughness=2)]
    st = state(claws, {"type": "DeclareAttackers", "data": {"player": 0}})
    attacks = [{"type": "DeclareAttackers", "data": {"attacks": [[i, {"type": "Player", "data": 1}]]}} for i in (10, 11)]
    assert texts(st, attacks) == ["Attack with Hired Claw #1", "Attack with Hired Claw #2"]
    # the board shows the same tags: the page names the cards as the buttons do (the AI's one Claw has none)
    board = observe(st, 0)
    assert [(c["id"], c.get("tag")) for p in board["players"] for c in p["battlefield"]] == [(10, 1), (11, 2), (12, None)]
    # a target says whose it is; same-named targets of one controller are told apart by their tags
    targets = [{"type": "ChooseTarget", "data": {"target": {"Object": i}}} for i in (10, 11, 12)] + [
        {"type": "ChooseTarget", "data": {"target": {"Player": 1}}}]
    labels = texts(st, targets)
    assert labels == ["Target Hired Claw #1 (player 0's)", "Target Hired Claw #2 (player 0's)",
                      "Target Hired Claw (player 1's)", "Target player 1"]
    assert [humanize(t, 0) for t in labels[2:]] == ["Target Hired Claw (the AI's)", "Target the AI"]
    assert humanize(labels[0], 0) == "Target Hired Claw #1 (yours)"
    # two blockers of one name, the same attacker: the state of each tells them apart where no tag does
    st2 = state([obj(20, "Novice Inspector", 1, power=1, toughness=2), obj(21, "Novice Inspector", 1, power=1,
                 toughness=2, damage_marked=1), obj(10, "Hired Claw", power=1, toughness=2)],
                {"type": "DeclareBlockers", "data": {"player": 1}}, battlefield=[20, 10, 21])
    blocks = [{"type": "DeclareBlockers", "data": {"assignments": [[b, 10]]}} for b in (20, 21)]
    assert texts(st2, blocks, 1) == ["Block: Novice Inspector #1 blocks Hired Claw",
                                     "Block: Novice Inspector #2 blocks Hired Claw"]


def test_interchangeable_copies_in_hand_are_numbered_and_share_their_group():
    hand = [obj(1, "Mountain", zone="Hand"), obj(2, "Mountain", zone="Hand"), obj(3, "Rockface Village", zone="Hand")]
    st = state(hand, {"type": "Priority", "data": {"player": 0}}, hands={0: [1, 2, 3]})
    actions = [{"type": "PlayLand", "data": {"object_id": i, "card_id": i}} for i in (1, 2, 3)]
    labels = decision_labels(actions, Position.of_state(st, 0))
    assert [(lb.text, lb.group) for lb in labels] == [("Play Mountain (copy 1)", "Play Mountain"),
                                                      ("Play Mountain (copy 2)", "Play Mountain"),
                                                      ("Play Rockface Village", None)]
    assert [lb.objects for lb in labels] == [(1,), (2,), (3,)]
    # two permanents that read alike in every way stay apart by their tags, never grouped as copies
    st2 = state([obj(5, "Clue"), obj(6, "Clue")], {"type": "Priority", "data": {"player": 0}})
    for o in st2["objects"].values():
        o["abilities"] = [{"description": None, "cost": {"type": "Composite", "costs": [
            {"type": "Mana", "cost": {"type": "Cost", "shards": [], "generic": 2}},
            {"type": "Sacrifice", "target": {"type": "SelfRef"}, "count": 1}]}, "effect": {"type": "Draw"}}]
    clues = decision_labels([{"type": "ActivateAbility", "data": {"source_id": i, "ability_index": 0}} for i in (5, 6)],
                            Position.of_state(st2, 0))
    assert [(lb.text, lb.group) for lb in clues] == [("Activate Clue #1: {2}, sacrifice it: draw", None),
                                                     ("Activate Clue #2: {2}, sacrifice it: draw", None)]


def test_choices_say_what_they_do():
    lib = [obj(40, "Island", zone="Library"), obj(41, "Counterspell", zone="Library")]
    scry = state(lib, {"type": "ScryChoice", "data": {"player": 0, "cards": [40, 41]}})
    assert texts(scry, [{"type": "SelectCards", "data": {"cards": c}} for c in ([], [41], [40, 41])]) == [
        "Scry: put Island, Counterspell on the bottom", "Scry: keep Counterspell on top, Island on the bottom",
        "Scry: keep Island, Counterspell on top"]
    ninjas = [obj(88, "Ninja of the Deep Hours"), obj(98, "Ninja of the Deep Hours")]
    order = state(ninjas, {"type": "OrderTriggers", "data": {"player": 0, "triggers": [
        {"source_id": 88, "source_name": "Ninja of the Deep Hours"}, {"source_id": 98, "source_name": "Ninja of the Deep Hours"}]}})
    # the first in the order goes on the stack first, so the last resolves first
    assert texts(order, [{"type": "OrderTriggers", "data": {"order": o}} for o in ([0, 1], [1, 0])]) == [
        "Triggers resolve: Ninja of the Deep Hours #2, then Ninja of the Deep Hours #1",
        "Triggers resolve: Ninja of the Deep Hours #1, then Ninja of the Deep Hours #2"]
    may = state([obj(88, "Ninja of the Deep Hours")], {"type": "OptionalEffectChoice", "data": {
        "player": 0, "source_id": 88, "description": "Whenever ~ deals combat damage to a player, you may draw a card."}})
    assert texts(may, [{"type": "DecideOptionalEffect", "data": {"accept": a}} for a in (True, False)]) == [
        "Yes: draw a card (Ninja of the Deep Hours)", "No: don't draw a card (Ninja of the Deep Hours)"]
    unless = state([], {"type": "UnlessPayment", "data": {"player": 0, "cost": {"type": "Mana", "cost": {
        "type": "Cost", "shards": [], "generic": 2}}}})
    assert texts(unless, [{"type": "PayUnlessCost", "data": {"pay": p}} for p in (True, False)]) == ["Pay {2}", "Don't pay {2}"]
    claw = obj(7, "Hired Claw", abilities=[{"description": "{1}{R}: Put a +1/+1 counter on ~. Activate only once each turn.",
                                             "cost": None, "effect": {"type": "PutCounter"}}], counters={"P1P1": 1})
    st = state([claw], {"type": "Priority", "data": {"player": 0}})
    assert texts(st, [{"type": "ActivateAbility", "data": {"source_id": 7, "ability_index": 0}}]) == [
        "Activate Hired Claw: {1}{R}: Put a +1/+1 counter on Hired Claw"]
    assert observe(st, 0)["players"][0]["battlefield"][0]["counters_text"] == "a +1/+1 counter"


def test_counters_mana_and_players_in_words():
    assert counter_text({"P1P1": 1}) == "a +1/+1 counter"
    assert counter_text({"P1P1": 2, "M1M1": 1, "Oil": 1}) == "2 +1/+1 counters, a -1/-1 counter, an oil counter"
    assert mana_text({"type": "Cost", "shards": ["Red", "Red"], "generic": 3}) == "{3}{R}{R}"
    assert describe_player("engine:VeryHard") == "Engine AI, Very Hard"
    assert describe_player("ensemble:VeryHard:8") == "Vote of 8 Engine AIs, Very Hard"
    assert describe_player("search:learned") == "Our search, learned leaf" and describe_player("random") == "Random legal moves"
    assert describe_player("engine:VeryHard!peek").endswith("(reads every card: a bench reference)")


def test_actions_the_words_cannot_tell_apart_are_still_labelled_apart():
    st = state([obj(3, "Lightning Strike", zone="Hand")], {"type": "Priority", "data": {"player": 0}})
    actions = [{"type": "CastSpell", "data": {"object_id": 3, "payment_mode": {"type": m}}} for m in ("Auto", "Manual")]
    assert texts(st, actions) == ["Cast Lightning Strike (option 1)", "Cast Lightning Strike (option 2)"]


def test_the_other_seats_log_entry_is_redacted_when_its_words_name_a_hidden_card():
    # a scry of the AI keeping nothing on top: its data names no card, its label names the two it sent to the bottom
    lib = [obj(40, "Island", 1, zone="Library"), obj(41, "Counterspell", 1, zone="Library")]
    st = state(lib, {"type": "ScryChoice", "data": {"player": 1, "cards": [40, 41]}})
    st["players"][1]["library"] = [40, 41]
    d = {"type": "SelectCards", "data": {"cards": []}}
    label = describe(d, Position.of_state(st, 1))
    action = Action(1, d["type"], d["data"], label.text, objects=label.objects)
    assert "Counterspell" in action.label
    entry = log_entries([(1, action, 5, {})], 0, {"state": st}, last_turn=5)
    assert entry == [{"turn": 5, "who": "ai", "text": "chose cards you cannot see", "kind": "SelectCards"}]


# --- real games of the sample decks ------------------------------------------------------------------------

def pool_decisions(engine, deck_list, sample_decks, at_least: int):
    """Seeded games between every ordered pair of sample decks, each seat's move the engine's VeryEasy AI at one
    decision with a choice in six and otherwise a seeded random legal action (one other than passing seven times
    in ten: the games reach combat, targets, scries, delve); yields (game, seat, actions) at each of the first
    ``at_least`` decisions (a seat with actions to choose from)."""
    names = sorted(sample_decks)
    pairs = [(a, b) for a in names for b in names]
    seen = 0
    for i in range(200):
        a, b = pairs[i % len(pairs)]
        game = engine.new_game(deck_list(a), deck_list(b), seed=7000 + i, first_player=i % 2)
        rng = random.Random(7000 + i)
        for _ in range(400):
            offered = {seat: game.legal_actions(seat) for seat in game.seats_to_act()}
            offered = {seat: actions for seat, actions in offered.items() if actions}
            if not offered:
                break
            for seat, actions in offered.items():
                yield game, seat, actions
                seen += 1
                if seen >= at_least:
                    return
            seat, actions = next(iter(offered.items()))
            others = [x for x in actions if x.kind != "PassPriority"]
            if len(actions) > 1 and rng.random() < 1 / 6:
                move = game.ai_action(seat, "VeryEasy") or actions[0]
            else:
                move = rng.choice(others) if others and rng.random() < 0.7 else actions[0]
            game.apply_or_next(seat, move)


def test_no_two_actions_of_a_decision_share_a_label_and_none_names_a_hidden_card(engine, sample_decks):
    from tests.gameplay.conftest import deck_list

    decisions = choices = 0
    kinds = set()
    for game, seat, actions in pool_decisions(engine, deck_list, sample_decks, at_least=2000):
        decisions += 1
        choices += len(actions) > 1
        labels = [a.label for a in actions]
        assert len(set(labels)) == len(labels), (game.prompt().get("type"), labels)
        hidden = game.hidden_cards(seat)
        shown = set((game.prompt().get("data") or {}).get("cards") or [])  # a search, scry or dig shows these
        for a in actions:
            kinds.add(a.kind)
            named = set(a.objects)
            assert not named & set(hidden[1 - seat]), (seat, a.label)  # the other hand, the other library
            assert named & set(hidden[seat]) <= shown, (seat, a.label)  # one's own library, only as shown
            assert a.group is None or "copy" not in a.group
    assert decisions == 2000 and choices >= 400, choices
    assert {"DeclareAttackers", "DeclareBlockers", "ChooseTarget", "SelectCards", "CastSpell", "PlayLand"} <= kinds


@pytest.fixture(scope="module")
def ended(engine):
    """A whole game of the sample decks to its end: (the game, each seat's observation before the last move)."""
    from tests.gameplay.conftest import deck_list

    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("mono_white_weenie"), seed=11, first_player=0)
    before = None
    for _ in range(3000):
        if game.is_over():
            break
        seat = game.seat_to_act()
        before = {s: game.observation(s) for s in (0, 1)}
        game.apply(seat, game.ai_action(seat, "Medium") or game.legal_actions(seat)[0])
    assert game.is_over()
    return game, before


def test_the_final_board_is_the_board_before_the_engines_clean_up(ended):
    game, before = ended
    loser = 1 - game.result()["winner"]
    plain = game.observation(1 - loser)["players"][loser]
    assert plain["library"] == plain["hand_count"] == 0 and not plain["battlefield"]  # what the engine leaves
    for seat in (0, 1):
        final, last = game.final_observation(seat), before[seat]
        f, b = final["players"][loser], last["players"][loser]
        assert f["library"] == b["library"] and f["hand_count"] == b["hand_count"]
        assert {c["id"] for c in b["graveyard"]} <= {c["id"] for c in f["graveyard"]}
        assert f["battlefield"] and {c["id"] for c in f["battlefield"]} <= {c["id"] for c in b["battlefield"]}
        assert f["life"] <= 0 or final["prompt"]["type"] == "GameOver"
        # hidden information stays hidden: only a seat's own hand is listed
        assert [("hand" in p) for p in final["players"]] == [p["seat"] == seat for p in final["players"]]


def test_a_concession_ends_the_game_and_keeps_the_board_as_it_stood(engine):
    from tests.gameplay.conftest import deck_list

    game = engine.new_game(deck_list("mono_red_aggro"), deck_list("mono_white_weenie"), seed=11, first_player=0)
    for _ in range(120):
        seat = game.seat_to_act()
        game.apply(seat, game.ai_action(seat, "VeryEasy") or game.legal_actions(seat)[0])
    before = {s: game.observation(s) for s in (0, 1)}
    waiting = game.seat_to_act()
    action = game.concede(1 - waiting)  # at any time, not only on one's own decision
    assert game.result() == {"winner": waiting} and action.label == "Concede"
    for s in (0, 1):
        final = game.final_observation(s)
        assert final["prompt"]["type"] == "GameOver"
        for f, b in zip(final["players"], before[s]["players"]):  # the same cards where they were (hands unordered)
            assert {**f, "hand": sorted(map(str, f.get("hand", [])))} == {**b, "hand": sorted(map(str, b.get("hand", [])))}
    with pytest.raises(Exception, match="over"):
        game.concede(waiting)
