"""Held-out deck sources for ``bench/game_calibration.py``: decks outside the sample pool.

- **tournament decks**: the most recent distinct decks of each format of the corpus
  (MTG_DATA_DIR/mtg_decklistcache) whose every main card the engine fully supports
  (``bench.harness.pool_decks.tournament_decks``), a few per format;
- the **sample decks** (the four of MTG_DATA_DIR/game) stay on the training side only, as do ``EXTRA_TRAIN``
  further (older) tournament decks of each format;
- **drafted Limited decks** (``heldout_limited``): the 40-card decks the site's deck builder made from the pools
  of the first ``LIMITED_PODS`` simulated FDN pods (bench/results/draft_games.jsonl.gz, ``bench.draft_games``),
  held out; the decks of the next ``TRAIN_LIMITED_PODS`` pods (other pools, other decks) are on the training side
  (``train_limited``), so the estimate learns what a 40-card game looks like without seeing a held-out deck.

The decks are split once, deterministically (alternating in the corpus's order, so every format lands on both
sides where it has two decks): ``train`` decks (with the sample decks) give the positions the calibration, the
baseline and any retrained value model are fitted on; ``heldout`` decks are never trained on. Writes
var/calibration/decks.json and the decks' card database var/calibration/card-data.json (cached: delete them to
choose again).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from bench.harness.paths import ROOT

DIR = ROOT / "var" / "calibration"
DECKS = DIR / "decks.json"
CARD_DATA = DIR / "card-data.json"
# older decks of each format beyond the split ones, all on the training side (more varied training games)
EXTRA_TRAIN = 6
FORMATS = ("Pauper", "Modern", "Standard", "Pioneer", "Legacy", "Premodern", "Vintage")
DRAFTED = ROOT / "bench" / "results" / "draft_games.jsonl.gz"
LIMITED_PODS, TRAIN_LIMITED_PODS = 2, 6


def limited_decks(path: Path = DRAFTED, pods: int = LIMITED_PODS, skip: int = 0) -> list[dict]:
    """The decks built from the pools of ``pods`` simulated pods after the first ``skip`` (each pod's eight seats;
    cards the engine could not play were already left out when the pod was played)."""
    import gzip

    if not path.exists():
        return []
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    pods_played = sorted((r for r in records if r.get("kind") == "pod"), key=lambda r: (r["set"], r["pod"]))
    for rec in pods_played[skip:skip + pods]:
        for seat, deck in enumerate(rec["decks"]):
            out.append({"name": f"limited_{rec['set']}_pod{rec['pod']}_seat{seat}", "format": "Limited",
                        "main": [[name, int(n)] for name, n in deck]})
    return out


def split(decks: list[dict]) -> dict:
    """``{"train": [...], "heldout": [...]}``: alternating decks of each format, the first of a format held out."""
    out = {"train": [], "heldout": []}
    seen: dict[str, int] = {}
    for deck in decks:
        k = seen.get(deck["format"], 0)
        seen[deck["format"]] = k + 1
        out["heldout" if k % 2 == 0 else "train"].append(deck)
    return out


def choose(per_format: int = 4, extra_train: int = EXTRA_TRAIN) -> dict:
    """Select and split the decks and build their card database (minutes: the corpus is read once). The first
    ``per_format`` decks of each format are split alternately; the next ``extra_train`` of each format (older
    decks of other archetypes) go to the training side only, so the training games see more varied decks while
    the held-out side keeps its own decks, never trained on."""
    from bench.harness.pool_decks import BASICS, _names, corpus_support, sample_pool_entries, tournament_decks
    from bench.harness.games import save_card_data

    records, problems = corpus_support()
    tournament = tournament_decks(records, problems, list(FORMATS), per_format + extra_train)
    sample = sample_pool_entries()
    rank: dict[str, int] = {}
    first, extra = [], []
    for deck in tournament:
        k = rank.get(deck["format"], 0)
        rank[deck["format"]] = k + 1
        (first if k < per_format else extra).append(deck)
    chosen = split(first)
    chosen["train"] = sample + chosen["train"] + extra
    chosen["heldout_limited"] = limited_decks()
    chosen["train_limited"] = limited_decks(pods=TRAIN_LIMITED_PODS, skip=LIMITED_PODS)
    names = {n for side in chosen.values() for d in side for n, _ in d["main"]} | BASICS
    by_name = _names(records)
    save_card_data([records[by_name[n]] for n in names if n in by_name], CARD_DATA)
    DIR.mkdir(parents=True, exist_ok=True)
    tmp = DECKS.with_suffix(".tmp")
    tmp.write_text(json.dumps(chosen, indent=1), encoding="utf-8")
    os.replace(tmp, DECKS)
    return chosen


def load() -> dict:
    """The chosen decks (chosen now when var/calibration/decks.json is missing)."""
    if DECKS.exists() and CARD_DATA.exists():
        chosen = json.loads(DECKS.read_text(encoding="utf-8"))
        if "train_limited" in chosen:  # (a file chosen before the Limited decks: chosen again)
            return chosen
    return choose()


def deck_list(deck: dict) -> list[str]:
    return [card for card, count in deck["main"] for _ in range(count)]


def card_data_path() -> Path:
    load()
    return CARD_DATA
