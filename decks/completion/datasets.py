"""Shell: turn catalogue and corpus rows into the arrays the model cores train and evaluate on."""
from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import Max

from decks.core.cards import BASIC_LAND_NAMES
from decks.core.rules import FORMATS
from decks.models import Card, Deck, DeckCard, Legality
from decks.completion.models.deck_arrays import DeckArrays, load_npz, save_npz

EPOCH = dt.date(1970, 1, 1)
DEFAULT_SPLIT = "2026-05-01"  # decks first seen on or after this date are held out


@dataclass
class CardTables:
    """Per-card facts aligned with an embeddings vocabulary (``names``)."""

    names: list[str]
    legal: np.ndarray       # bool [F, V]: legal or restricted in format f
    restricted: np.ndarray  # bool [F, V]
    copy_limit: np.ndarray  # int16 [V]: 0 = any number


def card_features(names: list[str]) -> np.ndarray:
    """float32 [V, len(CARD_FEATURES)]: the catalogue facts the deck-level ranker reads (mana value, types, basic,
    colours) of each vocabulary card; zeros for a name the catalogue lacks."""
    from decks.completion.models.deckrank import card_feature_table  # noqa: PLC0415 torch: kept off Django start-up

    index = {n: i for i, n in enumerate(names)}
    info: list = [None] * len(names)
    for name, mv, colors, types, supertypes in Card.objects.values_list("name", "mana_value", "colors", "types",
                                                                          "supertypes"):
        i = index.get(name)
        if i is not None:
            info[i] = (mv, colors, types, supertypes)
    return card_feature_table(info)


def land_mask(names: list[str]) -> np.ndarray:
    """bool [V]: the vocabulary's land cards (type line holds Land; the basic land names whatever the catalogue)."""
    index = {n: i for i, n in enumerate(names)}
    out = np.zeros(len(names), dtype=bool)
    for name in Card.objects.filter(types__contains="Land").values_list("name", flat=True):
        i = index.get(name)
        if i is not None:
            out[i] = True
    for name in BASIC_LAND_NAMES:
        if name in index:
            out[index[name]] = True
    return out


def names_sha1(names: list[str]) -> str:
    return hashlib.sha1("\n".join(names).encode("utf-8")).hexdigest()


def card_tables(names: list[str]) -> CardTables:
    index = {n: i for i, n in enumerate(names)}
    V, F = len(names), len(FORMATS)
    legal = np.zeros((F, V), dtype=bool)
    restricted = np.zeros((F, V), dtype=bool)
    copy_limit = np.full(V, 4, dtype=np.int16)
    ids: dict[int, int] = {}
    for cid, name, limit in Card.objects.values_list("id", "name", "copy_limit"):
        i = index.get(name)
        if i is not None:
            ids[cid] = i
            copy_limit[i] = limit
    fmt_index = {f: k for k, f in enumerate(FORMATS)}
    for cid, fmt, status in Legality.objects.filter(format__in=FORMATS, status__in=("legal", "restricted")).values_list(
            "card_id", "format", "status"):
        i = ids.get(cid)
        if i is not None:
            legal[fmt_index[fmt], i] = True
            restricted[fmt_index[fmt], i] = status == "restricted"
    for name in BASIC_LAND_NAMES:  # basic lands are legal in every format
        if name in index:
            legal[:, index[name]] = True
    return CardTables(names, legal, restricted, copy_limit)


def _fetch(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        while True:
            rows = cursor.fetchmany(200_000)
            if not rows:
                break
            yield rows


def deck_arrays(names: list[str], cache_dir: Path | None = None, progress=None):
    """Every corpus list whose 60 + 15 cards are all in ``names``, as DeckArrays with their Deck ids, in id
    order (cached as .npz). ``progress(rows, total)`` is told as the corpus's card rows are read."""
    corpus = Deck.objects.filter(source="corpus")
    # "ids": the rows carry their Deck ids (files of the older layout, without them, are not reused)
    key = hashlib.sha1(f"ids|{names_sha1(names)}|{corpus.count()}|{corpus.aggregate(m=Max('id'))['m']}".encode()).hexdigest()[:16]
    cache_dir = Path(cache_dir or settings.MTG_DATASET_DIR)
    path = cache_dir / f"decks-{key}.npz"
    if path.exists():
        return load_npz(path)

    index = {n: i for i, n in enumerate(names)}
    card_to_idx = np.full((Card.objects.aggregate(m=Max("id"))["m"] or 0) + 1, -1, dtype=np.int64)
    for cid, name in Card.objects.values_list("id", "name"):
        if name in index:
            card_to_idx[cid] = index[name]

    meta = list(corpus.filter(main_count=60, side_count=15).values_list("id", "format", "first_seen", "occurrences", "unresolved"))
    fmt_index = {f: k for k, f in enumerate(FORMATS)}
    keep = {d: (fmt_index.get(f, len(FORMATS)), (fs - EPOCH).days if fs else 0, occ)
            for d, f, fs, occ, unresolved in meta if not unresolved}

    table = DeckCard._meta.db_table
    deck_t = Deck._meta.db_table
    total = DeckCard.objects.filter(deck__source="corpus").count() if progress else 0
    chunks = []
    for rows in _fetch(f"SELECT dc.deck_id, dc.card_id, CASE WHEN dc.board = 'main' THEN 0 ELSE 1 END, dc.count "
                       f"FROM {table} dc JOIN {deck_t} d ON d.id = dc.deck_id WHERE d.source = 'corpus'"):
        chunks.append(np.array(rows, dtype=np.int64))
        if progress:
            progress(sum(map(len, chunks)), total)
    rows = np.concatenate(chunks) if chunks else np.zeros((0, 4), dtype=np.int64)
    deck_ids = np.fromiter(keep.keys(), dtype=np.int64)
    rows = rows[np.isin(rows[:, 0], deck_ids)]
    idx = card_to_idx[rows[:, 1]]
    bad_decks = np.unique(rows[idx < 0, 0])
    ok = ~np.isin(rows[:, 0], bad_decks)
    rows, idx = rows[ok], idx[ok]

    # Expand copies, order by (deck, board, card index) and cut into 60 + 15 slots per deck.
    slots_deck = np.repeat(rows[:, 0], rows[:, 3])
    slots_board = np.repeat(rows[:, 2], rows[:, 3])
    slots_card = np.repeat(idx, rows[:, 3])
    order = np.lexsort((slots_card, slots_board, slots_deck))
    slots_deck, slots_board, slots_card = slots_deck[order], slots_board[order], slots_card[order]
    decks, counts = np.unique(slots_deck, return_counts=True)
    main_counts = np.bincount(np.searchsorted(decks, slots_deck[slots_board == 0]), minlength=len(decks))
    good = (counts == 75) & (main_counts == 60)
    sel = np.isin(slots_deck, decks[good])
    per_deck = slots_card[sel].reshape(-1, 75)
    decks = decks[good]
    info = np.array([keep[int(d)] for d in decks], dtype=np.int64).reshape(-1, 3)
    arrays = DeckArrays(
        main=per_deck[:, :60].astype(np.int32), side=per_deck[:, 60:].astype(np.int32),
        fmt=info[:, 0].astype(np.int16), day=info[:, 1].astype(np.int32), weight=info[:, 2].astype(np.float32),
        ids=decks.astype(np.int64))
    cache_dir.mkdir(parents=True, exist_ok=True)
    save_npz(path, arrays)
    return arrays


def split_day(date: str = DEFAULT_SPLIT) -> int:
    return (dt.date.fromisoformat(date) - EPOCH).days


LATEST = "latest"  # split_date=latest: every corpus deck trains (the shipped refit; figures come from a dated split)


def resolve_split(date: str, arrays) -> str:
    """A training run's split date: ``latest`` is the day after the newest corpus deck (every deck the site has
    trains the model: the refit the site ships); any other value is returned as given."""
    if str(date).strip().lower() != LATEST:
        return date
    if len(arrays) == 0:
        raise ValueError("no corpus decks: import the deck corpus first (manage.py import_decks)")
    return (EPOCH + dt.timedelta(days=int(np.max(arrays.day)) + 1)).isoformat()
