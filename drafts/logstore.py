"""17Lands draft files in and out of the database (the shell around ``drafts.core.logs``).

Import reads the whole file first (the core raises a clear ``DataError`` on a corrupt, truncated or
inconsistent file), then writes pods, seats and picks in one transaction: nothing half-stored.
Re-importing a file skips the drafts already stored (by their 17Lands ``draft_id``).
"""
from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timezone as dt_timezone
from pathlib import Path
from typing import Callable, Iterable, TextIO

import numpy as np
from django.db import transaction
from django.utils import timezone

from decks.bulk import insert_rows
from decks.core.catalogue import DataError
from decks.models import CardSet
from drafts.core.logs import DraftLogs, read_17lands_csv, read_seats, seats_file_for, write_17lands_csv
from drafts.models import Draft, DraftPick, DraftSeat
from drafts.services import log_columns

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def _parse_time(text: str):
    try:
        return datetime.strptime(text, TIME_FORMAT).replace(tzinfo=dt_timezone.utc)
    except (TypeError, ValueError):
        return None


def import_logs(path: Path | str, seats_path: Path | str | None = None, limit: int | None = None,
                on_progress: Callable[[str, int], None] | None = None) -> dict:
    """Store a 17Lands-layout file. Returns counts: pods, seats and picks added, seats skipped."""
    logs = read_17lands_csv(path, limit=limit, on_chunk=(lambda n: on_progress("read", n)) if on_progress else None)
    code = logs.set_code
    if not CardSet.objects.filter(code=code).exists():
        raise DataError(f"{path}: unknown set {code!r}; import its set list first (manage.py import_sets)")
    if seats_path is None:
        seats_path = seats_file_for(path)
    seats = read_seats(seats_path) if seats_path else {}
    rows_by_draft: dict[str, list[int]] = defaultdict(list)
    for row, draft_id in enumerate(logs.draft_id):
        rows_by_draft[str(draft_id)].append(row)
    for draft_id, rows in rows_by_draft.items():
        keys = {(int(logs.pack_number[r]), int(logs.pick_number[r])) for r in rows}
        if len(keys) != len(rows):
            raise DataError(f"{path}: draft {draft_id} logs the same pack and pick number twice")
    known = set(DraftSeat.objects.filter(log_id__in=list(rows_by_draft)).values_list("log_id", flat=True))
    pods: dict[str, list[tuple[int, str]]] = defaultdict(list)  # pod key -> [(seat, draft_id)]
    for draft_id in rows_by_draft:
        if draft_id in known:
            continue
        pod, seat = seats.get(draft_id, (draft_id, 0))
        pods[pod].append((seat, draft_id))
    source = Path(path).name
    added = {"pods": 0, "seats": 0, "picks": 0, "skipped_seats": len(known), "set": code}
    with transaction.atomic():
        existing = dict(Draft.objects.filter(external_id__in=list(pods)).values_list("external_id", "id"))
        new = [Draft(set_code=code, kind="imported", status="complete", seats=8, packs=3,
                     picks_per_pack=max(logs.picks_per_pack, 1), external_id=key, source=source,
                     event_type=str(logs.event_type[rows_by_draft[members[0][1]][0]] or "PremierDraft"),
                     started=_parse_time(str(logs.draft_time[rows_by_draft[members[0][1]][0]])))
               for key, members in pods.items() if key not in existing]
        Draft.objects.bulk_create(new, batch_size=2000)
        added["pods"] = len(new)
        pod_ids = {**existing, **{d.external_id: d.id for d in new}}
        seat_rows = [DraftSeat(draft_id=pod_ids[key], seat=seat, drafter="logged", log_id=draft_id)
                     for key, members in pods.items() for seat, draft_id in members]
        DraftSeat.objects.bulk_create(seat_rows, batch_size=2000)
        seat_ids = dict(DraftSeat.objects.filter(log_id__in=[s.log_id for s in seat_rows]).values_list("log_id", "id"))
        added["seats"] = len(seat_rows)
        picked_at = {}
        columns = ["seat_id", "pack_number", "pick_number", "pack", "pool", "pick", "picked_at"]

        def pick_rows():
            for draft_id, seat_id in seat_ids.items():
                for r in rows_by_draft[draft_id]:
                    when = picked_at.get(draft_id)
                    if when is None:
                        when = picked_at[draft_id] = _parse_time(str(logs.draft_time[r])) or timezone.now()
                    yield (seat_id, int(logs.pack_number[r]), int(logs.pick_number[r]),
                           json.dumps(logs.pack_names(r)), json.dumps(logs.pool_names(r)),
                           logs.cards[logs.pick[r]], when)
                    added["picks"] += 1
                    if on_progress and added["picks"] % 20000 == 0:
                        on_progress("store", added["picks"])

        insert_rows(DraftPick._meta.db_table, columns, pick_rows())
    return added


def export_rows(seats: Iterable[DraftSeat]) -> tuple[str, list[str], Iterable[dict]]:
    """(set code, card columns, rows) for the given seats, all of one set."""
    seats = list(seats)
    codes = {s.draft.set_code for s in seats}
    if len(codes) != 1:
        raise DataError("export one set at a time" if codes else "nothing to export")
    code = codes.pop()
    cards = log_columns(code)
    known = set(cards)
    picks = list(DraftPick.objects.filter(seat__in=seats).order_by("seat__draft__created", "seat__draft_id",
                                                                    "seat__seat", "pack_number", "pick_number")
                 .select_related("seat", "seat__draft"))
    for p in picks:  # cards the catalogue's list lacks (an older import) still get their columns
        for name in [p.pick, *p.pack, *p.pool]:
            if name not in known:
                known.add(name)
                cards.append(name)

    def rows():
        for p in picks:
            draft = p.seat.draft
            started = draft.started or draft.created
            yield {"expansion": code, "event_type": draft.event_type, "draft_id": p.seat.log_id,
                   "draft_time": started.astimezone(dt_timezone.utc).strftime(TIME_FORMAT),
                   "pack_number": p.pack_number, "pick_number": p.pick_number, "pick": p.pick,
                   "pack": p.pack, "pool": p.pool}

    return code, cards, rows()


def export_logs(seats: Iterable[DraftSeat], fh: TextIO) -> int:
    code, cards, rows = export_rows(seats)
    return write_17lands_csv(fh, cards, rows)


def seat_logs(seats: Iterable[DraftSeat]) -> DraftLogs:
    """Stored picks as arrays (for evaluation and training on drafts stored here)."""
    code, cards, rows = export_rows(seats)
    rows = list(rows)
    index = {n: i for i, n in enumerate(cards)}
    pack = np.zeros((len(rows), len(cards)), np.uint8)
    pool = np.zeros((len(rows), len(cards)), np.uint8)
    for i, r in enumerate(rows):
        for n in r["pack"]:
            pack[i, index[n]] += 1
        for n in r["pool"]:
            pool[i, index[n]] += 1
    return DraftLogs(set_code=code, cards=cards, draft_id=np.array([r["draft_id"] for r in rows], object),
                     draft_time=np.array([r["draft_time"] for r in rows], object),
                     pack_number=np.array([r["pack_number"] for r in rows], np.int8),
                     pick_number=np.array([r["pick_number"] for r in rows], np.int8),
                     pick=np.array([index[r["pick"]] for r in rows], np.int16), pack=pack, pool=pool,
                     event_type=np.array([r["event_type"] for r in rows], object))
