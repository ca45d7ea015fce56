"""Import decks: the deck-corpus JSONL (each distinct list once, with how often it appeared)
and plain-text decklists (MTGO / Arena / plain).

Idempotent: corpus lists are keyed by a hash of format + sorted main + side, appearances by a
hash of the event row; a re-run updates counts and never duplicates. Where MTGJSON legalities
are missing, a card is marked legal in a format ("observed") when some deck of that format plays it.
"""
from __future__ import annotations

import datetime as dt
import json
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.db.models import Count, Max, Min
from django.utils import timezone

from decks.bulk import insert_models, insert_rows, keys_after_load
from decks.core.catalogue import CorpusDeck, open_text, read_deck_corpus
from decks.core.decklist import parse_decklist
from decks.core.rules import normalize_format
from decks.management.importing import DataErrorAsCommandError, data_path, require
from plumbing.progress import progress, reading_bar, ticking
from decks.models import Card, Deck, DeckAppearance, DeckCard, Legality
from decks.services import card_index, save_parsed_deck


def _date(value: str | None):
    if not value:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


# Rates for the bars of the statements that report nothing while they run (their ETAs are estimates): measured
# by bench/first_run.py on the shared 2-core machine, with room for its load.
DECK_CARDS_COUNTED_PER_SECOND = 1_000_000
DECK_CARDS_COMMITTED_PER_SECOND = 1_500_000
APPEARANCES_MERGED_PER_SECOND = 40_000


def update_deck_counts() -> None:
    """Card.deck_count = distinct corpus lists playing the card (one grouped pass, not a query per card)."""
    card, deck_card, deck = Card._meta.db_table, DeckCard._meta.db_table, Deck._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {card} SET deck_count = 0 WHERE deck_count <> 0")
        cursor.execute(
            f"UPDATE {card} SET deck_count = counts.n FROM ("
            f"  SELECT dc.card_id AS card_id, COUNT(DISTINCT dc.deck_id) AS n FROM {deck_card} dc"
            f"  JOIN {deck} d ON d.id = dc.deck_id WHERE d.source = 'corpus' GROUP BY dc.card_id"
            f") AS counts WHERE {card}.id = counts.card_id")


def import_corpus(path: Path, limit: int | None, log) -> dict:
    t0 = time.perf_counter()
    decks, lines, bad = read_deck_corpus(path, limit, wrap=reading_bar(path, "reading the corpus"))
    log(f"read {lines} decks ({len(decks)} distinct lists, {len(bad)} bad lines) in {time.perf_counter() - t0:.1f}s")
    for message in bad[:10]:
        log(f"  skipped {message}")

    index = card_index()
    card_ids = dict(Card.objects.values_list("name", "id"))
    resolved: dict[str, int | None] = {}

    def card_id(name: str):
        if name not in resolved:
            canonical = index.resolve(name)
            resolved[name] = card_ids.get(canonical) if canonical else None
        return resolved[name]

    stats = {"lines": lines, "distinct": len(decks), "bad_lines": len(bad), "read_seconds": round(time.perf_counter() - t0, 2)}
    stage = time.perf_counter()

    def lap(name):
        nonlocal stage
        now_ = time.perf_counter()
        stats[f"{name}_seconds"] = round(now_ - stage, 2)
        stage = now_

    with ExitStack() as stages, transaction.atomic():
        existing = dict(Deck.objects.filter(source="corpus").values_list("list_hash", "id"))
        fresh: list[CorpusDeck] = [d for h, d in decks.items() if h not in existing]
        now = timezone.now()

        # 1. New lists (plain rows, COPY on PostgreSQL: building 275k Deck instances cost more than inserting them).
        def new_lists():
            for d in progress(fresh, desc="new lists", unit="deck"):
                unresolved = [[n, c, board] for board, entries in (("main", d.main), ("side", d.side))
                              for n, c in entries if card_id(n) is None]
                yield dict(format=d.format, list_hash=d.hash, source="corpus", public=True, occurrences=d.occurrences,
                           first_seen=_date(d.first_seen), last_seen=_date(d.last_seen),
                           main_count=sum(c for _, c in d.main), side_count=sum(c for _, c in d.side),
                           unresolved=unresolved, created=now)
        insert_models(Deck, new_lists())
        ids = dict(Deck.objects.filter(source="corpus").values_list("list_hash", "id"))
        lap("decks")
        # 2. Their cards (COPY on PostgreSQL).
        def deck_card_rows():
            for d in progress(fresh, desc="deck cards", unit="deck"):
                deck_id = ids[d.hash]
                for board, entries in (("main", d.main), ("side", d.side)):
                    totals: dict[int, int] = defaultdict(int)
                    for n, c in entries:
                        cid = card_id(n)
                        if cid is not None:
                            totals[cid] += c
                    for cid, c in totals.items():
                        yield (deck_id, cid, board, c)

        # 3. Appearances (each event row once).
        def appearance_rows():
            for d in progress(decks.values(), desc="appearances", unit="deck"):
                deck_id = ids[d.hash]
                for a in d.appearances:
                    yield (deck_id, a["key"], _date(a["date"]), a["source"], a["event"], a["event_uri"], a["result"],
                           a["dup_of_earlier"])

        # A first import (no corpus yet) loads millions of rows into empty tables: on PostgreSQL their keys are
        # built once after the load instead of row by row (decks.bulk.keys_after_load; nothing changes on SQLite).
        cards_table, appearances_table = DeckCard._meta.db_table, DeckAppearance._meta.db_table
        with keys_after_load([cards_table, appearances_table], enabled=not existing, keep_unique=[appearances_table],
                             step=lambda label, expected: ticking(f"keys: {label}", expected=expected)) as keys:
            stats["deck_cards"] = insert_rows(cards_table, ["deck_id", "card_id", "board", "count"], deck_card_rows())
            lap("deck_cards")
            keys.rows[cards_table] = stats["deck_cards"]
            keys.rows[appearances_table] = insert_rows(
                appearances_table, ["deck_id", "key", "date", "source", "event", "event_uri", "result", "dup_of_earlier"],
                appearance_rows(), on_conflict_ignore=True,
                merging=lambda n: ticking("appearances: keeping each event once", expected=n / APPEARANCES_MERGED_PER_SECOND))
            lap("appearances")
            if keys.saved:
                log("building the keys of the loaded tables")
        lap("keys")
        # 4. Counts of lists seen before, from all their stored appearances (a later corpus file may hold only
        #    newer events, or a --limit prefix of an earlier one: its own counts would undercount).
        changed = []
        if existing:
            totals = {deck_id: (n, first, last) for deck_id, n, first, last in
                      DeckAppearance.objects.filter(deck__source="corpus").values("deck_id")
                      .annotate(n=Count("id"), first=Min("date"), last=Max("date"))
                      .values_list("deck_id", "n", "first", "last")}
            for obj in Deck.objects.filter(source="corpus").only("id", "list_hash", "occurrences", "first_seen",
                                                                 "last_seen").iterator(chunk_size=10_000):
                if obj.list_hash not in decks or obj.list_hash not in existing or obj.id not in totals:
                    continue
                counts = totals[obj.id]
                if (obj.occurrences, obj.first_seen, obj.last_seen) != counts:
                    obj.occurrences, obj.first_seen, obj.last_seen = counts
                    changed.append(obj)
            Deck.objects.bulk_update(changed, ["occurrences", "first_seen", "last_seen"], batch_size=5000)

        lap("recount")
        # 5. Observed legality: played in some deck of the format, where MTGJSON says nothing.
        seen: dict[str, set[int]] = defaultdict(set)
        for d in progress(decks.values(), desc="observed legality", unit="deck"):
            fmt = normalize_format(d.format) or d.format
            for n, _ in d.main + d.side:
                cid = card_id(n)
                if cid is not None:
                    seen[fmt].add(cid)
        legal_rows = ((cid, fmt, "legal", "observed") for fmt, cids in seen.items() for cid in cids)
        insert_rows(Legality._meta.db_table, ["card_id", "format", "status", "source"], legal_rows, on_conflict_ignore=True)

        lap("legality")
        # 6. How many distinct lists play each card.
        log("counting the lists that play each card")
        with ticking("card counts", expected=stats["deck_cards"] / DECK_CARDS_COUNTED_PER_SECOND):
            update_deck_counts()
        lap("card_counts")
        log("committing")
        # the commit itself (the atomic block's end) has a bar on the clock; the stack closes it after
        # (the deferred checks of the rows loaded while their keys were live: none of a first import's deck cards)
        live = stats["deck_cards"] if existing else 0
        stages.enter_context(ticking("committing", expected=1 + live / DECK_CARDS_COMMITTED_PER_SECOND))

    stats.update(new_lists=len(fresh), updated_lists=len(changed),
                 unresolved_names=sorted(n for n, cid in resolved.items() if cid is None))
    return stats


class Command(BaseCommand):
    help = "Import the deck corpus (default: MTG_DATA_DIR) and/or plain-text decklists."

    def add_arguments(self, parser):
        parser.add_argument("--corpus", help="deck corpus JSONL(.xz); default mtg_decklistcache/decks_60main_15side.jsonl.xz")
        parser.add_argument("--no-corpus", action="store_true", help="skip the corpus (also skipped when --text is given without --corpus)")
        parser.add_argument("--limit", type=int, help="read only the first N corpus decks")
        parser.add_argument("--text", nargs="*", default=[], help="plain-text decklist files (MTGO, Arena or plain)")
        parser.add_argument("--format", default="", help="format of the --text decks")
        parser.add_argument("--stats-json", help="write the import figures to this JSON file")

    def handle(self, *args, **opts):
        started = time.perf_counter()
        stats: dict = {}
        fmt = ""
        if opts["format"]:
            fmt = normalize_format(opts["format"])
            if fmt is None:
                raise CommandError(f"Unknown format {opts['format']!r}.")
        if not Card.objects.exists():
            raise CommandError("The card catalogue is empty: run import_cards first.")
        with DataErrorAsCommandError():
            # Parse every text list before writing anything: one bad line saves nothing at all.
            parsed = []
            for text_path in opts["text"]:
                with open_text(require(Path(text_path), "decklist")) as fh:
                    result = parse_decklist(fh.read(), card_index())
                if not result.ok:
                    lines = "\n".join(f"  line {e.line_no}: {e.message}"
                                      + (f" (did you mean {', '.join(e.suggestions)}?)" if e.suggestions else "")
                                      for e in result.errors)
                    raise CommandError(f"{text_path}: nothing saved, fix these lines:\n{lines}")
                parsed.append((result.deck, Path(text_path).stem))
            # --text alone imports just those lists; the default corpus only when no --text is given.
            if not opts["no_corpus"] and (opts["corpus"] or not opts["text"]):
                path = require(opts["corpus"] or data_path("mtg_decklistcache", "decks_60main_15side.jsonl.xz"), "deck corpus")
                stats = import_corpus(path, opts["limit"], lambda m: self.stdout.write(m))
                unresolved = stats.pop("unresolved_names")
                stats["unresolved_name_count"] = len(unresolved)
                self.stdout.write(f"{len(unresolved)} card names not in the catalogue (kept on their decks as unresolved)")
            with transaction.atomic():
                saved = [save_parsed_deck(deck, fmt, name, source="text", public=True) for deck, name in parsed]
            if saved:
                self.stdout.write(f"saved {len(saved)} text decklists: " + ", ".join(f"#{d.pk}" for d in saved))
        stats["seconds"] = round(time.perf_counter() - started, 2)
        if opts["stats_json"]:
            Path(opts["stats_json"]).write_text(json.dumps(stats, indent=2))
        self.stdout.write(self.style.SUCCESS(f"decks: {json.dumps(stats)}"))
