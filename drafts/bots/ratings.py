"""Base card ratings on Draftsim's 0-5 scale, from public data (pure: numpy, no Django).

Every ``ratings_from_*`` function returns ``dict[card name, float]``; they feed
:class:`drafts.bots.draftsim.DraftsimBot` (and any other bot that wants a prior card order).

* :func:`ratings_from_17lands` - 17Lands "games in hand" win rate (``gih_wr``, else ``gp_wr``) from
  an arenamcp catalog, mapped linearly through two anchors at robust percentiles of the set's rated
  cards and clipped to [0, 5]: the 5th percentile maps to 2.0 (Draftsim's replacement level, so
  only the weakest 5% lower colour commitment) and the 95th to 4.5; unrated cards get the rating of
  the 10th percentile. The anchors were chosen to maximise DraftsimBot's top-1 agreement on the
  *training* pods of the BLB, DSK and FDN proxy logs (held-out pods untouched; numbers in
  ``NOTES_bots_heuristic.md``). The agreement is flat (within 0.002) for a 5th-percentile value
  of 1.75-2.5 and a 95th-percentile value of 4.0-5.0; mapping the 5th-95th range onto 0-5 instead
  costs about 0.06 top-1, because most cards then fall below the 2.0 baseline.
* :func:`ratings_from_forge` - Forge's draft pick order (``#rank|Name|Rarity|SET``): the best rank
  maps to 5 and the worst to 0, linearly in rank.
* :func:`ratings_from_draftsim_m19` - the Draftsim bot's own M19 ratings (already 0-5).

:func:`spearman_p1p1` compares a bot's pack-1-pick-1 order with human average pick positions
(:func:`read_khakhalin_avg_pick`, Draftsim's human drafts) by Spearman's rank correlation.
"""
from __future__ import annotations

import csv
import json
import lzma
import re
from dataclasses import replace
from pathlib import Path

import numpy as np

from drafts.core.cards import DraftCard, SetList, order_colors

# The mapping of win rates onto 0-5, tuned on the proxy logs' training pods (held-out pods untouched).
GIH_LOW_PERCENTILE, GIH_LOW_VALUE = 5.0, 2.0
GIH_HIGH_PERCENTILE, GIH_HIGH_VALUE = 95.0, 4.5
UNRATED_PERCENTILE = 10.0
SCALE_MAX = 5.0


def name_key(name: str) -> str:
    """A normalizing key for matching card names across sources: lowercase, alphanumerics only.

    ``"Nicol Bolas, the Ravager"``, ``"nicol_bolas_the_ravager"`` and ``"Nicol_Bolas,_the_Ravager"``
    share the key ``"nicolbolastheravager"``. Double-faced names key on their front face.
    """
    front = name.split("//")[0] if "//" in name else name
    return re.sub(r"[^0-9a-z]", "", front.lower())


def _read_json(path: Path | str) -> dict:
    path = Path(path)
    if path.suffix == ".xz":
        with lzma.open(path, "rt", encoding="utf-8") as fh:
            return json.load(fh)
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def catalog_win_rates(catalog_json_path: Path | str) -> dict[str, float | None]:
    """``name -> gih_wr`` (falling back to ``gp_wr``; None when the card has neither)."""
    cards = _read_json(catalog_json_path).get("cards", {})
    out: dict[str, float | None] = {}
    for name, info in cards.items():
        value = info.get("gih_wr")
        if value is None:
            value = info.get("gp_wr")
        out[name] = None if value is None else float(value)
    return out


def linear_percentile_map(values: dict[str, float | None], low_pct: float, high_pct: float,
                          low_value: float = 0.0, high_value: float = SCALE_MAX,
                          unrated_pct: float = UNRATED_PERCENTILE, scale: float = SCALE_MAX) -> dict[str, float]:
    """Map numbers linearly so the ``low_pct`` percentile -> ``low_value`` and the ``high_pct``
    percentile -> ``high_value``, clipped to [0, scale].

    Entries whose value is None get the mapped value of the ``unrated_pct`` percentile.
    """
    rated = np.array([v for v in values.values() if v is not None], dtype=float)
    if not len(rated):
        return {name: 0.0 for name in values}
    lo, hi = np.percentile(rated, [low_pct, high_pct])
    span = hi - lo if hi > lo else 1.0

    def mapped(v: float) -> float:
        return float(np.clip(low_value + (v - lo) / span * (high_value - low_value), 0.0, scale))

    default = mapped(float(np.percentile(rated, unrated_pct)))
    return {name: (default if v is None else mapped(v)) for name, v in values.items()}


def ratings_from_17lands(catalog_json_path: Path | str, low_pct: float = GIH_LOW_PERCENTILE,
                         high_pct: float = GIH_HIGH_PERCENTILE, low_value: float = GIH_LOW_VALUE,
                         high_value: float = GIH_HIGH_VALUE,
                         unrated_pct: float = UNRATED_PERCENTILE) -> dict[str, float]:
    """0-5 ratings from a 17Lands catalog's GIH win rate (``gp_wr`` when GIH is missing).

    Linear through (``low_pct`` percentile of the set's rated cards -> ``low_value``) and
    (``high_pct`` percentile -> ``high_value``), clipped to [0, 5]; unrated cards get the rating of
    the ``unrated_pct`` percentile. Defaults: 5th -> 2.0, 95th -> 4.5, unrated = 10th percentile.
    """
    return linear_percentile_map(catalog_win_rates(catalog_json_path), low_pct, high_pct, low_value, high_value,
                                 unrated_pct)


def ratings_from_forge(rankings_txt: Path | str, set_code: str) -> dict[str, float]:
    """0-5 ratings from Forge's draft rankings (``#rank|Name|Rarity|SET`` lines) for one set.

    The set's best rank maps to 5.0 and its worst to 0.0, linearly in rank. The file mixes CR and
    CRLF line ends; ``//`` lines are comments.
    """
    code = set_code.upper()
    ranks: dict[str, int] = {}
    text = Path(rankings_txt).read_text(encoding="utf-8", errors="replace")
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("#"):
            continue
        parts = line[1:].split("|")
        if len(parts) < 4 or parts[3].strip().upper() != code:
            continue
        try:
            rank = int(parts[0])
        except ValueError:
            continue
        name = parts[1].strip()
        if name and name not in ranks:
            ranks[name] = rank
    if not ranks:
        return {}
    best, worst = min(ranks.values()), max(ranks.values())
    span = max(worst - best, 1)
    return {name: SCALE_MAX * (worst - r) / span for name, r in ranks.items()}


def ratings_from_draftsim_m19(tsv: Path | str) -> dict[str, float]:
    """The Draftsim bot's M19 ratings (``m19_rating.tsv``): underscores become spaces.

    Draftsim writes ``Nicol_Bolas,_the_Ravager``; the returned key is ``Nicol Bolas, the Ravager``.
    """
    out: dict[str, float] = {}
    with open(tsv, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            name = (row.get("Name") or "").strip()
            try:
                rating = float(row.get("Rating") or "")
            except ValueError:
                continue
            if name:
                out[name.replace("_", " ")] = rating
    return out


def read_khakhalin_avg_pick(path: Path | str) -> dict[str, float]:
    """Average pick position per card from khakhalin's ``basic_data_<SET>.csv`` (lower = earlier).

    The file's names are lowercase with underscores; the keys returned are :func:`name_key` keys
    (lowercase, alphanumerics only), so match real card names with ``name_key(name)``.
    """
    out: dict[str, float] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            try:
                avg = float(row["avg"])
            except (KeyError, TypeError, ValueError):
                continue
            out[name_key(row.get("name", ""))] = avg
    out.pop("", None)
    return out


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks with ties given the average of the ranks they span."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=float)
    sorted_vals = values[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_vals[j + 1] == sorted_vals[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def spearman(x, y) -> float:
    """Spearman's rho (Pearson correlation of average ranks); nan when undefined."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) != len(y):
        raise ValueError("spearman: x and y differ in length")
    if len(x) < 2:
        return float("nan")
    rx, ry = average_ranks(x), average_ranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denom = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    return float((rx * ry).sum() / denom) if denom > 0 else float("nan")


def spearman_p1p1(bot_scores: dict[str, float], human_avg_pick: dict[str, float]) -> dict:
    """Spearman correlation between a bot's pack-1-pick-1 order and humans' average pick position.

    ``bot_scores``: a score per card name on an empty pool (higher = picked earlier).
    ``human_avg_pick``: average pick position (lower = earlier), keyed by card name or by
    :func:`name_key`. Cards are matched by :func:`name_key`; ``rho`` is positive when the bot
    likes what humans pick early (the bot score is compared with minus the average pick).
    Returns ``{"rho": float, "n": matched cards}``.
    """
    human = {name_key(k): float(v) for k, v in human_avg_pick.items()}
    xs, ys = [], []
    for name, score in bot_scores.items():
        key = name_key(name)
        if key in human:
            xs.append(float(score))
            ys.append(-human[key])
    return {"rho": spearman(xs, ys) if len(xs) >= 2 else float("nan"), "n": len(xs)}


def _types_of(type_line: str) -> str:
    front = (type_line or "").split("//")[0]
    return re.split(r"\s+[—-]\s+", front.strip())[0].strip()


def set_list_with_catalog(set_list: SetList, catalog_path: Path | str) -> SetList:
    """A copy of ``set_list`` with mana cost, colours, types and mana value from a 17Lands catalog.

    Cards the catalog lacks are kept as they are. Colours come from the catalog's ``colors`` (the
    card's colours, not its colour identity); a card the catalog lists with no colours and no mana
    cost (lands) keeps the set list's colour identity, so a dual land still counts for its colours.
    """
    catalog = _read_json(catalog_path).get("cards", {})
    cards: list[DraftCard] = []
    for card in set_list.cards:
        info = catalog.get(card.name)
        if info is None:
            cards.append(card)
            continue
        mana_cost = info.get("mana_cost") or ""
        colors = order_colors("".join(info.get("colors") or []))
        if not colors and not mana_cost:
            colors = card.colors
        try:
            mana_value = float(info.get("cmc")) if info.get("cmc") is not None else card.mana_value
        except (TypeError, ValueError):
            mana_value = card.mana_value
        types = _types_of(info.get("type_line") or "") or card.types
        cards.append(replace(card, mana_cost=mana_cost, colors=colors, mana_value=mana_value, types=types))
    return SetList(code=set_list.code, cards=tuple(cards), booster=set_list.booster, name=set_list.name,
                   basics=set_list.basics)


__all__ = ["GIH_HIGH_PERCENTILE", "GIH_HIGH_VALUE", "GIH_LOW_PERCENTILE", "GIH_LOW_VALUE", "UNRATED_PERCENTILE",
           "average_ranks", "catalog_win_rates",
           "linear_percentile_map", "name_key", "ratings_from_17lands", "ratings_from_draftsim_m19",
           "ratings_from_forge", "read_khakhalin_avg_pick", "set_list_with_catalog", "spearman", "spearman_p1p1"]
