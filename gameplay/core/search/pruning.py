"""Equivalent actions, found once so the search never spends a rollout on a duplicate.

Two actions are equivalent when they do the same thing to objects that cannot be told apart:
playing either of two Mountains, casting either copy of a spell in hand, activating the same
ability of two untapped Clues, attacking with either of two identical 1/1 tokens. Each action
gets a *signature* in which every object id is replaced by what the rules care about (name,
controller, zone, tapped, damage, counters, power/toughness, attachments); actions with the same
signature are one choice, and the first of them (in the engine's order) represents the group.

Pure: works on ``gameplay.core.engine.adapter.Game`` / ``Action`` only.
"""
from __future__ import annotations

import json
from typing import Iterable

from gameplay.core.engine.adapter import Action, Game

# Action payload fields that hold one object id / a list of object ids.
_ID_FIELDS = {"object_id", "card_id", "source_id", "attacker", "blocker", "target_id", "permanent_id"}
_ID_LIST_FIELDS = {"cards", "objects", "object_ids", "card_ids", "targets"}


class ObjectLookup:
    """Object descriptors of one game position, looked up lazily and cached."""

    def __init__(self, game: Game):
        self.game = game
        self._cache: dict[int, tuple] = {}

    def __call__(self, oid) -> tuple:
        try:
            oid = int(oid)
        except (TypeError, ValueError):
            return ("?", str(oid))
        found = self._cache.get(oid)
        if found is None:
            found = self._cache[oid] = self._describe(oid)
        return found

    def _describe(self, oid: int) -> tuple:
        native = getattr(self.game, "_g", None)
        obj = None
        if native is not None:
            try:
                obj = native.object(oid)
            except BaseException:  # noqa: BLE001 - a failed lookup only means "do not merge"
                obj = None
        if not isinstance(obj, dict):
            return ("#", oid)  # unknown objects never merge with anything
        zone = obj.get("zone")
        if zone in ("Hand", "Library", "Graveyard", "Exile"):
            # A card in a hidden or dead zone is its name (and owner); copies are interchangeable.
            return (obj.get("name"), obj.get("owner"), zone)
        counters = obj.get("counters") or {}
        return (obj.get("name"), obj.get("controller"), zone, bool(obj.get("tapped")), obj.get("damage_marked") or 0,
                json.dumps(counters, sort_keys=True), obj.get("power"), obj.get("toughness"),
                bool(obj.get("attachments")), obj.get("attached_to") is not None, bool(obj.get("face_down")))


def _canon(value, lookup: ObjectLookup, key: str | None = None):
    """``value`` with object ids replaced by descriptors; lists of ids become sorted multisets."""
    if isinstance(value, dict):
        if set(value) == {"Object"}:
            return {"Object": lookup(value["Object"])}
        return {k: _canon(v, lookup, k) for k, v in sorted(value.items())}
    if isinstance(value, list):
        if key in _ID_LIST_FIELDS:
            items = [lookup(v) if isinstance(v, int) and not isinstance(v, bool) else _canon(v, lookup) for v in value]
        else:
            items = [_canon(v, lookup, key) for v in value]
        if key in ("attacks", "assignments") or key in _ID_LIST_FIELDS:
            return sorted(items, key=lambda x: json.dumps(x, sort_keys=True, default=str))
        return items
    if key in _ID_FIELDS and isinstance(value, int) and not isinstance(value, bool):
        return lookup(value)
    return value


def _canon_pairs(pairs, lookup: ObjectLookup):
    """Attack/block pairs: [[object id, target], ...] (lists or dicts) -> a sorted multiset."""
    out = []
    for p in pairs or []:
        if isinstance(p, list) and p:
            first = lookup(p[0])
            rest = [_canon(x, lookup) if not isinstance(x, int) or isinstance(x, bool) else lookup(x) for x in p[1:]]
            out.append([first, *rest])
        elif isinstance(p, dict):
            out.append(_canon(p, lookup))
        else:
            out.append(p)
    return sorted(out, key=lambda x: json.dumps(x, sort_keys=True, default=str))


def signature(action: Action, lookup: ObjectLookup) -> str:
    """A string equal for equivalent actions of the same position."""
    data = action.data
    if action.kind == "DeclareAttackers" and isinstance(data, dict):
        canon = {**{k: _canon(v, lookup, k) for k, v in data.items() if k != "attacks"},
                 "attacks": _canon_pairs(data.get("attacks"), lookup)}
    elif action.kind == "DeclareBlockers" and isinstance(data, dict):
        canon = {**{k: _canon(v, lookup, k) for k, v in data.items() if k != "assignments"},
                 "assignments": _canon_pairs(data.get("assignments"), lookup)}
    else:
        canon = _canon(data, lookup)
    return json.dumps({"k": action.kind, "d": canon}, sort_keys=True, default=str)


def prune_actions(game: Game, actions: Iterable[Action], lookup: ObjectLookup | None = None) -> list[Action]:
    """``actions`` without the equivalent duplicates (the first of each group is kept, in order)."""
    lookup = lookup or ObjectLookup(game)
    out, seen = [], set()
    for action in actions:
        sig = signature(action, lookup)
        if sig in seen:
            continue
        seen.add(sig)
        out.append(action)
    return out


def groups(game: Game, actions: Iterable[Action]) -> dict[str, list[Action]]:
    """Signature -> the equivalent actions (for tests and the advisor's explanations)."""
    lookup = ObjectLookup(game)
    out: dict[str, list[Action]] = {}
    for action in actions:
        out.setdefault(signature(action, lookup), []).append(action)
    return out
