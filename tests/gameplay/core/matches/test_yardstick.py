"""gameplay.core.matches.yardstick: the paired yardstick's jobs, pairing, sign test and Wilson intervals (pure core)."""
from __future__ import annotations

import pytest

from common.stats import wilson
from gameplay.core.matches import yardstick as strength
from tests.gameplay.conftest import sample_deck_lists


def test_jobs_cover_both_seats_and_both_deck_orders_on_one_deal():
    jobs = strength.jobs([("a", "b"), ("c", "c")], seeds=2, seed=100)
    assert len(jobs) == 2 * (4 + 2)  # a pairing: each deck in each seat, ours in each seat; a mirror: ours in each seat
    keys = [strength.key(j) for j in jobs]
    assert len(set(keys)) == len(keys)
    first = [j for j in jobs if j["seed"] == 100 + 100 * strength.pairing_number("a", "b")]
    assert {(tuple(j["decks"]), j["ours_seat"]) for j in first} == {
        (("a", "b"), 0), (("a", "b"), 1), (("b", "a"), 0), (("b", "a"), 1)}
    ab, cc = 100 + 100 * strength.pairing_number("a", "b"), 100 + 100 * strength.pairing_number("c", "c")
    assert {j["seed"] for j in jobs if j["mirror"]} == {cc, cc + 1} and all(j["opponent"] == "engine:VeryHard" for j in jobs)
    assert [j["seed"] for j in jobs[:6]] == [ab] * 4 + [cc] * 2  # deal by deal across the pairings
    # a pairing's deals do not depend on the others run with it (runs over other selections share games)
    assert {strength.key(j) for j in strength.jobs([("b", "a")], seeds=2, seed=100)} <= set(keys)


def _game(seed, seat, player, score, mirror=False, cpu=10.0):
    return {"decks": ["a", "a" if mirror else "b"], "seed": seed, "ours_seat": seat, "opponent": "engine:VeryHard",
            "player": player, "score": score, "mirror": mirror, "cpu_seconds": cpu, "ours_cpu_seconds": cpu / 2}


def test_compare_counts_discordant_pairs_and_tests_them():
    games = []
    # 12 deals: 8 where we won and the baseline lost, 1 the other way, 3 where both results agree
    for s in range(12):
        ours, base = (1.0, 0.0) if s < 8 else (0.0, 1.0) if s == 8 else (1.0, 1.0) if s < 11 else (0.0, 0.0)
        mirror = s % 2 == 0
        games += [_game(s, 0, "search:x", ours, mirror, cpu=20.0 + s), _game(s, 0, strength.BASELINE, base, mirror)]
    games.append(_game(99, 1, "search:x", 1.0))  # no baseline game: no pair, not counted
    # an engine error broke off our game of this pair: left out of the comparison, counted apart
    games += [{**_game(98, 0, "search:x", 0.5), "error": "IllegalAction: Wrong player"}, _game(98, 0, strength.BASELINE, 1.0)]
    summary = strength.summarize(games)
    assert list(summary) == ["search:x"]
    a = summary["search:x"]["all"]
    assert (a["pairs"], a["better"], a["worse"], a["discordant"], a["both_won"], a["both_lost"]) == (12, 8, 1, 9, 2, 1)
    assert a["errors"] == 1
    assert a["sign_test_p"] == pytest.approx(2 * (1 + 9) / 2 ** 9, abs=1e-4)  # exact two-sided binomial, 8 of 9
    assert a["win_rate"] == pytest.approx(10 / 12, abs=1e-4) and a["baseline_win_rate"] == pytest.approx(3 / 12, abs=1e-4)
    _, lo, hi = wilson(10, 12)
    assert a["ci95"] == [round(lo, 4), round(hi, 4)] and lo < 10 / 12 < hi
    assert a["cpu_seconds_per_game"] == pytest.approx(sum(20.0 + s for s in range(12)) / 12, abs=0.1)
    assert a["cpu_seconds_max"] == 31.0 and a["games_over_2_minutes"] == 0
    assert summary["search:x"]["mirrors"]["pairs"] == 6 and summary["search:x"]["pairings"]["pairs"] == 6
    assert a["discordant_share"] == pytest.approx(9 / 12, abs=1e-4)
    assert a["pairs_needed_at_this_split"] == strength.pairs_needed(8 / 9, 9 / 12)
    assert a["changed_per_game"] is None  # no search statistics in these records


def test_a_search_players_overrulings_and_a_losing_split_are_reported():
    games = []
    for s in range(6):
        ours = {**_game(s, 0, "search:y", 0.0 if s < 2 else 1.0), "ours_stats": {"changed": s}}
        games += [ours, _game(s, 0, strength.BASELINE, 1.0)]
    a = strength.summarize(games)["search:y"]["all"]
    assert (a["better"], a["worse"]) == (0, 2)
    assert a["pairs_needed_at_this_split"] is None  # behind: no number of pairs makes it a win
    assert a["changed_per_game"] == pytest.approx(sum(range(6)) / 6, abs=0.01)


def test_a_player_that_plays_like_the_baseline_is_not_significant():
    games = [g for s in range(20) for g in (_game(s, 0, "p", float(s % 2)), _game(s, 0, strength.BASELINE, float(s % 2)))]
    a = strength.summarize(games)["p"]["all"]
    assert a["discordant"] == 0 and a["sign_test_p"] == 1.0 and a["win_rate"] == a["baseline_win_rate"] == 0.5


def test_pairs_needed_grows_as_the_edge_shrinks():
    big, small = strength.pairs_needed(0.8, 0.2), strength.pairs_needed(0.6, 0.2)
    assert big is not None and small is not None and big < small
    assert strength.pairs_needed(0.5, 0.2) is None and strength.pairs_needed(0.7, 0) is None


def test_a_pair_is_the_same_game_twice_when_the_players_agree(engine):
    """The yardstick's premise: on one job the engine is deterministic, so the baseline played twice (or any
    player that chooses as it does) gives the same game; a difference between the two games of a pair is the
    player's doing."""
    cards = {name: deck["main"] for name, deck in sample_deck_lists().items()}
    job = strength.jobs([("mono_red_aggro", "mono_white_weenie")], seeds=1, seed=31, opponent="engine:Easy",
                        max_decisions=120)[1]
    first = strength.play(engine, job, "engine:Easy", cards)
    again = strength.play(engine, job, "engine:Easy", cards)
    assert not first.get("error")
    assert (first["winner"], first["turns"], first["decisions"]) == (again["winner"], again["turns"], again["decisions"])
    assert first["ours_decisions"] > 10 and first["ours_cpu_seconds"] <= first["cpu_seconds"]
    twin = strength.compare(strength.pairs([{**first, "player": "twin"}, again], "twin", baseline="engine:Easy"))
    assert twin["pairs"] == 1 and twin["discordant"] == 0


def test_cut_off_calls_and_fallbacks_are_reported_per_player():
    """Nothing may hit the engine's wall-clock cap unnoticed: the bench's meter of each side's AI calls (or an
    ensemble's own count) and the decisions that fell back to the real game are summed per player."""
    games = []
    for s in range(4):
        ours = {**_game(s, 0, "ensemble:VeryHard:8", 1.0 if s else 0.0),
                "engine_calls": {"ours": {"calls": 10, "cut_off": s, "seconds": 3.0},
                                 "opponent": {"calls": 5, "cut_off": 1, "seconds": 1.0}},
                "ours_stats": {"cut_off": s, "fallbacks": 1 if s == 3 else 0,
                               "reasons": {"no copy could be loaded": 1} if s == 3 else {}}}
        base = {**_game(s, 0, strength.BASELINE, 0.0), "engine_calls": {"ours": {"calls": 4, "cut_off": 2}},
                "ours_honest": {"honest": 4, "fallbacks": 0, "reasons": {}}}
        games += [ours, base]
    # a record without the meter: the ensemble's own count stands in
    games += [{**_game(9, 0, "ensemble:VeryHard:8", 1.0), "ours_stats": {"cut_off": 5, "fallbacks": 0}},
              _game(9, 0, strength.BASELINE, 1.0)]
    # an honest engine player's counted fallback
    games += [{**_game(9, 0, "engine:VeryHard!peek", 1.0),
               "ours_honest": {"honest": 3, "fallbacks": 2, "reasons": {"copiable trigger origins": 2}}}]
    summary = strength.summarize(games)
    a = summary["ensemble:VeryHard:8"]["all"]
    assert a["cut_off"] == 0 + 1 + 2 + 3 + 5 and a["engine_calls"] == 40
    assert a["opponent_cut_off"] == 4 and a["baseline_cut_off"] == 8
    assert a["fallbacks"] == 1 and a["fallback_reasons"] == {"no copy could be loaded": 1}
    peek = summary["engine:VeryHard!peek"]["all"]
    assert peek["fallbacks"] == 2 and peek["cut_off"] is None  # not metered, and no count of its own: unknown, not 0


def test_an_ensemble_player_runs_on_the_jobs_threads_and_reports_its_votes(engine):
    """``job["workers"]``: the bench's one-search-per-core rule reaches the ensemble; its statistics (cut-off calls,
    fallbacks) land in the game's record."""
    cards = {name: deck["main"] for name, deck in sample_deck_lists().items()}
    job = {**strength.jobs([("mono_red_aggro", "mono_white_weenie")], seeds=1, seed=31, opponent="engine:Easy",
                           max_decisions=40)[0], "workers": 1}
    sides = []
    game = strength.play(engine, job, "ensemble:Easy:2", cards, on_turn=sides.append)
    assert not game.get("error") and game["player"] == "ensemble:Easy:2" and game["ours_workers"] == 1
    stats = game["ours_stats"]
    assert stats["decisions"] == game["ours_decisions"] > 5
    assert {"cut_off", "fallbacks", "refused", "split", "unanimous"} <= set(stats)
    assert set(sides) == {"ours", "opponent"} and len(sides) == game["decisions"]


def test_the_sequential_test_reads_discordant_pairs_in_the_order_they_were_played():
    """The SPRT stops at its first crossing: 12 straight discordant wins accept H1 (12 x ln 1.3 = 3.15 > 2.94), and the
    pairs played after it are not counted, whatever they say; the order is the games' ``order``, not the list's."""
    games, order = [], 0
    for s in range(30):
        ours, base = (1.0, 0.0) if s < 12 else (0.0, 1.0) if s < 24 else (1.0, 1.0)
        for g in (_game(s, 0, "advisor:vote", ours), _game(s, 0, strength.BASELINE, base)):
            order += 1
            games.append({**g, "order": order,
                          "engine_calls": {"ours": {"calls": 20, "cut_off": 2 if s == 3 else 0},
                                           "opponent": {"calls": 10, "cut_off": 0}}})
    games.reverse()  # stored in another order than played
    result = strength.sequential(games, "advisor:vote")
    assert result["state"] == "H1 accepted" and result["stopped_at"] == 12
    assert (result["pairs"], result["better"], result["worse"], result["pairs_played"]) == (12, 12, 0, 30)
    assert result["llr"] == pytest.approx(12 * 0.262364, abs=1e-3) and result["upper"] == pytest.approx(2.944, abs=1e-3)
    cap = result["engine_cap"]
    assert cap["ours"]["calls"] == 240 and cap["ours"]["cut_off"] == 2 and cap["ours"]["games_flagged"] == 1
    assert cap["baseline"]["cut_off"] == 2 and result["flagged_pairs"] == 1  # 2 of 20 = 10% > 5%: that pair flagged
    # the losses played first instead: H0 accepted after 9 of them (9 x ln 0.7 = -3.21)
    for g in games:
        if g["seed"] >= 12 and g["seed"] < 24:
            g["order"] -= 1000
    assert strength.sequential(games, "advisor:vote")["state"] == "H0 accepted"
    assert strength.sequential(games[:10], "advisor:vote")["state"] == "running"
