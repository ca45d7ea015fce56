"""DraftsimBot: every published rule checked numerically on a hand-made set, pick == score_logs,
and (real data) the held-out agreement on the BLB proxy logs."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from drafts.bots.base import PickContext
from drafts.bots.draftsim import DraftsimBot
from drafts.core.cards import DraftCard, SetList
from drafts.core.logs import DraftLogs

DATA = Path(os.environ.get("MTG_DATA_DIR", "/work/shared/data"))

CARDS = (
    DraftCard("W1", "common", "W", "{1}{W}"),
    DraftCard("W2", "common", "W", "{W}{W}"),
    DraftCard("U1", "common", "U", "{1}{U}"),
    DraftCard("B1", "common", "B", "{2}{B}"),
    DraftCard("R1", "common", "R", "{1}{R}"),
    DraftCard("RR", "common", "R", "{2}{R}{R}"),
    DraftCard("RRR", "common", "R", "{R}{R}{R}"),
    DraftCard("G1", "common", "G", "{G}"),
    DraftCard("WU", "uncommon", "WU", "{W}{U}"),
    DraftCard("BRG", "rare", "BRG", "{B}{R}{G}"),
    DraftCard("WUBR", "mythic", "WUBR", "{W}{U}{B}{R}"),
    DraftCard("Art", "common", "", "{3}", types="Artifact"),
    DraftCard("Rx", "common", "R", ""),  # no mana cost known: one pip per colour
    DraftCard("BRx", "uncommon", "BR", ""),
)
SET = SetList(code="TST", cards=CARDS)
RATINGS = {c.name: 3.0 for c in CARDS}


def bot(**ratings) -> DraftsimBot:
    return DraftsimBot({**RATINGS, **ratings})


def ctx(pack_number=0, pick_number=0) -> PickContext:
    return PickContext(set_list=SET, pack_number=pack_number, pick_number=pick_number)


def value(b: DraftsimBot, name: str, pool, pack_number=0, pick_number=0) -> float:
    scores = dict(b.pick([name], pool, ctx(pack_number, pick_number)))
    return scores[name]


def bonus(b, name, pool, **kw):
    return value(b, name, pool, **kw) - b.rating(name)


def test_commitment_is_sum_of_rating_minus_baseline_per_colour():
    b = bot(W1=4.0, W2=1.5, WU=3.5)
    c = b.commitment(["W1", "W2", "WU", "Art"], SET)
    # W: (4-2) + (1.5-2) + (3.5-2) = 3.0 ; U: 1.5 ; colourless cards commit nothing
    np.testing.assert_allclose(c, [3.0, 1.5, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("w1, expected", [(2.0, 0.0), (2.875, 0.225), (3.75, 0.45), (5.0, 0.771428571),
                                          (1.0, 0.0)])
def test_speculation_bonus_ramps_linearly_to_0_9_at_3_5(w1, expected):
    b = bot(W1=w1)
    assert bonus(b, "W2", ["W1"]) == pytest.approx(expected)


def test_speculation_bonus_caps_at_0_9_and_floors_at_0():
    b = bot(W1=5.0, W2=5.0, U1=0.0)
    assert b.commitment(["W1", "W2", "U1"], SET)[0] == pytest.approx(6.0)
    assert bonus(b, "W1", ["W1", "W2", "U1"]) == pytest.approx(0.9)  # only one colour committed: speculation
    assert bonus(b, "U1", ["W1", "W2", "U1"]) == pytest.approx(0.0)  # commitment -2 floors at 0


def test_second_colour_bonus_raised_to_0_8_of_the_maximum():
    b = bot(W1=3.75, W2=3.75, U1=2.5, B1=2.2)
    pool = ["W1", "W2", "U1", "B1"]
    # W commitment 3.5 (bonus 0.9), U 0.5 (ramp would give 0.1286), B 0.2 (third: ramp only)
    assert bonus(b, "W1", pool) == pytest.approx(0.9)
    assert bonus(b, "U1", pool) == pytest.approx(0.72)
    assert bonus(b, "B1", pool) == pytest.approx(0.9 * 0.2 / 3.5)
    assert bonus(b, "G1", pool) == pytest.approx(0.0)
    # before the top colour is committed the raise is proportional to the top bonus
    b2 = bot(W1=3.0, U1=2.1)
    assert bonus(b2, "U1", ["W1", "U1"]) == pytest.approx(0.8 * 0.9 * 1.0 / 3.5)
    # no second colour with positive commitment: nothing raised
    assert bonus(bot(W1=3.0), "U1", ["W1"]) == pytest.approx(0.0)


def test_colourless_gets_largest_single_colour_bonus_in_speculation():
    b = bot(W1=3.75, U1=4.0)
    # W 1.75 -> 0.45 ; U 2.0 -> 0.514
    assert bonus(b, "Art", ["W1", "U1"]) == pytest.approx(0.9 * 2.0 / 3.5)
    assert bonus(b, "Art", []) == pytest.approx(0.0)


def test_two_and_three_colour_speculation_formula():
    b = bot(W1=3.75, U1=3.0, B1=2.7, R1=2.35)
    pool = ["W1", "U1", "B1", "R1"]
    bw, bu, bb, br = 0.45, 0.9 / 3.5, 0.9 * 0.7 / 3.5, 0.9 * 0.35 / 3.5
    bu = max(bu, 0.8 * bw)  # U is the second colour
    assert bonus(b, "WU", pool) == pytest.approx(bw + bu - (bb + br) - 0.6)
    assert bonus(b, "BRG", pool) == pytest.approx(bb + br - (bw + bu) - 0.6)
    assert bonus(b, "BRx", pool) == pytest.approx(bb + br - (bw + bu) - 0.6)


def test_four_and_five_colour_cards_get_no_bonus():
    b = bot(W1=3.75, U1=3.0)
    assert bonus(b, "WUBR", ["W1", "U1"]) == 0.0
    assert bonus(b, "WUBR", ["W1", "U1"], pack_number=2, pick_number=5) == 0.0


def committed_pool_bot():
    # W and U both pass 3.5: committed whatever the pick number
    b = bot(W1=4.0, W2=4.0, U1=5.0, WU=3.0)
    return b, ["W1", "W2", "U1", "WU"]  # W 5.0, U 4.0


def test_committed_stage_on_colour_bonus_two():
    b, pool = committed_pool_bot()
    assert b.is_committed(b.commitment(pool, SET), 0, 5)
    assert bonus(b, "W1", pool) == pytest.approx(2.0)
    assert bonus(b, "U1", pool) == pytest.approx(2.0)
    assert bonus(b, "WU", pool) == pytest.approx(2.0)
    assert bonus(b, "Art", pool) == pytest.approx(2.0)  # colourless: the largest single-colour bonus


def test_committed_stage_off_colour_pip_penalty_beyond_the_first():
    b, pool = committed_pool_bot()
    assert bonus(b, "R1", pool) == pytest.approx(0.0)  # {1}{R}: one off-colour symbol, no penalty
    assert bonus(b, "G1", pool) == pytest.approx(0.0)
    assert bonus(b, "RR", pool) == pytest.approx(-1.0)  # {2}{R}{R}
    assert bonus(b, "RRR", pool) == pytest.approx(-2.0)  # {R}{R}{R}
    assert bonus(b, "BRG", pool) == pytest.approx(-2.0)  # three off-colour symbols
    assert bonus(b, "Rx", pool) == pytest.approx(0.0)  # no cost: one symbol per colour
    assert bonus(b, "BRx", pool) == pytest.approx(-1.0)
    assert bonus(b, "WUBR", pool) == 0.0  # four colours: no bonus


def test_stage_switches_at_pack_2_pick_4():
    b = bot(W1=3.0, U1=3.0)
    pool = ["W1", "U1"]  # commitment 1.0 / 1.0: never committed by colour
    assert not b.is_committed(b.commitment(pool, SET), 0, 13)
    assert not b.is_committed(b.commitment(pool, SET), 1, 2)
    assert b.is_committed(b.commitment(pool, SET), 1, 3)
    assert b.is_committed(b.commitment(pool, SET), 2, 0)
    spec = 0.9 / 3.5
    assert bonus(b, "W1", pool, pack_number=1, pick_number=2) == pytest.approx(spec)
    assert bonus(b, "W1", pool, pack_number=1, pick_number=3) == pytest.approx(2.0)
    assert bonus(b, "RR", pool, pack_number=1, pick_number=2) == pytest.approx(0.0)
    assert bonus(b, "RR", pool, pack_number=1, pick_number=3) == pytest.approx(-1.0)
    assert bonus(b, "Art", pool, pack_number=2, pick_number=0) == pytest.approx(2.0)
    # two colours past the threshold commit early
    b2 = bot(W1=5.5, U1=5.5)
    assert b2.is_committed(b2.commitment(pool, SET), 0, 2)


def test_top_pair_ties_in_wubrg_order():
    assert DraftsimBot.top_pair(np.array([0.0, 0.0, 0.0, 0.0, 0.0])) == "WU"
    assert DraftsimBot.top_pair(np.array([1.0, 0.0, 3.0, 3.0, 0.0])) == "BR"


def test_is_a_draft_bot():
    from drafts.bots.base import DraftBot

    b = bot()
    assert isinstance(b, DraftBot) and b.name == "draftsim"


def test_unknown_cards_get_a_low_rating_and_pick_keeps_repeats():
    b = DraftsimBot({"W1": 1.0, "W2": 2.0, "U1": 3.0, "B1": 4.0, "R1": 5.0})
    assert b.rating("Nope") == pytest.approx(np.percentile([1, 2, 3, 4, 5], 10))
    ranking = b.pick(["W1", "R1", "Nope", "R1"], [], ctx())
    assert [n for n, _ in ranking] == ["R1", "R1", "Nope", "W1"]
    assert b.pick([], [], ctx()) == []
    assert DraftsimBot({}, unknown_rating=0.5).rating("x") == 0.5


def synthetic_logs(rng, rows=300) -> DraftLogs:
    names = [c.name for c in CARDS] + ["Ghost"]  # a column the set list lacks
    n = len(names)
    pack = np.zeros((rows, n), np.uint8)
    pool = np.zeros((rows, n), np.uint8)
    pick = np.zeros(rows, np.int16)
    for r in range(rows):
        in_pack = rng.choice(n, size=rng.integers(1, 9), replace=False)
        pack[r, in_pack] = 1
        pool[r] = rng.integers(0, 3, n) * (rng.random(n) < 0.4)
        pick[r] = rng.choice(in_pack)
    return DraftLogs(set_code="TST", cards=names, draft_id=np.array([f"d{r // 42}" for r in range(rows)]),
                     draft_time=np.full(rows, ""), pack_number=rng.integers(0, 3, rows).astype(np.int8),
                     pick_number=rng.integers(0, 14, rows).astype(np.int8), pick=pick, pack=pack, pool=pool)


def test_score_logs_matches_pick():
    rng = np.random.default_rng(3)
    ratings = {c.name: float(rng.uniform(0, 5)) for c in CARDS}
    b = DraftsimBot(ratings)
    logs = synthetic_logs(rng)
    scores = b.score_logs(logs, SET)
    assert scores.shape == (len(logs), len(logs.cards))
    for r in range(len(logs)):
        c = PickContext(set_list=SET, pack_number=int(logs.pack_number[r]), pick_number=int(logs.pick_number[r]))
        ranking = b.pick(logs.pack_names(r), logs.pool_names(r), c)
        for name, score in ranking:
            assert scores[r, logs.cards.index(name)] == pytest.approx(score, abs=1e-5)


@pytest.mark.realdata
def test_real_blb_held_out_agreement_and_pick_equivalence():
    from drafts.bots.ratings import ratings_from_17lands, set_list_with_catalog
    from drafts.core.cards import read_17lands_set
    from drafts.core.evaluate import agreement, ranks_from_scores
    from drafts.core.logs import held_out_mask, pod_keys, read_17lands_csv, read_seats, seats_file_for

    path = DATA / "drafts" / "draft_data_proxy.BLB.PremierDraft.train.csv.gz"
    if not path.exists():
        pytest.skip(f"real data not found at {DATA} (set MTG_DATA_DIR)")
    catalog = DATA / "arenamcp_17lands_ratings" / "catalogs" / "BLB.catalog.json"
    cards = DATA / "statistical-drafting" / "cards"
    set_list = set_list_with_catalog(read_17lands_set(cards / "BLB.csv", cards / "cards.csv"), catalog)
    logs = read_17lands_csv(path)
    held = logs.select(held_out_mask(pod_keys(logs, read_seats(seats_file_for(path)))))
    b = DraftsimBot(ratings_from_17lands(catalog))
    scores = b.score_logs(held, set_list)
    result = agreement(held, ranks_from_scores(held, scores))
    assert result["all"]["top1"] >= 0.50
    for r in range(0, len(held), 997):
        c = PickContext(set_list=set_list, pack_number=int(held.pack_number[r]), pick_number=int(held.pick_number[r]))
        for name, score in b.pick(held.pack_names(r), held.pool_names(r), c):
            assert scores[r, held.cards.index(name)] == pytest.approx(score, abs=1e-4)
