"""Import sets and printings: 17Lands set lists and MTGJSON set files (rarity, booster flag).

Idempotent: sets are keyed by code and printings by (set, card). Cards a set lists that the
catalogue lacks (newer than the oracle snapshot) are added with the characteristics the file has.
"""
from __future__ import annotations

import time
from pathlib import Path

from django.core.management.base import BaseCommand
from django.db import transaction

from decks.core.cards import SUPERTYPES, copy_limit, split_type_line
from decks.core.catalogue import PrintingRecord, read_17lands_cards, read_17lands_set_list, read_mtgjson_set
from decks.core.names import normalize_name
from decks.core.setnames import set_name
from decks.management.commands.import_cards import upsert_cards, upsert_legalities
from decks.management.importing import DataErrorAsCommandError, data_path, require
from plumbing.progress import progress
from decks.models import Card, CardSet, Printing
from decks.services import bump_catalogue_version, card_index

_RANK = {"basic": 0, "special": 0, "common": 1, "uncommon": 2, "rare": 3, "mythic": 4}


def merge_printings(records: list[PrintingRecord]) -> dict[tuple[str, str], PrintingRecord]:
    """One printing per (set, card).

    Among catalogue records (17Lands ``cards.csv``, MTGJSON) a booster printing beats a non-booster
    one (showcase, promo); their rarity and booster flag beat a set list's, which only adds the
    card's row position. A card only a set list names keeps the list's rarity.
    """
    merged: dict[tuple[str, str], PrintingRecord] = {}
    positions: dict[tuple[str, str], int] = {}
    for r in records:
        key = (r.set_code, r.name)
        if r.position is not None:
            positions.setdefault(key, r.position)
        old = merged.get(key)
        if old is None:
            merged[key] = r
            continue
        if old.position is not None and r.position is None:  # a catalogue record replaces a list row
            merged[key] = r
        elif r.position is None and r.is_booster and not old.is_booster:
            merged[key] = r
        keep = merged[key]
        if keep.arena_id is None:
            keep.arena_id = old.arena_id or r.arena_id
    for key, position in positions.items():
        merged[key].position = position
    return merged


def stub_card(r: PrintingRecord) -> dict:
    """A catalogue row for a card known only from a set list."""
    left, subtypes = split_type_line(r.type_line)
    supertypes = [t for t in left if t in SUPERTYPES]
    types = [t for t in left if t not in SUPERTYPES]
    return {
        "name": r.name, "name_key": normalize_name(r.name), "front_name": r.name.split(" // ")[0],
        "mana_cost": "", "mana_value": r.mana_value, "colors": r.color_identity, "color_identity": r.color_identity,
        "type_line": r.type_line, "supertypes": " ".join(supertypes), "types": " ".join(types),
        "subtypes": " ".join(subtypes), "oracle_text": "", "power": "", "toughness": "", "loyalty": "", "defense": "",
        "layout": "normal", "keywords": [], "faces": [], "copy_limit": copy_limit(r.name, supertypes, types, ""),
        "source": "17lands",
    }


class Command(BaseCommand):
    help = "Import sets and printings from 17Lands set lists and MTGJSON set files (default: MTG_DATA_DIR)."

    def add_arguments(self, parser):
        parser.add_argument("--cards-csv", help="17Lands cards.csv (default: statistical-drafting/cards/cards.csv)")
        parser.add_argument("--set-lists", help="folder of <SET>.csv draftable lists (default: statistical-drafting/cards)")
        parser.add_argument("--mtgjson", nargs="*", help="MTGJSON set files (default: M19 and M20 from madrury_mtg-draftbot)")
        parser.add_argument("--skip-17lands", action="store_true")

    def handle(self, *args, **opts):
        started = time.perf_counter()
        records: list[PrintingRecord] = []
        set_info: dict[str, dict] = {}
        new_cards: list[dict] = []
        legalities: dict[str, dict[str, str]] = {}
        with DataErrorAsCommandError(), transaction.atomic():
            if not opts["skip_17lands"]:
                csv_path = require(opts["cards_csv"] or data_path("statistical-drafting", "cards", "cards.csv"), "17Lands cards.csv")
                records += progress(read_17lands_cards(csv_path), desc="17Lands printings", unit="row")
                folder = Path(opts["set_lists"] or data_path("statistical-drafting", "cards"))
                for path in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
                    if path.name == "cards.csv":
                        continue
                    code = path.stem.upper()
                    records += read_17lands_set_list(path, code)
                    if code == "CUBE":
                        set_info[code] = {"code": code, "name": "17Lands Arena Cube", "set_type": "cube"}
            mtgjson = opts["mtgjson"]
            if mtgjson is None:
                folder = data_path("madrury_mtg-draftbot")
                mtgjson = [p for p in (folder / "m19.json.xz", folder / "M20.json.xz") if p.exists()]
            for path in mtgjson:
                info, printings, cards = read_mtgjson_set(require(Path(path), "MTGJSON set file"))
                set_info[info["code"]] = info
                records += printings
                for c in cards:
                    new_cards.append(c["card"])
                    legalities[c["card"]["name"]] = c["legalities"]

            # Cards the catalogue lacks: full records from MTGJSON set files, stubs from 17Lands lists.
            index = card_index()
            missing = [c for c in new_cards if index.resolve(c["name"]) is None]
            if missing:
                upsert_cards(missing, keep_mtgjson=False)
                index = card_index()
            stubs = {}
            for r in records:
                if index.resolve(r.name) is None and r.name not in stubs:
                    stubs[r.name] = stub_card(r)
            if stubs:
                upsert_cards(list(stubs.values()))
                index = card_index()
            upsert_legalities({n: f for n, f in legalities.items() if f})

            merged = merge_printings([
                PrintingRecord(**{**r.__dict__, "name": index.resolve(r.name) or r.name}) for r in records])
            codes = sorted({code for code, _ in merged} | set(set_info))
            for code in codes:
                info = set_info.get(code, {})
                CardSet.objects.update_or_create(code=code, defaults={
                    "name": set_name(code, info.get("name", "")), "release_date": info.get("release_date") or None,
                    "set_type": info.get("set_type", ""), "source": "mtgjson" if code in set_info and code != "CUBE" else "17lands"})
            set_ids = dict(CardSet.objects.values_list("code", "id"))
            card_ids = dict(Card.objects.values_list("name", "id"))
            objs = [Printing(card_id=card_ids[r.name], card_set_id=set_ids[r.set_code], rarity=r.rarity,
                             collector_number=r.collector_number, is_booster=r.is_booster, arena_id=r.arena_id,
                             position=r.position)
                    for r in merged.values() if r.name in card_ids]
            for start in progress(range(0, len(objs), 5000), desc="printings", unit="batch"):
                Printing.objects.bulk_create(objs[start:start + 5000], update_conflicts=True,
                                             unique_fields=["card_set", "card"],
                                             update_fields=["rarity", "collector_number", "is_booster", "arena_id", "position"])
        bump_catalogue_version()
        self.stdout.write(self.style.SUCCESS(
            f"sets: {len(codes)} sets, {len(objs)} printings, {len(stubs)} cards added from set lists "
            f"({time.perf_counter() - started:.1f}s)"))
