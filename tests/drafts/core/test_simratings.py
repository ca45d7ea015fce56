"""Card ratings from simulated pods: GIH win rate, Wilson interval, Spearman with a bootstrap over pods."""
from __future__ import annotations

import itertools

import pytest

from drafts.core.simratings import (bootstrap_rho, for_cards, gih_counts, gih_table, growth, noise_ceiling,
                                    rank_agreement, round_robin, shown_ratings, sim_label)

SEAT_GAMES = [(["A", "B"], True), (["A"], False), (["A", "A", "C"], True), (["B", "C"], False)]
REFERENCE = {"A": 0.60, "B": 0.55, "C": 0.58}


def test_gih_counts_a_card_once_per_seat_game():
    assert gih_counts(SEAT_GAMES) == {"A": [2, 3], "B": [1, 2], "C": [1, 2]}


def test_gih_table_by_hand():
    table = gih_table(gih_counts(SEAT_GAMES))
    assert list(table) == ["A", "B", "C"]  # best first, ties by name
    a = table["A"]
    # 2 of 3: p = 0.6667; Wilson (z = 1.96): centre (p + z^2/6) / (1 + z^2/3) = 0.5731,
    # half-width 1.96 * sqrt(p(1-p)/3 + z^2/36) / (1 + z^2/3) = 0.3654 -> [0.2077, 0.9385]
    assert (a["won"], a["games"], a["wr"]) == (2, 3, 0.6667)
    assert a["low"] == pytest.approx(0.2077, abs=1e-4) and a["high"] == pytest.approx(0.9385, abs=1e-4)
    assert table["B"]["wr"] == 0.5
    assert gih_table(gih_counts(SEAT_GAMES), min_games=3).keys() == {"A"}


def test_rank_agreement_by_hand():
    # simulated A 0.667, B 0.5, C 0.5 -> ranks 3, 1.5, 1.5; 17Lands A .60, B .55, C .58 -> ranks 3, 1, 2
    # centred (1, -.5, -.5) . (1, -1, 0) = 1.5; norms sqrt(1.5 * 2): rho = 1.5 / sqrt(3) = 0.8660
    assert rank_agreement(gih_counts(SEAT_GAMES), REFERENCE, min_games=1) == {"rho": 0.866, "cards": 3}
    assert rank_agreement(gih_counts(SEAT_GAMES), REFERENCE, min_games=3) == {"rho": None, "cards": 1}
    assert rank_agreement(gih_counts(SEAT_GAMES), {"A": 0.6}, min_games=1)["cards"] == 1


def test_bootstrap_interval_holds_the_point_and_is_reproducible():
    pods = [SEAT_GAMES[:2], SEAT_GAMES[2:], [(["B"], True), (["C"], False)], [(["A", "C"], True)]]
    out = bootstrap_rho(pods, REFERENCE, min_games=1, reps=200, seed=3)
    assert out["cards"] == 3 and out["pods"] == 4
    assert out["low"] <= out["rho"] <= out["high"]
    assert out == bootstrap_rho(pods, REFERENCE, min_games=1, reps=200, seed=3)
    assert bootstrap_rho(pods[:1], REFERENCE, min_games=1)["low"] is None  # one pod: no interval


def test_bootstrap_of_a_perfect_order_is_one():
    cards = {f"c{i}": 0.4 + i / 100 for i in range(6)}
    # card c_i wins i of 5 seat games in every pod: the simulated order is 17Lands' order
    pod = [([f"c{i}"], k < i) for i in range(6) for k in range(5)]
    out = bootstrap_rho([pod, pod, pod], cards, min_games=1, reps=100)
    assert (out["rho"], out["low"], out["high"]) == (1.0, 1.0, 1.0)


def test_bootstrap_sees_no_agreement_in_a_reversed_order():
    cards = {f"c{i}": 0.4 + i / 100 for i in range(6)}
    pod = [([f"c{i}"], k < 5 - i) for i in range(6) for k in range(5)]
    assert bootstrap_rho([pod, pod], cards, min_games=1, reps=50)["rho"] == -1.0


def test_growth_takes_whole_pods_up_to_each_checkpoint():
    pods = [SEAT_GAMES[:2], SEAT_GAMES[2:], SEAT_GAMES]
    rows = growth(pods, [1, 1, 2], REFERENCE, checkpoints=[1, 2, 3, 4, 10], min_games=1, reps=20)
    assert [r["games"] for r in rows] == [1, 2, 4]  # 3 games is not a whole number of pods: same as 2, dropped
    assert [r["pods"] for r in rows] == [1, 2, 3]
    assert rows[0]["rho"] is None  # one pod's two seat games draw A and B only
    assert rows[-1]["rho"] == 0.866


def test_round_robin_meets_each_pair_once():
    rounds = round_robin(8, 7)
    assert all(sorted(s for t in r for s in t) == list(range(8)) for r in rounds)
    pairs = [t for r in rounds for t in r]
    assert sorted(pairs) == sorted(itertools.combinations(range(8), 2))
    assert round_robin(8, 3) == rounds[:3]
    with pytest.raises(ValueError):
        round_robin(7, 3)
    with pytest.raises(ValueError):
        round_robin(4, 4)


def test_noise_ceiling_by_hand():
    # reference .60/.55/.58: mean .5767, variance ((.0233^2 + .0267^2 + .0033^2) / 3) = 0.000422;
    # noise: mean of 0.25/3, 0.25/2, 0.25/2 = 0.1111; sqrt(0.000422 / 0.1115) = 0.0615
    assert noise_ceiling(gih_counts(SEAT_GAMES), REFERENCE, min_games=1) == pytest.approx(0.0615, abs=1e-4)
    assert noise_ceiling(gih_counts(SEAT_GAMES), REFERENCE, min_games=3) is None


def test_shown_ratings_from_30_games_and_own_pack_only():
    table = {"A": {"games": 41, "wr": 0.561}, "B": {"games": 29, "wr": 0.7}, "C": {"games": "x"}}
    shown = shown_ratings(table)
    assert shown == {"A": {"wr": 0.561, "n": 41}}
    assert sim_label(shown["A"]) == "sim GIH 56% (n=41)"
    assert for_cards(shown, ["B", "A", "A"]) == {"A": {"wr": 0.561, "n": 41}}
    assert for_cards(shown, ["B"]) == {}


def test_ratings_are_shown_only_when_they_agree_with_players_beyond_noise():
    from drafts.core.simratings import agrees_with_players

    assert agrees_with_players({"spearman": {"rho": 0.3, "low": 0.05, "high": 0.5}})
    assert not agrees_with_players({"spearman": {"rho": -0.04, "low": -0.43, "high": 0.32}})
    assert not agrees_with_players({"spearman": {"rho": 0.2, "low": 0.0, "high": 0.4}})  # touching zero: not yet
    assert not agrees_with_players({}) and not agrees_with_players({"spearman": None})
