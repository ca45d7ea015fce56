"""Base ratings from 17Lands / Forge / Draftsim data, Spearman p1p1 against human average picks."""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from drafts.bots.ratings import (average_ranks, linear_percentile_map, name_key, ratings_from_17lands,
                                 ratings_from_draftsim_m19, ratings_from_forge, read_khakhalin_avg_pick,
                                 set_list_with_catalog, spearman, spearman_p1p1)
from drafts.core.cards import DraftCard, SetList

DATA = Path(os.environ.get("MTG_DATA_DIR", "/work/shared/data"))


def write_catalog(path: Path, cards: dict) -> Path:
    path.write_text(json.dumps({"set": "TST", "cards": cards}), encoding="utf-8")
    return path


def test_linear_percentile_map_anchors_clips_and_defaults():
    values = {f"c{i}": float(i) for i in range(101)}  # percentiles == values
    values["unrated"] = None
    out = linear_percentile_map(values, 10, 90, low_value=1.0, high_value=4.0, unrated_pct=20)
    assert out["c10"] == pytest.approx(1.0)
    assert out["c90"] == pytest.approx(4.0)
    assert out["c50"] == pytest.approx(2.5)
    assert out["c0"] == pytest.approx(1.0 - 10 * 3 / 80)  # linear beyond the anchors...
    assert out["c100"] == pytest.approx(4.0 + 10 * 3 / 80)
    steep = linear_percentile_map(values, 40, 60, low_value=1.0, high_value=4.0)
    assert steep["c0"] == 0.0 and steep["c100"] == 5.0  # ...then clipped to [0, 5]
    assert out["unrated"] == pytest.approx(out["c20"])
    plain = linear_percentile_map(values, 0, 100)
    assert plain["c0"] == 0.0 and plain["c100"] == 5.0 and plain["c50"] == pytest.approx(2.5)
    assert all(0.0 <= v <= 5.0 for v in out.values())


def test_linear_percentile_map_below_anchor_is_linear():
    values = {f"c{i}": float(i) for i in range(101)}
    out = linear_percentile_map(values, 10, 90, low_value=1.0, high_value=4.0)
    assert out["c2"] == pytest.approx(1.0 - 8 * 3 / 80)


def test_ratings_from_17lands_gih_then_gp_then_default(tmp_path):
    cards = {f"C{i}": {"gih_wr": 0.45 + 0.001 * i, "gp_wr": 0.5} for i in range(100)}
    cards["GpOnly"] = {"gih_wr": None, "gp_wr": 0.60}
    cards["Unrated"] = {"gih_wr": None, "gp_wr": None}
    path = write_catalog(tmp_path / "TST.catalog.json", cards)
    r = ratings_from_17lands(path)
    assert set(r) == set(cards)
    assert all(0.0 <= v <= 5.0 for v in r.values())
    rated = np.array([0.45 + 0.001 * i for i in range(100)] + [0.60])
    lo, hi, tenth = np.percentile(rated, [5, 95, 10])
    assert r["C50"] == pytest.approx(2.0 + (0.50 - lo) / (hi - lo) * 2.5)
    assert r["GpOnly"] == 5.0  # far above the 95th percentile: clipped
    assert r["Unrated"] == pytest.approx(2.0 + (tenth - lo) / (hi - lo) * 2.5)
    assert r["C99"] > r["C50"] > r["C0"]
    custom = ratings_from_17lands(path, low_pct=0, high_pct=100, low_value=0, high_value=5)
    assert custom["GpOnly"] == 5.0 and custom["C0"] == 0.0


def test_ratings_from_forge_maps_rank_to_0_5(tmp_path):
    text = ("//Rank|Name|Rarity|Set\r\n#1|Best Card|M|TST\r#2|Middle, the Card|C|TST\n"
            "#3|Worst|C|TST\r\n#1|Other Set|M|OTH\n")
    path = tmp_path / "rankings.txt"
    path.write_bytes(text.encode())
    r = ratings_from_forge(path, "tst")
    assert r == {"Best Card": 5.0, "Middle, the Card": 2.5, "Worst": 0.0}
    assert ratings_from_forge(path, "NONE") == {}


def test_ratings_from_draftsim_m19(tmp_path):
    path = tmp_path / "m19.tsv"
    path.write_text("Name\tCasting Cost 1\tCasting Cost 2\tCard Type\tRarity\tRating\n"
                    "Nicol_Bolas,_the_Ravager\t1UBR\tnone\tCreature\tM\t4.6\nShock\tR\tnone\tSpell\tC\t3.0\n"
                    "Broken\tR\tnone\tSpell\tC\t\n", encoding="utf-8")
    assert ratings_from_draftsim_m19(path) == {"Nicol Bolas, the Ravager": 4.6, "Shock": 3.0}


def test_name_key_and_khakhalin_reader(tmp_path):
    assert name_key("Nicol Bolas, the Ravager") == name_key("nicol_bolas_the_ravager") == "nicolbolastheravager"
    assert name_key("Ajani's Pridemate") == name_key("ajanis_pridemate")
    assert name_key("Bottomless Pool // Locker Room") == "bottomlesspool"
    path = tmp_path / "basic_data_TST.csv"
    path.write_text("name,avg,var,count,color,rarity\n"
                    "nicol_bolas_the_ravager,1.5,1,10,Multi,mythic\nshock,5.0,1,10,R,common\n", encoding="utf-8")
    assert read_khakhalin_avg_pick(path) == {"nicolbolastheravager": 1.5, "shock": 5.0}


def test_average_ranks_and_spearman_with_ties():
    np.testing.assert_allclose(average_ranks([10, 20, 20, 30]), [1, 2.5, 2.5, 4])
    np.testing.assert_allclose(average_ranks([3, 1, 3, 3]), [3, 1, 3, 3])
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(4.5 / np.sqrt(4.5 * 5))
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3]))


def test_spearman_p1p1_matches_names_and_orients_sign():
    human = {"nicol_bolas_the_ravager": 1.2, "shock": 4.0, "mighty_leap": 9.0, "not_in_bot": 3.0}
    bot = {"Nicol Bolas, the Ravager": 4.6, "Shock": 3.0, "Mighty Leap": 1.0, "Unknown Card": 2.0}
    assert spearman_p1p1(bot, human) == {"rho": pytest.approx(1.0), "n": 3}
    flipped = {k: -v for k, v in bot.items()}
    assert spearman_p1p1(flipped, human)["rho"] == pytest.approx(-1.0)
    assert spearman_p1p1({}, human)["n"] == 0


def test_set_list_with_catalog_fills_card_facts(tmp_path):
    base = SetList(code="TST", cards=(DraftCard("Bolt", "common", "R"), DraftCard("Dual", "common", "WU", types="Land"),
                                      DraftCard("Relic", "rare", "G"), DraftCard("Absent", "common", "B")))
    path = write_catalog(tmp_path / "c.json", {
        "Bolt": {"mana_cost": "{R}", "colors": ["R"], "cmc": 1.0, "type_line": "Instant"},
        "Dual": {"mana_cost": "", "colors": [], "cmc": 0.0, "type_line": "Land"},
        "Relic": {"mana_cost": "{3}", "colors": [], "cmc": 3.0, "type_line": "Legendary Artifact — Equipment"},
    })
    out = set_list_with_catalog(base, path)
    assert out.card("Bolt") == DraftCard("Bolt", "common", "R", "{R}", 1.0, "Instant")
    assert out.card("Dual").colors == "WU" and out.card("Dual").is_land  # no colours, no cost: identity kept
    relic = out.card("Relic")
    assert (relic.colors, relic.mana_cost, relic.mana_value, relic.types) == ("", "{3}", 3.0, "Legendary Artifact")
    assert out.card("Absent") == base.card("Absent")
    assert out.names == base.names and out.code == "TST"


@pytest.mark.realdata
def test_real_ratings_and_p1p1_correlations():
    catalogs = DATA / "arenamcp_17lands_ratings" / "catalogs"
    khakhalin = DATA / "khakhalin_draftsim_derived"
    if not (catalogs / "BLB.catalog.json").exists() or not khakhalin.exists():
        pytest.skip(f"real data not found at {DATA} (set MTG_DATA_DIR)")
    blb = ratings_from_17lands(catalogs / "BLB.catalog.json")
    assert len(blb) == 271 and all(0.0 <= v <= 5.0 for v in blb.values())
    assert np.median(list(blb.values())) > 2.0  # most cards above Draftsim's replacement level
    human = read_khakhalin_avg_pick(khakhalin / "basic_data_M19.csv")
    forge = ratings_from_forge(DATA / "forge_reeforge" / "draft" / "rankings.txt", "M19")
    assert len(forge) == 260 and max(forge.values()) == 5.0 and min(forge.values()) == 0.0
    result = spearman_p1p1(forge, human)
    assert result["n"] >= 250 and result["rho"] > 0.85  # measured 0.907
    draftsim = ratings_from_draftsim_m19(khakhalin / "m19_rating.tsv")
    result = spearman_p1p1(draftsim, human)
    assert result["n"] >= 245 and result["rho"] > 0.9  # measured 0.937
