"""Draft logs in the 17Lands public layout (pure: numpy + pandas, no Django).

One row per pick: ``expansion, event_type, draft_id, draft_time, rank, event_match_wins,
event_match_losses, pack_number, pick_number, pick, pick_maindeck_rate, pick_sideboard_in_rate,
pack_card_<name>..., pool_<name>...``. The files are wide (about 570 columns), so they are read in
chunks into dense arrays: ``pack`` and ``pool`` hold per-card counts in the file's column order.
"""
from __future__ import annotations

import csv
import gzip
import io
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from decks.core.catalogue import DataError

META_COLUMNS = ["expansion", "event_type", "draft_id", "draft_time", "rank", "event_match_wins",
                "event_match_losses", "pack_number", "pick_number", "pick", "pick_maindeck_rate",
                "pick_sideboard_in_rate"]
REQUIRED = ["expansion", "draft_id", "pack_number", "pick_number", "pick"]
PACK_PREFIX, POOL_PREFIX = "pack_card_", "pool_"


@dataclass
class DraftLogs:
    """Picks as arrays. ``pick`` indexes ``cards``; ``pack``/``pool`` are counts per card."""

    set_code: str
    cards: list[str]
    draft_id: np.ndarray  # str per row
    draft_time: np.ndarray  # str per row ('' when absent)
    pack_number: np.ndarray  # int8, 0-based
    pick_number: np.ndarray  # int8, 0-based within the pack
    pick: np.ndarray  # int16 index into cards
    pack: np.ndarray  # uint8 [rows, cards]
    pool: np.ndarray  # uint8 [rows, cards]
    event_type: np.ndarray = field(default=None)  # str per row

    def __len__(self) -> int:
        return len(self.pick)

    def select(self, mask: np.ndarray) -> "DraftLogs":
        return DraftLogs(set_code=self.set_code, cards=self.cards, draft_id=self.draft_id[mask],
                         draft_time=self.draft_time[mask], pack_number=self.pack_number[mask],
                         pick_number=self.pick_number[mask], pick=self.pick[mask], pack=self.pack[mask],
                         pool=self.pool[mask], event_type=None if self.event_type is None else self.event_type[mask])

    @property
    def picks_per_pack(self) -> int:
        return int(self.pick_number.max()) + 1 if len(self) else 0

    @property
    def forced(self) -> np.ndarray:
        """Rows where the pack held a single card (the last pick of a pack)."""
        return self.pack.sum(axis=1) <= 1

    def pick_names(self) -> list[str]:
        return [self.cards[i] for i in self.pick]

    def pack_names(self, row: int) -> list[str]:
        return _expand(self.cards, self.pack[row])

    def pool_names(self, row: int) -> list[str]:
        return _expand(self.cards, self.pool[row])


def _expand(cards: list[str], counts: np.ndarray) -> list[str]:
    out = []
    for i in np.flatnonzero(counts):
        out.extend([cards[i]] * int(counts[i]))
    return out


def card_columns(header: list[str]) -> tuple[list[str], list[int], list[int]]:
    """The card names of a header and the positions of their pack and pool columns."""
    pack = {h[len(PACK_PREFIX):]: i for i, h in enumerate(header) if h.startswith(PACK_PREFIX)}
    pool = {h[len(POOL_PREFIX):]: i for i, h in enumerate(header) if h.startswith(POOL_PREFIX)}
    cards = [name for name in pack]  # header order
    missing = [n for n in cards if n not in pool]
    if not cards:
        raise DataError("no pack_card_<name> columns: not a 17Lands draft file")
    if missing:
        raise DataError(f"pool_ columns missing for {len(missing)} cards, e.g. {missing[0]!r}")
    return cards, [pack[n] for n in cards], [pool[n] for n in cards]


def _open(path: Path | str) -> io.TextIOBase:
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: file not found")
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def read_header(path: Path | str) -> list[str]:
    try:
        with _open(path) as fh:
            return next(csv.reader(fh))
    except StopIteration:
        raise DataError(f"{path}: empty file") from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: unreadable ({exc})") from exc


def read_17lands_csv(path: Path | str, chunksize: int = 20000, limit: int | None = None,
                     on_chunk: Callable[[int], None] | None = None) -> DraftLogs:
    """Read a 17Lands-layout draft CSV (plain or .gz) into :class:`DraftLogs`.

    Raises :class:`DataError` for a file that is not in the layout, is truncated or corrupt, or
    holds a pick that is not in its pack; nothing is returned half-read.
    """
    import pandas as pd  # noqa: PLC0415 - heavy (a second to import): only reading a CSV needs it

    header = read_header(path)
    absent = [c for c in REQUIRED if c not in header]
    if absent:
        raise DataError(f"{path}: missing columns {', '.join(absent)}: not a 17Lands draft file")
    cards, pack_cols, pool_cols = card_columns(header)
    index = {n: i for i, n in enumerate(cards)}
    meta = [c for c in ("expansion", "event_type", "draft_id", "draft_time", "pack_number", "pick_number", "pick")
            if c in header]
    parts: dict[str, list] = {k: [] for k in ("meta", "pack", "pool")}
    rows = 0
    dtypes = {header[i]: "float32" for i in pack_cols + pool_cols}
    dtypes.update({c: "string" for c in ("expansion", "event_type", "draft_id", "draft_time", "pick") if c in header})
    try:
        with _open(path) as fh:
            reader = pd.read_csv(fh, chunksize=chunksize, dtype=dtypes, keep_default_na=False,
                                 na_values={header[i]: [""] for i in pack_cols + pool_cols}, nrows=limit)
            for chunk in reader:
                numeric = chunk.iloc[:, pack_cols + pool_cols].to_numpy(dtype="float32", na_value=np.nan)
                if np.isnan(numeric).any():
                    bad = rows + int(np.flatnonzero(np.isnan(numeric).any(axis=1))[0]) + 2
                    raise DataError(f"{path}: line {bad}: empty or non-numeric card counts (truncated file?)")
                if (numeric < 0).any() or (numeric > 255).any():
                    raise DataError(f"{path}: card counts out of range near line {rows + 2}")
                counts = numeric.astype(np.uint8)
                parts["pack"].append(counts[:, :len(cards)])
                parts["pool"].append(counts[:, len(cards):])
                parts["meta"].append(chunk[meta])
                rows += len(chunk)
                if on_chunk:
                    on_chunk(rows)
    except DataError:
        raise
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"{path}: corrupt or truncated draft file ({exc})") from exc
    if not rows:
        raise DataError(f"{path}: no picks")
    frame = pd.concat(parts["meta"], ignore_index=True)
    pack = np.concatenate(parts["pack"])
    pool = np.concatenate(parts["pool"])
    try:
        pack_number = frame["pack_number"].astype("int64").to_numpy()
        pick_number = frame["pick_number"].astype("int64").to_numpy()
    except (ValueError, TypeError) as exc:
        raise DataError(f"{path}: pack_number and pick_number must be integers ({exc})") from exc
    names = frame["pick"].astype(str).to_numpy()
    pick = np.array([index.get(n, -1) for n in names], dtype=np.int16)
    unknown = np.flatnonzero(pick < 0)
    if len(unknown):
        raise DataError(f"{path}: line {int(unknown[0]) + 2}: picked card {names[unknown[0]]!r} has no pack_card_ column")
    not_in_pack = np.flatnonzero(pack[np.arange(rows), pick] == 0)
    if len(not_in_pack):
        r = int(not_in_pack[0])
        raise DataError(f"{path}: line {r + 2}: pick {names[r]!r} is not in the pack shown")
    expansions = frame["expansion"].astype(str).unique()
    return DraftLogs(
        set_code=str(expansions[0]).upper() if len(expansions) else "",
        cards=cards,
        draft_id=frame["draft_id"].astype(str).to_numpy(),
        draft_time=frame["draft_time"].astype(str).to_numpy() if "draft_time" in frame else np.full(rows, "", object),
        pack_number=pack_number.astype(np.int8), pick_number=pick_number.astype(np.int8), pick=pick,
        pack=pack, pool=pool,
        event_type=frame["event_type"].astype(str).to_numpy() if "event_type" in frame else np.full(rows, "", object),
    )


def read_seats(path: Path | str) -> dict[str, tuple[str, int]]:
    """The proxy logs' seats side file: draft_id -> (pod_id, seat)."""
    out = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            out[row["draft_id"]] = (row["pod_id"], int(row["seat"]))
    return out


def seats_file_for(path: Path | str) -> Path | None:
    """``X.csv.gz`` -> ``X.seats.csv`` beside it, when it exists."""
    name = Path(path).name
    for suffix in (".csv.gz", ".csv"):
        if name.endswith(suffix):
            candidate = Path(path).with_name(name[: -len(suffix)] + ".seats.csv")
            return candidate if candidate.exists() else None
    return None


def pod_keys(logs: DraftLogs, seats: dict[str, tuple[str, int]] | None) -> np.ndarray:
    """The pod of every row (the draft_id itself when no seats file links seats into pods)."""
    if not seats:
        return logs.draft_id
    return np.array([seats.get(d, (d, 0))[0] for d in logs.draft_id], dtype=object)


def held_out_mask(keys: np.ndarray, every: int = 10) -> np.ndarray:
    """Split by pod: a stable 1-in-``every`` share of pods (by a hash of the pod key) is held out;
    with two or more pods, at least one is held out and at least one is kept for training."""
    unique, inverse = np.unique(keys, return_inverse=True)
    hashes = np.array([zlib.crc32(str(k).encode()) for k in unique], dtype=np.int64)
    held = hashes % every == 0
    if len(unique) >= 2:
        if not held.any():  # few pods: still hold one out (the lowest hash)
            held[int(np.argmin(hashes))] = True
        elif held.all():  # every pod hashed into the held-out share: keep the highest hash for training
            held[int(np.argmax(hashes))] = False
    return held[inverse]


def header_for(cards: list[str]) -> list[str]:
    return META_COLUMNS + [PACK_PREFIX + n for n in cards] + [POOL_PREFIX + n for n in cards]


def write_17lands_csv(fh, cards: list[str], rows: Iterable[dict]) -> int:
    """Write picks in the 17Lands layout. Each row: the META_COLUMNS keys it has, plus ``pack``
    and ``pool`` as lists of card names (repeats for copies). Returns the rows written."""
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(header_for(cards))
    index = {n: i for i, n in enumerate(cards)}
    written = 0
    for row in rows:
        pack = [0] * len(cards)
        pool = [0] * len(cards)
        for name in row.get("pack", ()):
            pack[index[name]] += 1
        for name in row.get("pool", ()):
            pool[index[name]] += 1
        writer.writerow([row.get(c, "") for c in META_COLUMNS] + pack + pool)
        written += 1
    return written
