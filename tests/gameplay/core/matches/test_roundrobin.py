"""The gauntlet's pure core: schedule, the matrix, card statistics, the heat map (Wilson intervals: tests/common)."""

import pytest

from common.figures import figure_bytes
from gameplay.core.matches import roundrobin as core


def test_schedule_every_pair_k_games_mirrored_with_shared_seeds():
    plan = core.schedule(4, 4, seed=7)
    assert len(plan) == 6 * 4 and [g.index for g in plan] == list(range(24))
    by_pair = {}
    for g in plan:
        by_pair.setdefault(g.pair, []).append(g)
    assert sorted(by_pair) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    for (a, b), games in by_pair.items():
        assert [g.round for g in games] == [0, 1, 2, 3]
        assert [g.seats for g in games] == [(a, b), (b, a), (a, b), (b, a)]  # seats swap every game
        assert games[0].seed == games[1].seed and games[2].seed == games[3].seed  # a mirrored couple
        assert games[0].seed != games[2].seed
    # the first round covers every pair before any pair's second game
    assert {g.pair for g in plan[:6]} == set(by_pair)
    # deterministic, and another seed gives other games
    assert [g.seed for g in core.schedule(4, 4, seed=7)] == [g.seed for g in plan]
    assert [g.seed for g in core.schedule(4, 4, seed=8)] != [g.seed for g in plan]
    odd = core.schedule(2, 3)
    assert [g.seats for g in odd] == [(0, 1), (1, 0), (0, 1)] and odd[2].seed != odd[0].seed
    assert plan[0].to_dict() == {"index": 0, "pair": [0, 1], "round": 0, "seats": [0, 1], "seed": plan[0].seed}


@pytest.mark.parametrize("n, k", [(1, 2), (0, 2), (2, 0), (3, -1), (2, core.MAX_GAMES_PER_PAIR + 1)])
def test_schedule_refuses_bad_input(n, k):
    with pytest.raises(core.GauntletInputError):
        core.schedule(n, k)


def g(seats, winner, error="", cut=False):
    return {"seats": list(seats), "winner": winner, "error": error, "cut": cut}


GAMES = [
    g((0, 1), 0), g((1, 0), 1),        # deck 0 wins both against deck 1
    g((0, 2), 1), g((2, 0), 0),        # deck 2 wins both against deck 0
    g((1, 2), None, cut=True),         # a cut game: a draw
    g((2, 1), 0),                      # deck 2 beats deck 1
    g((1, 2), None, error="EnginePanic: boom"),  # not scored
]


def test_aggregate_matrix_standings_draws_half_errors_apart():
    s = core.aggregate(["A", "B", "C"], GAMES)
    m = s["matrix"]
    assert m[0][0] is None and m[1][1] is None
    assert (m[0][1]["wins"], m[0][1]["losses"], m[0][1]["games"], m[0][1]["rate"]) == (2, 0, 2, 1.0)
    assert (m[1][0]["wins"], m[1][0]["losses"], m[1][0]["rate"]) == (0, 2, 0.0)
    assert m[2][0]["rate"] == 1.0 and m[0][2]["rate"] == 0.0
    bc = m[1][2]
    assert (bc["wins"], bc["losses"], bc["draws"], bc["games"], bc["score"], bc["rate"]) == (0, 1, 1, 2, 0.5, 0.25)
    assert m[2][1]["rate"] == 0.75 and m[2][1]["draws"] == 1
    for i in range(3):
        for j in range(3):
            if i != j:
                assert m[i][j]["rate"] + m[j][i]["rate"] == pytest.approx(1.0)
                assert m[i][j]["low"] <= m[i][j]["rate"] <= m[i][j]["high"]
    assert [r["name"] for r in s["standings"]] == ["C", "A", "B"]
    c = s["standings"][0]
    assert (c["wins"], c["losses"], c["draws"], c["games"], c["rate"]) == (3, 0, 1, 4, 0.875)
    assert s["games"] == {"finished": 7, "scored": 6, "errors": 1, "draws": 1, "cut": 1}
    # seat 0 (on the play) won 3 of the 5 decided games and drew one
    assert (s["first_seat"]["wins"], s["first_seat"]["losses"], s["first_seat"]["draws"]) == (3, 2, 1)
    assert "half" in s["draw_policy"]


def test_aggregate_of_nothing_and_bad_games():
    s = core.aggregate(["A", "B"], [])
    assert s["matrix"][0][1]["games"] == 0 and s["matrix"][0][1]["rate"] is None
    assert s["standings"][0]["rate"] is None
    with pytest.raises(core.GauntletInputError):
        core.aggregate(["A", "B"], [g((0, 5), 0)])


def test_card_stats_presence_in_won_games():
    decks = [{"Bolt": 4, "Goblin": 2, "Mountain": 20}, {"Counterspell": 4, "Island": 20},
             {"Bolt": 2, "Counterspell": 2, "Island": 10}]
    cards = core.card_stats(decks, GAMES)
    by = {c["card"]: c for c in cards}
    assert "Mountain" not in by and "Island" not in by  # basic lands are left out by default
    assert "Island" in {c["card"] for c in core.card_stats(decks, GAMES, include_basics=True)}
    # 6 scored games: 6 won and 6 lost deck-games (a draw gives half of each)
    # deck A: 4 games, score 2; deck B: 4 games, score 0.5; deck C: 4 games, score 3.5
    bolt = by["Bolt"]  # decks A and C
    assert (bolt["decks"], bolt["games"], bolt["won"], bolt["lost"]) == (2, 8, 5.5, 2.5)
    assert bolt["won_share"] == pytest.approx(5.5 / 6, abs=1e-4) and bolt["lost_share"] == pytest.approx(2.5 / 6, abs=1e-4)
    assert bolt["rate"] == pytest.approx(5.5 / 8, abs=1e-4) and bolt["low"] < bolt["rate"] < bolt["high"]
    assert bolt["copies_won"] == pytest.approx((4 * 2 + 2 * 3.5) / 6, abs=1e-3)
    counter = by["Counterspell"]  # decks B and C
    assert (counter["won"], counter["lost"]) == (4.0, 4.0) and counter["presence"] == 0
    goblin = by["Goblin"]
    assert goblin["won"] == 2 and goblin["lost"] == 2
    assert [c["card"] for c in cards] == ["Bolt", "Counterspell", "Goblin"]  # sorted by presence in wins
    assert (bolt["presence"], counter["presence"], goblin["presence"]) == (0.5, 0.0, 0.0)  # ties: more won games first


def test_format_matrix_and_heatmap_render():
    s = core.aggregate(["mono_red_aggro", "B", "C"], GAMES)
    text = core.format_matrix(s)
    assert "mono_red_aggro" in text and "100% [34-100] 2" in text
    svg = figure_bytes(core.heatmap_figure(s), "svg")
    assert svg.startswith(b"<?xml") and b"<svg" in svg
    assert b"mono_red_aggro" in svg and b"88% overall" in svg and b"n=2" in svg
    assert figure_bytes(core.heatmap_figure(s), "svg") == svg  # deterministic bytes
    png = figure_bytes(core.heatmap_figure(core.aggregate(["A", "B"], [])), "png")
    assert png.startswith(b"\x89PNG")
    with pytest.raises(ValueError):
        figure_bytes(core.heatmap_figure(s), "gif")


def test_expand():
    assert core.expand([["A", 2], ["B", 1]]) == ["A", "A", "B"]
