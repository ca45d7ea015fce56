"""Fast bulk writes for the importers: COPY on PostgreSQL, executemany elsewhere."""
from __future__ import annotations

from contextlib import nullcontext
from typing import Iterable, Sequence

from django.db import connection


def insert_rows(table: str, columns: Sequence[str], rows: Iterable[Sequence], on_conflict_ignore: bool = False,
                batch_size: int = 10_000, merging=None) -> int:
    """Insert plain tuples into ``table``. Returns the number of rows sent.

    On PostgreSQL rows stream through ``COPY`` (into a temporary table first when conflicts must be
    ignored, then ``INSERT ... ON CONFLICT DO NOTHING``); on SQLite they go through ``executemany``.
    Call it inside ``transaction.atomic()`` so a failure leaves no half-written import. On SQLite the rows
    go ``batch_size`` at a time: an importer's progress bar (over the rows it yields) stands still while one
    batch is written (50,000 deck-card rows: 2.4 s at load 6 on the 2-core machine, and a 19.7 s stand-still
    once at load 10 in bench.first_run); 10,000 keep it moving. ``merging(rows)``: a context manager shown
    while PostgreSQL moves the copied rows into the table past its conflicts (one silent statement: 22 s for the
    corpus's 432k appearances under load), e.g. a ``ticking`` bar.
    """
    cols = ", ".join(columns)
    sent = 0
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            raw = cursor.cursor  # psycopg 3 cursor
            target = table
            if on_conflict_ignore:
                target = f"_bulk_{table}"
                raw.execute(f"CREATE TEMP TABLE {target} ON COMMIT DROP AS SELECT {cols} FROM {table} WITH NO DATA")
            with raw.copy(f"COPY {target} ({cols}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
                    sent += 1
            if on_conflict_ignore:
                with merging(sent) if merging is not None else nullcontext():
                    raw.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {target} ON CONFLICT DO NOTHING")
                raw.execute(f"DROP TABLE {target}")
        return sent
    verb = "INSERT OR IGNORE" if on_conflict_ignore else "INSERT"
    sql = f"{verb} INTO {table} ({cols}) VALUES ({', '.join(['%s'] * len(columns))})"
    batch: list[Sequence] = []
    with connection.cursor() as cursor:
        for row in rows:
            batch.append(row)
            if len(batch) >= batch_size:
                cursor.executemany(sql, batch)
                sent += len(batch)
                batch.clear()
        if batch:
            cursor.executemany(sql, batch)
            sent += len(batch)
    return sent


def insert_models(model, values: Iterable[dict]) -> int:
    """Insert rows of ``model`` given as ``{field attname: value}`` (the other fields take their defaults), each
    value prepared by its field as ``bulk_create`` prepares it, without building model instances (which cost
    more than the insert itself on a corpus-sized import). Returns the number of rows sent."""
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    defaults = {f.attname: f.get_default() for f in fields}
    rows = ([f.get_db_prep_save(row.get(f.attname, defaults[f.attname]), connection) for f in fields] for row in values)
    return insert_rows(model._meta.db_table, [f.column for f in fields], rows)


# What PostgreSQL does per row while a table loads, and can do once after it: keep each index up to date and queue
# a check of every foreign key (Django makes them DEFERRABLE INITIALLY DEFERRED, so the checks of millions of rows
# all ran at the import's COMMIT: 3 minutes there, with nothing to show). PostgreSQL's own advice for a bulk load
# ("Populating a Database": remove indexes and foreign-key constraints, load, recreate them) is what
# ``keys_after_load`` does.
_KEYS_SQL = """
    SELECT conname, pg_get_constraintdef(oid), contype FROM pg_constraint
    WHERE conrelid = %s::regclass AND contype IN ('f', 'u') ORDER BY contype DESC, conname"""
_INDEXES_SQL = """
    SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = %s
    AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass) ORDER BY indexname"""


def table_keys(table: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """PostgreSQL: the unique and foreign-key constraints of ``table`` as (name, definition, 'u' | 'f'), unique ones
    first, and its other indexes (not the primary key's, not a constraint's) as (name, CREATE INDEX statement)."""
    with connection.cursor() as cursor:
        cursor.execute(_KEYS_SQL, [table])
        constraints = [tuple(row) for row in cursor.fetchall()]
        cursor.execute(_INDEXES_SQL, [table, table])
        indexes = [tuple(row) for row in cursor.fetchall()]
    return constraints, indexes


def _check_deferred_now(cursor) -> None:
    """Run the deferred checks queued so far in this transaction (the rows inserted before, e.g. the decks whose
    cards are loaded next), then defer again: PostgreSQL refuses to alter a table with pending trigger events."""
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    cursor.execute("SET CONSTRAINTS ALL DEFERRED")


class keys_after_load:
    """``with keys_after_load([table, ...], step=...):`` load the tables, then their keys are built once.

    On PostgreSQL, entering drops the tables' unique and foreign-key constraints and their other indexes (the
    primary keys stay; ``keep_unique``: tables whose unique constraints stay too), and leaving without an error recreates them from their own definitions: each index in one
    sort, each foreign key checked by one query (``ALTER TABLE ... ADD CONSTRAINT`` validates at once, deferrable
    or not), so a row that breaks a key fails the import there, inside its transaction, and nothing is kept. Use it
    inside ``transaction.atomic()`` (DDL is transactional in PostgreSQL). ``step(name, seconds_expected)`` is a
    context manager that shows each rebuild (a progress bar on the clock); ``rows_per_second`` sizes its
    estimate, with the rows the caller loaded (``rows[table] = n``; else the planner's estimate). Elsewhere (SQLite)
    it does nothing, as it does with ``enabled=False`` (a later import adding a few rows to large tables)."""

    def __init__(self, tables, *, enabled: bool = True, keep_unique=(), step=None,
                 rows_per_second: float = 2_000_000):
        self.tables = list(tables) if enabled else []
        self.keep_unique = set(keep_unique)  # tables whose unique keys stay (an INSERT ... ON CONFLICT needs them)
        self.step = step
        self.rows_per_second = rows_per_second
        self.rows: dict[str, float] = {}
        self.saved: list[tuple[str, list, list]] = []

    def __enter__(self):
        if connection.vendor != "postgresql":
            return self
        qn = connection.ops.quote_name
        with connection.cursor() as cursor:
            _check_deferred_now(cursor)
            for table in self.tables:
                constraints, indexes = table_keys(table)
                if table in self.keep_unique:
                    kept = {name for name, _, kind in constraints if kind == "u"}
                    constraints = [c for c in constraints if c[0] not in kept]
                for name, _, _ in reversed(constraints):  # foreign keys before the unique constraints they may use
                    cursor.execute(f"ALTER TABLE {qn(table)} DROP CONSTRAINT {qn(name)}")
                for name, _ in indexes:
                    cursor.execute(f"DROP INDEX {qn(name)}")
                self.saved.append((table, constraints, indexes))
        return self

    def __exit__(self, kind, *exc):
        if kind is not None or not self.saved:
            return False  # the transaction rolls the drops back with the rows
        qn = connection.ops.quote_name
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL maintenance_work_mem = '256MB'")  # index sorts in memory (the default is 64MB)
            _check_deferred_now(cursor)
            for table, constraints, indexes in self.saved:
                rows = self.rows.get(table)
                if rows is None:  # the planner's estimate (-1 before the table was ever analysed)
                    cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [table])
                    rows = float(cursor.fetchone()[0] or 0)
                expected = max(rows, 1.0) / self.rows_per_second
                work = [(f"{table}: index {name}", ddl) for name, ddl in indexes]
                work += [(f"{table}: {'unique key' if kind_ == 'u' else 'foreign key'} {name}",
                          f"ALTER TABLE {qn(table)} ADD CONSTRAINT {qn(name)} {definition}")
                         for name, definition, kind_ in constraints]
                for label, ddl in work:
                    if self.step is None:
                        cursor.execute(ddl)
                        continue
                    with self.step(label, expected):
                        cursor.execute(ddl)
        return False
