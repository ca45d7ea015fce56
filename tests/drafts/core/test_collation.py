"""Booster collation: slot make-up, no duplicates, determinism, errors, and the real BLB list."""
from __future__ import annotations

import csv
import gzip
import uuid
from collections import Counter

import numpy as np
import pytest

from drafts.core.cards import BASIC_LANDS, DraftCard, DraftError
from drafts.core.collation import BoosterCollation

from .conftest import data_dir, make_set


def rarities(set_list, pack):
    return Counter(set_list.card(n).rarity for n in pack)


def test_play_pack_slots_and_no_duplicates(small_set):
    collation = BoosterCollation(small_set)
    rng = np.random.default_rng(1)
    for pack in collation.open_packs(rng, 300):
        assert len(pack) == 14 == len(set(pack))
        counts = rarities(small_set, pack)
        assert counts["rare"] + counts["mythic"] == 1
        assert counts["uncommon"] == 3 and counts["common"] == 10


def test_play_is_deterministic_for_a_seed(small_set):
    collation = BoosterCollation(small_set)
    first = collation.open_packs(np.random.default_rng(42), 20)
    assert first == collation.open_packs(np.random.default_rng(42), 20)
    assert first != collation.open_packs(np.random.default_rng(43), 20)


def test_play_mythic_share_and_uniform_rares(small_set):
    collation = BoosterCollation(small_set)
    packs = collation.open_packs(np.random.default_rng(7), 7000)
    slot = Counter(p[0] for p in packs)
    mythic = sum(n for name, n in slot.items() if small_set.card(name).rarity == "mythic") / len(packs)
    assert abs(mythic - 1 / 7) < 0.015
    rare_counts = [n for name, n in slot.items() if small_set.card(name).rarity == "rare"]
    assert len(rare_counts) == 6 and max(rare_counts) / min(rare_counts) < 1.25


def test_set_without_mythics_always_opens_a_rare():
    set_list = make_set(mythics=0)
    packs = BoosterCollation(set_list).open_packs(np.random.default_rng(3), 200)
    assert {set_list.card(p[0]).rarity for p in packs} == {"rare"}


def test_play_full_has_wildcard_and_land_slot(small_set):
    collation = BoosterCollation(small_set, variant="play-full")
    packs = collation.open_packs(np.random.default_rng(5), 3000)
    extra_uncommons = []
    for pack in packs:
        assert len(pack) == 14 == len(set(pack))
        assert "Test Common Land" in pack  # the set's only common land: land slot, or the wildcard took it
        counts = rarities(small_set, pack)
        assert counts["rare"] + counts["mythic"] >= 1 and counts["uncommon"] >= 3
        extra_uncommons.append(counts["uncommon"] - 3)
    assert abs(np.mean(extra_uncommons) - 0.20) < 0.03  # wildcard is an uncommon 20% of the time


def test_play_full_land_slot_falls_back_to_a_basic():
    set_list = make_set(land=False)
    packs = BoosterCollation(set_list, variant="play-full").open_packs(np.random.default_rng(2), 50)
    basics = {c.name for c in BASIC_LANDS}
    assert all(sum(n in basics for n in p) == 1 and len(p) == 14 for p in packs)


def test_classic_has_a_basic_and_basics_stay_out_of_other_slots():
    basics = (DraftCard(name="Island", rarity="basic", types="Basic Land"),
              DraftCard(name="Swamp", rarity="basic", types="Basic Land"))
    stray = (DraftCard(name="Plains", rarity="common", types="Basic Land"),)  # a basic listed as common
    set_list = make_set(code="M20", booster="classic", basics=basics, extra=stray)
    collation = BoosterCollation(set_list)
    packs = collation.open_packs(np.random.default_rng(11), 8000)
    for pack in packs[:500]:
        assert len(pack) == 15 == len(set(pack))
        assert pack[-1] in {"Island", "Swamp"}
        assert not {"Island", "Swamp", "Plains"} & set(pack[:-1])
    mythic = sum(set_list.card(p[0]).rarity == "mythic" for p in packs) / len(packs)
    assert abs(mythic - 1 / 8) < 0.015


def test_classic_without_set_basics_uses_the_five_basics():
    set_list = make_set(code="M19", booster="classic")
    lands = {BoosterCollation(set_list).open_pack(np.random.default_rng(s))[-1] for s in range(60)}
    assert lands == {c.name for c in BASIC_LANDS}


def test_cube_deals_each_card_once():
    set_list = make_set(code="CUBE", booster="cube", commons=40, uncommons=40, rares=30, mythics=10)
    packs = BoosterCollation(set_list, pack_size=15).open_packs(np.random.default_rng(0), 8)
    names = [n for p in packs for n in p]
    assert [len(p) for p in packs] == [15] * 8 and len(names) == len(set(names)) == 120
    assert packs == BoosterCollation(set_list, pack_size=15).open_packs(np.random.default_rng(0), 8)
    with pytest.raises(DraftError, match="cube CUBE has 120 cards; 9 packs of 15 need 135"):
        BoosterCollation(set_list).open_packs(np.random.default_rng(0), 9)


@pytest.mark.parametrize("kwargs, message", [
    ({"commons": 9, "land": False}, "has 9 commons; a play booster needs at least 10"),
    ({"uncommons": 2}, "has 2 uncommons"),
    ({"rares": 0, "mythics": 0}, "no rares or mythics"),
])
def test_too_few_cards_for_a_slot(kwargs, message):
    with pytest.raises(DraftError, match=message):
        BoosterCollation(make_set(**kwargs))


def test_bad_variants_and_sizes(small_set):
    with pytest.raises(DraftError, match="unknown collation variant"):
        BoosterCollation(small_set, variant="jumpstart")
    with pytest.raises(DraftError, match="does not fit"):
        BoosterCollation(make_set(booster="classic"), variant="play-full")
    with pytest.raises(DraftError, match="only for cubes"):
        BoosterCollation(small_set, pack_size=15)


@pytest.mark.realdata
def test_blb_rarity_distribution(blb_set):
    collation = BoosterCollation(blb_set)
    packs = collation.open_packs(np.random.default_rng(2024), 7000)
    assert all(len(p) == 14 == len(set(p)) for p in packs)
    per_pack = [rarities(blb_set, p) for p in packs[:1000]]
    assert all(c["uncommon"] == 3 and c["common"] == 10 and c["rare"] + c["mythic"] == 1 for c in per_pack)
    mythic = sum(blb_set.card(p[0]).rarity == "mythic" for p in packs) / len(packs)
    assert abs(mythic - 1 / 7) < 0.012  # ~3 standard errors
    seen = {n for p in packs for n in p}
    assert len(seen) == 261  # every booster card of BLB shows up; no special guests


@pytest.mark.realdata
def test_blb_reproduces_the_proxy_logs_packs(blb_set):
    """Same draws as the proxy log generator: pod seed -> 8 ids, a start time, then the packs."""
    folder = data_dir() / "drafts"
    logs = folder / "draft_data_proxy.BLB.PremierDraft.train.csv.gz"
    seats = folder / "draft_data_proxy.BLB.PremierDraft.train.seats.csv"
    if not logs.exists() or not seats.exists():
        pytest.skip(f"proxy draft logs not found under {folder}")
    with open(seats, newline="") as fh:
        seed = int(next(csv.DictReader(fh))["pod_seed"])
    with gzip.open(logs, "rt", newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        rows = [next(reader) for _ in range(8 * 42)]
    cards = [(i, h[len("pack_card_"):]) for i, h in enumerate(header) if h.startswith("pack_card_")]
    logged = [sorted(name for i, name in cards if rows[seat * 42][i] not in ("", "0")) for seat in range(8)]

    rng = np.random.Generator(np.random.PCG64(seed))
    ids = [uuid.UUID(bytes=rng.bytes(16), version=4).hex for _ in range(8)]
    assert ids == [rows[seat * 42][header.index("draft_id")] for seat in range(8)]
    rng.integers(0, 56 * 86400)
    opened = BoosterCollation(blb_set).open_packs(rng, 8)
    assert [sorted(p) for p in opened] == logged
