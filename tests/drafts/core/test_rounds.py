"""The pod's small Swiss: records from results, and the next opponent by record."""
import pytest

from drafts.core.rounds import Record, cards_drawn, records, swiss_opponent


def test_records_count_both_sides():
    table = records([(0, 3, True), (0, 5, False), (1, 3, True)])
    assert table[0] == Record(1, 1) and table[1] == Record(1, 0)
    assert table[3] == Record(0, 2) and table[5] == Record(1, 0)


def test_first_round_pairs_across_the_table():
    assert swiss_opponent(0, [1, 2, 3, 4, 5, 6, 7], 8, {}, []) == 4
    assert swiss_opponent(1, [2, 3], 4, {}, []) == 3


def test_later_rounds_pair_by_record_and_never_repeat_while_bots_are_left():
    # 0 beat 4; bot 2 beat person 6 (1-0) and bot 5 lost to person 6 (0-1): 0 (1-0) meets bot 2 (1-0)
    table = records([(0, 4, True), (6, 2, False), (6, 5, True)])
    assert swiss_opponent(0, [1, 2, 3, 4, 5, 7], 8, table, [4]) == 2
    # after a loss (1-1), the nearest record among the bots not met
    table = records([(0, 4, True), (0, 2, False), (6, 5, True)])
    nxt = swiss_opponent(0, [1, 2, 3, 4, 5, 7], 8, table, [4, 2])
    assert nxt not in (4, 2) and table.get(nxt, Record()) in (Record(), Record(0, 1))


def test_rematches_only_when_every_bot_was_met():
    assert swiss_opponent(0, [1], 2, records([(0, 1, True)]), [1]) == 1
    assert swiss_opponent(0, [1, 2], 3, records([(0, 1, True)]), [1]) == 2


def test_no_bots():
    with pytest.raises(ValueError):
        swiss_opponent(0, [], 2, {}, [])


def test_cards_drawn_read_the_board_before_the_clean_up():
    objects = {"1": {"name": "Bear", "owner": 0, "zone": "Exile"}, "2": {"name": "Bear", "owner": 0, "zone": "Exile"},
               "3": {"name": "Shock", "owner": 0, "zone": "Exile"}, "4": {"name": "Bear", "owner": 1, "zone": "Exile"},
               "5": {"name": "Token", "owner": 0, "zone": "Exile", "is_token": True},
               "6": {"name": "Bear", "owner": 0, "zone": "Library"}}
    state = {"state": {"objects": objects}}
    deck = {"Bear": 2, "Shock": 1}
    # the loser's cards were all exiled by the clean-up: the board as it stood tells what was drawn
    board = {"players": [{"hand": [{"id": 1}], "graveyard": [{"id": 3}], "battlefield": [{"id": 5}]},
                         {"battlefield": [{"id": 4}]}], "exile": []}
    assert cards_drawn(state, 0, deck, board) == {"Bear": 1, "Shock": 1}
    assert cards_drawn(state, 0, deck) == {"Bear": 2, "Shock": 1}  # without the board: outside the library
    assert cards_drawn({}, 0, deck) == {}
