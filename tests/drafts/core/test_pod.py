"""The pod engine: passing, queues for slow seats, validation, persistence and the bot runner."""
from __future__ import annotations

import json
import time
from collections import Counter

import numpy as np
import pytest

from drafts.bots.base import PickContext, rank
from drafts.core.cards import DraftError
from drafts.core.collation import BoosterCollation
from drafts.core.deckbuild import build_deck
from drafts.core.pod import DraftPod, PickRecord, pass_direction, simulate, step_bots

from .conftest import make_set


class NameBot:
    """Takes the alphabetically first card; scores are minus the alphabetical position."""

    name = "by-name"

    def __init__(self):
        self.contexts: list[tuple[int, PickContext, int]] = []

    def pick(self, pack, pool, context):
        self.contexts.append((len(pack), context, len(pool)))
        order = sorted(pack)
        return rank(pack, [-order.index(n) for n in pack])


class RarityBot:
    """Rares first, then by name (a second, different simple bot)."""

    name = "rarity"
    ORDER = {"mythic": 0, "rare": 1, "uncommon": 2, "common": 3}

    def pick(self, pack, pool, context):
        return rank(pack, [-self.ORDER.get(context.card(n).rarity, 4) - i / 100 for i, n in enumerate(pack)])


def full_pod(small_set, seed=0, seats=8):
    return simulate(DraftPod(small_set, seats=seats, seed=seed), [NameBot() for _ in range(seats)])


def test_full_simulation_gives_42_picks_per_seat(small_set):
    pod = full_pod(small_set)
    assert pod.is_complete and pod.waiting_seats() == []
    opened = Counter(n for p in pod.to_state()["opened"] for n in p)
    picked = Counter()
    for seat in range(8):
        history = pod.history(seat)
        assert len(history) == 42 == len(pod.pool(seat))
        assert [(r.pack_number, r.pick_number) for r in history] == [(p, k) for p in range(3) for k in range(14)]
        assert [len(r.pack) for r in history] == list(range(14, 0, -1)) * 3
        assert all(r.pool == tuple(pod.pool(seat)[:i]) for i, r in enumerate(history))
        assert all(r.scores and r.scores[0][0] == r.pick for r in history)
        picked.update(pod.pool(seat))
    assert picked == opened
    with pytest.raises(DraftError, match="complete"):
        pod.pick(0, pod.pool(0)[0])


def test_pass_directions(small_set):
    pod = full_pod(small_set)
    n = pod.seats
    assert (pass_direction(0), pass_direction(1), pass_direction(2)) == (1, -1, 1)
    for seat in range(n):
        for p, source in ((0, seat - 1), (1, seat + 1), (2, seat - 1)):
            mine = [r for r in pod.history(seat) if r.pack_number == p]
            theirs = [r for r in pod.history(source % n) if r.pack_number == p]
            for k in range(1, 14):
                before = Counter(theirs[k - 1].pack)
                before[theirs[k - 1].pick] -= 1
                assert Counter(mine[k].pack) == +before


def test_deterministic_for_a_seed(small_set):
    assert full_pod(small_set, seed=9).records() == full_pod(small_set, seed=9).records()
    assert full_pod(small_set, seed=9).records() != full_pod(small_set, seed=10).records()
    opened = DraftPod(small_set, seed=4).to_state()["opened"]
    rng = np.random.default_rng(4)  # the documented order: round by round, seat by seat
    assert opened == BoosterCollation(small_set).open_packs(rng, 24)


def test_bots_get_the_right_context(small_set):
    bot = NameBot()
    simulate(DraftPod(small_set, seats=3, seed=1), {0: bot, 1: NameBot(), 2: NameBot()})
    assert len(bot.contexts) == 42
    for i, (pack_len, ctx, pool_len) in enumerate(bot.contexts):
        assert (ctx.pack_number, ctx.pick_number, ctx.seat, ctx.seats, ctx.packs, ctx.picks_per_pack) == \
            (i // 14, i % 14, 0, 3, 3, 14)
        assert pack_len == 14 - ctx.pick_number and pool_len == i and ctx.set_list is small_set


def test_state_round_trip_mid_draft(small_set):
    bots = {s: (RarityBot() if s % 2 else NameBot()) for s in range(8) if s not in (0, 3)}
    pod = DraftPod(small_set, seed=77)
    simulate(pod, bots)
    for _ in range(5):  # the people pick a few times, bots catch up after each
        for seat in (0, 3):
            if pod.current_pack(seat):
                pod.pick(seat, pod.current_pack(seat)[-1])
        simulate(pod, bots)
    state = json.loads(json.dumps(pod.to_state()))
    again = DraftPod.from_state(small_set, state)
    assert again.records() == pod.records()
    assert again.to_state() == state
    for seat in range(8):
        assert again.current_pack(seat) == pod.current_pack(seat)
        assert again.packs_waiting(seat) == pod.packs_waiting(seat)
        assert again.pick_number(seat) == pod.pick_number(seat)
        assert again.pool(seat) == pod.pool(seat) and again.history(seat) == pod.history(seat)
    assert (again.pack_number, again.waiting_seats()) == (pod.pack_number, pod.waiting_seats())
    for p in (pod, again):  # both finish the same way
        while not p.is_complete:
            for seat in (0, 3):
                if p.current_pack(seat):
                    p.pick(seat, p.current_pack(seat)[0])
            simulate(p, bots)
    assert again.records() == pod.records()


def test_state_keeps_non_finite_scores_and_rejects_other_sets(small_set):
    pod = DraftPod(small_set, seats=2, seed=0)
    pack = pod.current_pack(0)
    pod.pick(0, pack[0], scores=[(pack[0], float("inf")), (pack[1], -float("inf")), (pack[2], 0.5)])
    state = json.loads(json.dumps(pod.to_state(), allow_nan=False))
    assert DraftPod.from_state(small_set, state).records() == pod.records()
    with pytest.raises(DraftError, match="TST draft, not OTH"):
        DraftPod.from_state(make_set(code="OTH"), state)
    state["picks"][0][1] = "No Such Card"
    with pytest.raises(DraftError, match="No Such Card is not in the pack"):
        DraftPod.from_state(small_set, state)


def test_pick_errors(small_set):
    pod = DraftPod(small_set, seed=3)
    pack = pod.current_pack(0)
    with pytest.raises(DraftError, match="Not A Card is not in the pack"):
        pod.pick(0, "Not A Card")
    with pytest.raises(DraftError, match=r"stale pick: expected pack 1 pick 1"):
        pod.pick(0, pack[0], pack_number=0, pick_number=1)
    with pytest.raises(DraftError, match="stale pick"):
        pod.pick(0, pack[0], pack_number=1)
    record = pod.pick(0, pack[0], pack_number=0, pick_number=0)
    assert isinstance(record, PickRecord) and record.pack == tuple(pack) and record.pool == ()
    assert pod.current_pack(0) is None and pod.packs_waiting(1) == 2
    with pytest.raises(DraftError, match="pick out of turn: seat 0"):
        pod.pick(0, pack[1])
    with pytest.raises(DraftError, match="stale pick: expected pack 1 pick 1"):  # a repeated submit at seat 1
        pod.pick(1, pod.current_pack(1)[0], pack_number=0, pick_number=1)
    with pytest.raises(DraftError, match="no seat 8"):
        pod.current_pack(8)
    for seats in (1, 9):
        with pytest.raises(DraftError, match="2 to 8 seats"):
            DraftPod(small_set, seats=seats)


def test_slow_seat_queues_packs(small_set):
    pod = DraftPod(small_set, seats=4, seed=5)
    bots = {1: NameBot(), 2: NameBot(), 3: NameBot()}
    simulate(pod, bots)
    # seat 0 has not picked: the other packs pile up in its queue and the pod stalls on seat 0 alone
    assert pod.waiting_seats() == [0]
    assert pod.packs_waiting(0) == 4 and [pod.pick_number(s) for s in range(4)] == [0, 1, 2, 3]
    pod.pick(0, pod.current_pack(0)[0])
    assert [len(pod.current_pack(0)), pod.pick_number(0), pod.packs_waiting(0)] == [13, 1, 3]
    simulate(pod, bots)  # seat 0's own pack went to seat 1, which can pick again
    assert pod.waiting_seats() == [0] and pod.packs_waiting(0) == 4
    assert [pod.pick_number(s) for s in range(4)] == [1, 2, 3, 4]
    with pytest.raises(DraftError, match="seat 1 has no pack yet"):
        pod.pick(1, "Common W00")
    while pod.pick_number(3) < 14:  # seat 0 picks whatever it holds; seat 3 finishes the round first
        pod.pick(0, pod.current_pack(0)[0])
        simulate(pod, bots)
    assert pod.pack_number == 0 and pod.current_pack(3) is None
    with pytest.raises(DraftError, match="seat 3 has made all its picks of pack 1"):
        pod.pick(3, "Common W00")


def test_mixed_humans_and_bots(small_set):
    humans = {2, 5}
    bots = [None if s in humans else NameBot() for s in range(8)]
    pod = DraftPod(small_set, seed=12)
    steps = 0
    while not pod.is_complete:
        simulate(pod, bots)
        waiting = pod.waiting_seats()
        assert waiting and set(waiting) <= humans or pod.is_complete
        for seat in waiting:
            pod.pick(seat, pod.current_pack(seat)[0], pod.pack_number, pod.pick_number(seat))
        steps += 1
    assert steps >= 42 and all(len(pod.pool(s)) == 42 for s in range(8))
    assert all(r.scores is None for s in humans for r in pod.history(s))
    assert all(r.scores is not None for r in pod.history(0))


def test_step_bots_is_one_simultaneous_step(small_set):
    pod = DraftPod(small_set, seed=1)
    records = step_bots(pod, [NameBot() for _ in range(8)])
    assert [r.seat for r in records] == list(range(8))
    assert all(pod.pick_number(s) == 1 for s in range(8))
    assert step_bots(pod, {}) == []


def test_bot_choosing_outside_the_pack_is_an_error(small_set):
    class Broken:
        name = "broken"

        def pick(self, pack, pool, context):
            return [("Nothing", 1.0)]

    with pytest.raises(DraftError, match="bot 'broken' at seat 0 chose 'Nothing'"):
        simulate(DraftPod(small_set, seats=2), {0: Broken()})


def test_cube_pod_and_fewer_seats():
    cube = make_set(code="CUBE", booster="cube", commons=150, uncommons=100, rares=90, mythics=20)
    pod = simulate(DraftPod(cube, seats=8, pack_size=15, seed=2), [NameBot() for _ in range(8)])
    picks = [r.pick for r in pod.records()]
    assert len(picks) == 360 == len(set(picks))
    assert all(len(pod.pool(s)) == 45 for s in range(8))
    with pytest.raises(DraftError, match="need 375"):
        DraftPod(cube, seats=5, packs=5, pack_size=15)
    two = simulate(DraftPod(make_set(), seats=2, seed=0), [NameBot(), NameBot()])
    assert two.is_complete and len(two.pool(1)) == 42


def test_full_pod_and_decks_are_fast(small_set):
    """8 seats x 42 picks plus 8 deck builds, with trivial bots, well under half a second."""
    class FirstBot:
        name = "first"

        def pick(self, pack, pool, context):
            return [(n, 0.0) for n in pack]

    start = time.perf_counter()
    pod = simulate(DraftPod(small_set, seed=0), [FirstBot() for _ in range(8)])
    decks = [build_deck(pod.pool(s), small_set) for s in range(8)]
    elapsed = time.perf_counter() - start
    assert all(d.size == 40 for d in decks)
    assert elapsed < 0.5, f"pod + deck building took {elapsed:.3f}s"


def test_held_out_split_keeps_both_sides_for_few_pods():
    """crc32('pod0') and crc32('pod3') are both 0 mod 10, crc32('pod1') and crc32('pod2') are not: whatever the
    hashes, two or more pods give a non-empty held-out share and a non-empty training share."""
    from drafts.core.logs import held_out_mask

    for pods in (["pod0", "pod3"], ["pod1", "pod2"], ["pod0", "pod1"], ["pod0", "pod3", "pod8"]):
        keys = np.array([p for p in pods for _ in range(3)], dtype=object)
        held = held_out_mask(keys)
        assert held.any() and not held.all(), pods
        assert all(len(set(held[keys == p])) == 1 for p in pods)  # a pod is never split
    many = np.array([f"pod{i}" for i in range(200)], dtype=object)
    assert 0.05 < held_out_mask(many).mean() < 0.15  # the usual one in ten
