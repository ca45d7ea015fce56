"""Deck corpus as numpy arrays (built by the shell, ``decks/completion/datasets.py``; nothing here reads the database).

Each deck is a multiset of card indices: ``main`` [N,60] and ``side`` [N,15], sorted within a row, copies
repeated. Only complete decks (exactly 60 + 15) are stored, as in Manamorphosis. ``ids`` (optional) holds each
row's database id (``decks.Deck``), so a completion can link the decks it drew on; the core never reads it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from decks.completion.models.common import MAIN_SLOTS, SIDE_SLOTS

__all__ = ["DeckArrays", "split_by_date", "save_npz", "load_npz", "card_popularity",
           "deck_row"]


@dataclass
class DeckArrays:
    main: np.ndarray  # int32 [N, 60]
    side: np.ndarray  # int32 [N, 15]
    fmt: np.ndarray  # int16 [N], index into FORMATS
    day: np.ndarray  # int32 [N], days since 1970-01-01
    weight: np.ndarray  # float32 [N], occurrences of the list in the corpus
    ids: np.ndarray | None = None  # int64 [N], the rows' Deck ids (None: not known)

    def __post_init__(self):
        self.main = np.asarray(self.main, dtype=np.int32).reshape(-1, MAIN_SLOTS)
        self.side = np.asarray(self.side, dtype=np.int32).reshape(-1, SIDE_SLOTS)
        self.fmt = np.asarray(self.fmt, dtype=np.int16).reshape(-1)
        self.day = np.asarray(self.day, dtype=np.int32).reshape(-1)
        self.weight = np.asarray(self.weight, dtype=np.float32).reshape(-1)
        if self.ids is not None:
            self.ids = np.asarray(self.ids, dtype=np.int64).reshape(-1)
        n = len(self.main)
        if not (len(self.side) == len(self.fmt) == len(self.day) == len(self.weight) == n):
            raise ValueError("DeckArrays fields have different lengths")
        if self.ids is not None and len(self.ids) != n:
            raise ValueError("DeckArrays ids have another length than the decks")

    def __len__(self) -> int:
        return len(self.main)

    def subset(self, index) -> "DeckArrays":
        return DeckArrays(self.main[index], self.side[index], self.fmt[index], self.day[index], self.weight[index],
                          None if self.ids is None else self.ids[index])

    @classmethod
    def from_decks(cls, decks) -> "DeckArrays":
        """``decks``: iterable of (main indices (60), side indices (15), fmt, day, weight[, id]); rows get sorted.
        Ids are kept when every deck has one."""
        decks = list(decks)
        main = np.array([deck_row(d[0], MAIN_SLOTS) for d in decks], dtype=np.int32).reshape(-1, MAIN_SLOTS)
        side = np.array([deck_row(d[1], SIDE_SLOTS) for d in decks], dtype=np.int32).reshape(-1, SIDE_SLOTS)
        ids = [d[5] for d in decks] if decks and all(len(d) > 5 for d in decks) else None
        return cls(main, side, [d[2] for d in decks], [d[3] for d in decks], [d[4] for d in decks], ids)


def deck_row(cards, slots: int) -> np.ndarray:
    row = np.sort(np.asarray(list(cards), dtype=np.int32))
    if len(row) != slots:
        raise ValueError(f"a deck row needs exactly {slots} cards, got {len(row)}")
    return row


def split_by_date(arrays: DeckArrays, cutoff_day: int) -> tuple[DeckArrays, DeckArrays]:
    """(decks before ``cutoff_day``, decks on or after it)."""
    before = arrays.day < cutoff_day
    return arrays.subset(np.flatnonzero(before)), arrays.subset(np.flatnonzero(~before))


def save_npz(path, arrays: DeckArrays) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        extra = {} if arrays.ids is None else {"ids": arrays.ids}
        np.savez_compressed(fh, main=arrays.main, side=arrays.side, fmt=arrays.fmt, day=arrays.day,
                            weight=arrays.weight, **extra)


def load_npz(path) -> DeckArrays:
    with np.load(path, allow_pickle=False) as z:
        return DeckArrays(z["main"], z["side"], z["fmt"], z["day"], z["weight"], z["ids"] if "ids" in z.files else None)


def card_popularity(arrays: DeckArrays, V: int) -> np.ndarray:
    """Share of decks (unweighted) that play each card in main or sideboard, float64 [V]."""
    n = len(arrays)
    if n == 0:
        return np.zeros(V)
    rows = np.concatenate([arrays.main, arrays.side], axis=1).astype(np.int64)
    # count each card once per deck: sorted-within-part rows may repeat a card across main/side
    rows = np.sort(rows, axis=1)
    first = np.ones_like(rows, dtype=bool)
    first[:, 1:] = rows[:, 1:] != rows[:, :-1]
    counts = np.bincount(rows[first], minlength=V)[:V]
    return counts / n
