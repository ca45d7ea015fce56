"""How the draftable sets are offered (drafts.core.sets, pure): newest first by the data's release order, each
bonus sheet after its set and named after it, cubes last, every label keeping its code."""
from __future__ import annotations

from drafts.core.sets import CUBES_GROUP, SETS_GROUP, DraftableSet, arrange, bonus_sheet_of


def s(code, name="", release=None, booster="play", part_of=""):
    return DraftableSet(code=code, name=name, cards=250, booster=booster, release=release, part_of=part_of)


def labels(groups):
    return [(group, [x.label for x in sets]) for group, sets in groups]


def test_newest_first_by_release_with_each_bonus_sheet_after_its_set_and_cubes_last():
    sets = [s("CUBE", "17Lands Arena Cube", booster="cube"), s("BLB", "Bloomburrow", 91537),
            s("M19", "Core Set 2019", 67682, booster="classic"), s("M20", "Core Set 2020", 69786, booster="classic"),
            s("MSH", "Marvel Super Heroes", 104892), s("MAR", "", 105205, part_of="MSH"), s("DOM", "Dominaria", 67106),
            s("GRN", "Guilds of Ravnica", 68462), s("ZZZ", "", None)]
    assert labels(arrange(sets)) == [
        (SETS_GROUP, ["Marvel Super Heroes (MSH)", "Marvel Super Heroes bonus sheet (MAR)", "Bloomburrow (BLB)",
                      "Core Set 2020 (M20)", "Guilds of Ravnica (GRN)", "Core Set 2019 (M19)", "Dominaria (DOM)",
                      "ZZZ"]),  # nobody named it, nothing dates it: last, its code once
        (CUBES_GROUP, ["17Lands Arena Cube (CUBE)"]),
    ]


def test_a_named_bonus_sheet_keeps_its_name_and_one_whose_set_is_not_offered_stands_alone():
    groups = arrange([s("BRO", "The Brothers' War", 82485), s("BRR", "The Brothers' War Retro Artifacts", 82800, part_of="BRO"),
                      s("PZA", "", 100663, part_of="TMT"), s("SPM", "Marvel's Spider-Man", 97814)])
    assert labels(groups) == [(SETS_GROUP, ["PZA", "Marvel's Spider-Man (SPM)", "The Brothers' War (BRO)",
                                            "The Brothers' War Retro Artifacts (BRR)"])]


def test_a_bonus_sheet_is_a_set_without_a_list_whose_cards_are_all_on_one_other_sets_list():
    lists = {"MSH": {1, 2, 3, 4, 5, 6}, "TMT": {7, 8, 9}, "OLD": {1, 2, 3, 4, 5, 6, 10}, "CUBE": {1, 2, 3, 4, 5, 6, 11}}
    booster = {"MAR": {5, 6}, "XYZ": {6, 7}, "MSH": {1, 2}, "NEW": set()}
    release = {"MSH": 104892, "MAR": 105205, "OLD": 20000, "TMT": 100458}
    # MAR's cards are on MSH's list and on an older set's: the set released nearest to it; a cube never hosts;
    # XYZ spans two lists, MSH has its own, NEW has no cards
    assert bonus_sheet_of(booster, lists, release, frozenset({"CUBE"})) == {"MAR": "MSH"}
