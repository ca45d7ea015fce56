"""Catalogue cards -> the rules engine's card database (pure: no Django, no engine import).

phase.rs builds its ``CardFace`` from MTGJSON *AtomicCard* records. Its own generator downloads
MTGJSON, which this site cannot reach, so we rebuild the AtomicCard shape from our catalogue
rows (``decks.Card`` fields: name, mana_cost, types, subtypes, ... faces) and hand each face to
``phase.build_oracle_face``. The built faces are then inspected for the parts the engine could
not parse (``{"type": "Unimplemented"}`` effects, ``{"Unknown": text}`` trigger modes, ...):
a card with any such part is *not fully supported* and the site says so.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable

COLOR_WORDS = {"W": "White", "U": "Blue", "B": "Black", "R": "Red", "G": "Green"}
# Layouts whose faces are built separately and keyed by face name (as phase-gen does).
MULTI_LAYOUTS = {"split", "flip", "transform", "meld", "adventure", "modal_dfc", "prepare", "aftermath"}
# Layouts that are not cards one can put in a 60-card deck.
NON_GAME_LAYOUTS = {"planar", "vanguard", "scheme", "token", "double_faced_token", "emblem", "art_series", "augment", "host"}
_SUPERTYPES = {"Basic", "Legendary", "Snow", "World", "Ongoing", "Elite", "Host"}


def _split_type_line(type_line: str) -> tuple[list[str], list[str], list[str]]:
    left, _, right = (type_line or "").partition("—")
    words = left.split()
    supertypes = [w for w in words if w in _SUPERTYPES]
    types = [w for w in words if w not in _SUPERTYPES]
    return supertypes, types, right.split()


def _mana_value(cost: str) -> float:
    total = 0
    for sym in re.findall(r"\{([^}]*)\}", cost or ""):
        if sym.isdigit():
            total += int(sym)
        elif sym in {"X", "Y", "Z"}:
            continue
        elif sym.startswith("H"):
            total += 0.5
        else:
            total += 1
    return float(total)


def _colors(cost: str) -> list[str]:
    symbols = "".join(re.findall(r"\{([^}]*)\}", cost or ""))
    return [c for c in "WUBRG" if c in symbols]


def atomic_face(name: str, *, mana_cost: str = "", type_line: str = "", supertypes: Iterable[str] = (),
                types: Iterable[str] = (), subtypes: Iterable[str] = (), text: str = "", power: str = "",
                toughness: str = "", loyalty: str = "", defense: str = "", keywords: Iterable[str] = (),
                layout: str = "normal", colors: str | None = None, color_identity: str = "",
                face_name: str | None = None, side: str | None = None) -> dict:
    """One MTGJSON AtomicCard face in the shape ``phase.build_oracle_face`` expects."""
    supertypes, types, subtypes = list(supertypes), list(types), list(subtypes)
    if not types and type_line:
        supertypes, types, subtypes = _split_type_line(type_line)
    if not type_line:
        left = " ".join(supertypes + types)
        type_line = f"{left} — {' '.join(subtypes)}" if subtypes else left
    face = {
        "name": name,
        "manaCost": mana_cost or None,
        "manaValue": _mana_value(mana_cost),
        "colors": list(colors) if colors is not None else _colors(mana_cost),
        "colorIdentity": list(color_identity or ""),
        "type": type_line,
        "types": types,
        "subtypes": subtypes,
        "supertypes": supertypes,
        "text": text or "",
        "keywords": list(keywords),
        "layout": layout or "normal",
        "identifiers": {},
        "legalities": {},
        "printings": [],
    }
    for key, value in (("power", power), ("toughness", toughness), ("loyalty", loyalty), ("defense", defense)):
        if value not in (None, ""):
            face[key] = str(value)
    if face_name:
        face["faceName"] = face_name
    if side:
        face["side"] = side
    return face


def atomic_faces(card: dict) -> list[dict]:
    """A catalogue record (``decks.Card`` field names) -> its AtomicCard faces, front first."""
    layout = card.get("layout") or "normal"
    front = atomic_face(
        card["name"], mana_cost=card.get("mana_cost", ""), type_line=card.get("type_line", ""),
        supertypes=(card.get("supertypes") or "").split(), types=(card.get("types") or "").split(),
        subtypes=(card.get("subtypes") or "").split(), text=card.get("oracle_text", ""),
        power=card.get("power", ""), toughness=card.get("toughness", ""), loyalty=card.get("loyalty", ""),
        defense=card.get("defense", ""), keywords=card.get("keywords") or [], layout=layout,
        colors=card.get("colors"), color_identity=card.get("color_identity", ""),
    )
    faces = [front]
    others = card.get("faces") or []
    if layout in MULTI_LAYOUTS and others:
        front_name = card.get("front_name") or card["name"].split(" // ")[0]
        front["faceName"] = front_name
        front["side"] = "a"
        for index, other in enumerate(others, start=1):
            faces.append(atomic_face(
                card["name"], mana_cost=other.get("mana_cost", ""), type_line=other.get("type_line", ""),
                text=other.get("oracle_text", ""), power=other.get("power", ""),
                toughness=other.get("toughness", ""), loyalty=other.get("loyalty", ""), layout=layout,
                color_identity=card.get("color_identity", ""), face_name=other.get("name") or None,
                side="abcdef"[index],
            ))
    return faces


def unsupported_parts(face) -> list[str]:
    """The parts of a built ``CardFace`` the engine could not turn into rules, as short texts."""
    found: list[str] = []

    def walk(node, parent_text):
        if isinstance(node, dict):
            text = node.get("description") or node.get("text") or parent_text
            if node.get("type") == "Unimplemented":
                found.append(str(node.get("description") or node.get("name") or node.get("text") or text or "an ability"))
            if "Unknown" in node and len(node) == 1:
                found.append(str(node["Unknown"]))
            for key, value in node.items():
                if key in ("oracle_text", "non_ability_text"):
                    continue
                walk(value, text)
        elif isinstance(node, list):
            for item in node:
                walk(item, parent_text)

    walk(face, None)
    unique = []
    for item in found:
        item = item.strip() or "an ability"
        if item not in unique:
            unique.append(item)
    return unique


def build_card_data(cards: Iterable[dict], build_face: Callable, build_face_multi: Callable,
                    on_card: Callable[[str, list[str] | None], None] | None = None) -> dict:
    """Catalogue records -> the engine's ``card-data.json`` mapping (lower-cased face name -> face).

    ``on_card(name, problems)`` is told, for each card, the unsupported parts (``[]`` when the
    engine fully supports it) or ``None`` when the engine rejected the card outright.
    """
    data: dict[str, dict] = {}
    for card in cards:
        if (card.get("layout") or "normal") in NON_GAME_LAYOUTS:
            continue
        faces = atomic_faces(card)
        try:
            if len(faces) == 1:
                built = [build_face(faces[0], None)]
                entries = [built[0]]
            else:
                built = [build_face_multi(face, None) for face in faces[:2]]
                entries = [dict(face, layout=card.get("layout"), face_index=i) for i, face in enumerate(built)]
        except (ValueError, TypeError, KeyError):  # the engine refused the record
            if on_card:
                on_card(card["name"], None)
            continue
        problems = [p for face in built for p in unsupported_parts(face)]
        for entry in entries:
            key = entry["name"].lower()
            if key not in data or (data[key].get("layout") and not entry.get("layout")):
                data[key] = entry
        if len(faces) > 1:
            # Decks name the card by its full "A // B" name or its front face: both resolve.
            data.setdefault(card["name"].lower(), entries[0])
        if on_card:
            on_card(card["name"], problems)
    return data
