#!/usr/bin/env python
"""Benchmark: import the full real data (cards, sets, deck corpus) into a fresh database, twice.

    python -m bench.import [--stack services|embedded] [--limit N] [--baseline-rows N]

* ``services`` (default): drops and re-creates the PostgreSQL database ``mtg_bench``
  (POSTGRES_HOST/PORT/USER/PASSWORD as for the site), migrates it, imports.
* ``embedded``: a fresh SQLite file ``var/bench.sqlite3``.

Run 1 times ``import_cards``, ``import_sets`` and ``import_decks`` (the whole corpus unless
``--limit``) with rows/s per table. Run 2 repeats all three on the filled database and checks
that no row count changes (the importers are idempotent). Finally, in a transaction that is
rolled back, a sample of the imported DeckCard rows is written once with Django's
``bulk_create`` and once with ``decks.bulk.insert_rows`` (COPY on PostgreSQL) into the emptied
table, for the speed-up of the bulk path. Writes ``bench/results/import.json`` and prints a table.
"""
from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import sys
import time
from pathlib import Path

from bench.harness.machine import machine
from bench.harness.paths import RESULTS as RESULTS_DIR
from bench.harness.paths import ROOT, command
from bench.harness.report import write_result

RESULTS = RESULTS_DIR / "import.json"
BENCH_DB = "mtg_bench"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", choices=["services", "embedded"], default="services")
    parser.add_argument("--limit", type=int, help="import only the first N corpus decks (default: all)")
    parser.add_argument("--baseline-rows", type=int, default=200_000,
                        help="DeckCard rows for the bulk_create vs insert_rows comparison")
    parser.add_argument("--output", default=str(RESULTS), help="where to write the JSON result")
    return parser.parse_args(argv)


def fresh_database(stack: str) -> str:
    """Point the settings at a new, empty database (before django.setup()); returns its name."""
    os.environ["MTG_STACK"] = stack
    if stack == "services":
        import psycopg

        conninfo = dict(host=os.environ.get("POSTGRES_HOST", "127.0.0.1"), port=os.environ.get("POSTGRES_PORT", "5432"),
                        user=os.environ.get("POSTGRES_USER", "postgres"), dbname="postgres")
        if os.environ.get("POSTGRES_PASSWORD"):
            conninfo["password"] = os.environ["POSTGRES_PASSWORD"]
        with psycopg.connect(**conninfo, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DB}")
            conn.execute(f"CREATE DATABASE {BENCH_DB}")
        os.environ["POSTGRES_DB"] = BENCH_DB
        return BENCH_DB
    path = ROOT / "var" / "bench.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        p.unlink(missing_ok=True)
    os.environ["SQLITE_PATH"] = str(path)
    return str(path.relative_to(ROOT))


def setup_django(stack: str) -> str:
    name = fresh_database(stack)
    os.environ["DJANGO_SETTINGS_MODULE"] = "mtgsite.settings"
    # Keep the catalogue-version key (services cache) away from a developer's running site.
    os.environ.setdefault("REDIS_CACHE_URL", "redis://127.0.0.1:6379/10")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    return name


def db_version() -> str:
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            return f"PostgreSQL {cursor.fetchone()[0]}"
    import sqlite3

    return f"SQLite {sqlite3.sqlite_version}"


def counts() -> dict:
    from django.db.models import Sum

    from decks.models import Card, CardSet, Deck, DeckAppearance, DeckCard, Legality, Printing

    corpus = Deck.objects.filter(source="corpus")
    return {
        "cards": Card.objects.count(),
        "sets": CardSet.objects.count(),
        "printings": Printing.objects.count(),
        "legalities_mtgjson": Legality.objects.filter(source="mtgjson").count(),
        "legalities_observed": Legality.objects.filter(source="observed").count(),
        "decks": corpus.count(),
        "deck_cards": DeckCard.objects.count(),
        "appearances": DeckAppearance.objects.count(),
        "occurrences_total": corpus.aggregate(n=Sum("occurrences"))["n"] or 0,
        "deck_count_total": Card.objects.aggregate(n=Sum("deck_count"))["n"] or 0,
    }


def rate(rows: int, seconds: float) -> float:
    return round(rows / seconds, 1) if seconds > 0 else 0.0


def run_imports(limit: int | None, tmp: Path, label: str) -> dict:
    """import_cards, import_sets, import_decks once; wall time and rows per stage."""
    from django.core.management import call_command

    stages: dict[str, dict] = {}
    before = counts()

    def timed(name, *args, **options):
        out = io.StringIO()
        print(f"[{label}] {name} ...", flush=True)
        started = time.perf_counter()
        call_command(name, *args, stdout=out, **options)
        seconds = time.perf_counter() - started
        print(f"[{label}] {name}: {seconds:.1f}s  {out.getvalue().strip().splitlines()[-1][:200]}", flush=True)
        return seconds

    seconds = timed("import_cards")
    after = counts()
    stages["import_cards"] = {"seconds": round(seconds, 2), "cards": after["cards"],
                              "cards_per_s": rate(after["cards"], seconds)}

    seconds = timed("import_sets")
    before_sets, after = after, counts()
    stages["import_sets"] = {
        "seconds": round(seconds, 2), "sets": after["sets"], "printings": after["printings"],
        "cards_added": after["cards"] - before_sets["cards"],
        "legalities_mtgjson": after["legalities_mtgjson"] - before_sets["legalities_mtgjson"],
        "printings_per_s": rate(after["printings"], seconds)}

    stats_path = tmp / f"decks-{label}.json"
    options = {"stats_json": str(stats_path)}
    if limit:
        options["limit"] = limit
    seconds = timed("import_decks", **options)
    stats = json.loads(stats_path.read_text())
    before_decks, after = after, counts()
    written = {key: after[key] - before_decks[key] for key in ("decks", "deck_cards", "appearances", "legalities_observed")}
    stage = {
        "seconds": round(seconds, 2), "corpus_lines": stats["lines"], "distinct_lists": stats["distinct"],
        "bad_lines": stats["bad_lines"], "unresolved_names": stats["unresolved_name_count"],
        "new_lists": stats["new_lists"], "updated_lists": stats["updated_lists"],
        "rows_written": written, "rows_written_total": sum(written.values()),
        "rows_per_s": rate(sum(written.values()), seconds),
        "corpus_decks_per_s": rate(stats["lines"], seconds),
        "substages_seconds": {k[:-len("_seconds")]: v for k, v in stats.items() if k.endswith("_seconds")},
    }
    sub = stage["substages_seconds"]
    # What the sub-stages do not cover: mostly the COMMIT (deferred foreign-key checks of every new row).
    stage["commit_and_overhead_seconds"] = round(seconds - sum(sub.values()), 2)
    stage["table_rows_per_s"] = {
        "decks": rate(written["decks"], sub.get("decks", 0)),
        "deck_cards": rate(written["deck_cards"], sub.get("deck_cards", 0)),
        "appearances": rate(written["appearances"], sub.get("appearances", 0)),
        "legalities_observed": rate(written["legalities_observed"], sub.get("legality", 0)),
    }
    stages["import_decks"] = stage
    total = sum(s["seconds"] for s in stages.values())
    return {"stages": stages, "total_seconds": round(total, 2), "counts_before": before, "counts_after": counts()}


def baseline(sample_rows: int) -> dict:
    """bulk_create vs insert_rows on the same DeckCard rows, each in a transaction that is rolled back.

    Each method writes the sample into the emptied DeckCard table (TRUNCATE / DELETE inside the
    transaction, so the real rows come back on rollback). On PostgreSQL this is measured twice:
    with foreign keys checked per statement (what a committed import pays in total, since the
    deferred checks run at COMMIT) and with them deferred and never run (the write path alone).
    """
    from django.db import connection, transaction

    from decks.bulk import insert_rows
    from decks.models import DeckCard

    columns = ["deck_id", "card_id", "board", "count"]
    rows = list(DeckCard.objects.order_by("id").values_list(*columns)[:sample_rows])
    table = DeckCard._meta.db_table
    batch_size = 5000
    postgres = connection.vendor == "postgresql"

    def write_bulk_create():
        DeckCard.objects.bulk_create([DeckCard(deck_id=d, card_id=c, board=b, count=n) for d, c, b, n in rows],
                                     batch_size=batch_size)

    def write_insert_rows():
        assert insert_rows(table, columns, iter(rows)) == len(rows)

    def timed(write, fk_immediate: bool) -> float:
        with transaction.atomic():
            with connection.cursor() as cursor:
                if fk_immediate:
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                cursor.execute(f"TRUNCATE {table}" if postgres else f"DELETE FROM {table}")
            started = time.perf_counter()
            write()
            seconds = time.perf_counter() - started
            assert DeckCard.objects.count() == len(rows)
            transaction.set_rollback(True)
        return seconds

    result = {"rows": len(rows), "table": table, "bulk_create_batch_size": batch_size,
              "insert_rows_path": "COPY" if postgres else "executemany",
              "method": "each method writes the same rows into the emptied table in a transaction that is rolled back"}
    modes = {"fk_checked": True, "write_only": False} if postgres else {"write_only": False}
    for mode, immediate in modes.items():
        figures = {}
        for name, write in (("bulk_create", write_bulk_create), ("insert_rows", write_insert_rows)):
            seconds = timed(write, immediate)
            figures[f"{name}_seconds"] = round(seconds, 3)
            figures[f"{name}_rows_per_s"] = rate(len(rows), seconds)
        figures["speedup"] = round(figures["bulk_create_seconds"] / figures["insert_rows_seconds"], 2)
        result[mode] = figures
    # Headline: what a committed import pays (foreign keys checked) where the database checks them.
    result.update(result["fk_checked" if postgres else "write_only"])
    return result


def print_table(doc: dict) -> None:
    first, second = doc["first_run"], doc["second_run"]
    print()
    print(f"import benchmark: stack={doc['stack']} ({doc['machine']['db']}), {doc['machine']['cpu_count']} CPUs")
    print(f"{'stage':<14}{'run 1 (s)':>11}{'run 2 (s)':>11}  rows (run 1)")
    for name in ("import_cards", "import_sets", "import_decks"):
        s1, s2 = first["stages"][name], second["stages"][name]
        if name == "import_cards":
            rows = f"{s1['cards']:,} cards, {s1['cards_per_s']:,.0f}/s"
        elif name == "import_sets":
            rows = f"{s1['printings']:,} printings in {s1['sets']} sets, {s1['printings_per_s']:,.0f}/s"
        else:
            w = s1["rows_written"]
            rows = (f"{s1['corpus_lines']:,} decks -> {w['decks']:,} lists, {w['deck_cards']:,} deck cards, "
                    f"{w['appearances']:,} appearances, {w['legalities_observed']:,} legalities; "
                    f"{s1['rows_per_s']:,.0f} rows/s")
        print(f"{name:<14}{s1['seconds']:>11.1f}{s2['seconds']:>11.1f}  {rows}")
    print(f"{'total':<14}{first['total_seconds']:>11.1f}{second['total_seconds']:>11.1f}")
    print(f"second run idempotent (row counts unchanged): {doc['idempotent']}")
    b = doc["baseline"]
    for mode in ("fk_checked", "write_only"):
        if mode in b:
            m = b[mode]
            print(f"DeckCard x{b['rows']:,} ({mode.replace('_', ' ')}): bulk_create {m['bulk_create_rows_per_s']:,.0f} "
                  f"rows/s, insert_rows ({b['insert_rows_path']}) {m['insert_rows_rows_per_s']:,.0f} rows/s "
                  f"-> {m['speedup']}x")
    print(f"full import under 10 minutes: {doc['under_10_minutes']}")


def main(argv=None) -> int:
    args = parse_args(argv)
    database = setup_django(args.stack)
    import tempfile

    from django.conf import settings

    started = dt.datetime.now(dt.timezone.utc)
    with tempfile.TemporaryDirectory() as tmp:
        first = run_imports(args.limit, Path(tmp), "run 1")
        second = run_imports(args.limit, Path(tmp), "run 2")
    idempotent = second["counts_before"] == second["counts_after"] == first["counts_after"]
    print("[baseline] bulk_create vs insert_rows ...", flush=True)
    base = baseline(args.baseline_rows)
    doc = {
        "benchmark": "import",
        "command": command("import", argv),
        "date": started.isoformat(timespec="seconds"),
        "stack": args.stack,
        "database": database,
        "data_dir": str(settings.MTG_DATA_DIR),
        "limit": args.limit,
        "machine": machine(db=db_version()),
        "first_run": first,
        "second_run": second,
        "idempotent": idempotent,
        "counts": first["counts_after"],
        "baseline": base,
        "under_10_minutes": first["total_seconds"] < 600,
    }
    output = Path(args.output)
    write_result(doc, output)
    print_table(doc)
    print(f"\nwrote {output}")
    if not idempotent:
        print("ERROR: the second run changed row counts:", json.dumps(second["counts_before"]),
              json.dumps(second["counts_after"]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
