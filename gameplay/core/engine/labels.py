"""What each action does, in words: the labels a person reads on a button, in the advice and in the log.

As on Arena or MTGO, a label says what the action does: a mode's text ("Manifold Mouse: gain Double Strike", not
"Choose branch"), the ability activated ("Activate Clue: {2}, sacrifice it: draw"), the cards a scry keeps on top,
a target with its controller ("Target Novice Inspector (player 1's)"). Same-named objects are told apart: a
permanent that shares its name with another of its controller's carries the tag the board shows ("Hired Claw #2",
:func:`battlefield_tags`), and where two actions of one decision would still read alike their objects' state is
added (power/toughness, tapped, damage, counters), then, for interchangeable copies off the battlefield (two
Mountains in hand), "copy 1" / "copy 2". :func:`decision_labels` returns one :class:`Label` per action, no two of a
decision alike; ``group`` is the text the interchangeable copies share (the page shows them as one button, the log
says that text).

Labels speak of seats as "player 0" / "player 1" ("player 1's" for a controller): the shells turn them into
"you" / "the AI" from the person's side (``seatview.humanize``). A label names only objects its deciding seat can
see (its own hand, what it searches or scries, public zones); ``Label.objects`` lists every object a label names,
so a log entry of the other seat can be redacted when one of them is hidden from the reader.

Pure: no engine, no Django; reads plain dicts (the engine's objects and its prompt), through :class:`Position`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

_COUNTER_WORDS = {"P1P1": "+1/+1", "M1M1": "-1/-1", "Plus1Plus1": "+1/+1", "Minus1Minus1": "-1/-1"}
_MANA = {"White": "W", "Blue": "U", "Black": "B", "Red": "R", "Green": "G", "Colorless": "C", "Snow": "S", "X": "X"}
_MAX_ABILITY_TEXT = 90


def words(kind: str) -> str:
    """``"DecideOptionalCost"`` -> ``"decide optional cost"``."""
    return re.sub(r"(?<!^)(?=[A-Z])", " ", str(kind)).lower()


def _counter_name(key) -> str:
    key = str(key)
    if key in _COUNTER_WORDS:
        return _COUNTER_WORDS[key]
    generic = re.fullmatch(r'Generic\(\s*"?([^")]*)"?\s*\)', key)
    return (generic.group(1) if generic else words(key)).lower()


def counter_text(counters) -> str:
    """The counters on an object in words: ``{"P1P1": 2, "Oil": 1}`` -> ``"2 +1/+1 counters, an oil counter"``."""
    parts = []
    for key, count in (counters or {}).items() if isinstance(counters, dict) else ():
        if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
            continue
        name = _counter_name(key)
        if count == 1:
            parts.append(("an " if name[:1] in "aeiou" else "a ") + name + " counter")
        else:
            parts.append(f"{count} {name} counters")
    return ", ".join(parts)


def mana_text(cost) -> str:
    """``{"type": "Cost", "shards": ["Red"], "generic": 1}`` -> ``"{1}{R}"`` (empty for no cost)."""
    if not isinstance(cost, dict) or cost.get("type") != "Cost":
        return ""
    out = f"{{{cost['generic']}}}" if cost.get("generic") else ""
    for shard in cost.get("shards") or []:
        out += "{" + (_MANA.get(shard) or "/".join(_MANA.get(p, p) for p in re.findall(r"[A-Z][a-z]+", str(shard)))
                      or str(shard)) + "}"
    return out or ("{0}" if cost.get("generic") == 0 and not cost.get("shards") else "")


def cost_text(cost) -> str:
    """An ability's or a spell's cost in words: ``{2}, sacrifice it``, ``{R}, {T}``, ``pay 4 life or {3}{B}``."""
    if not isinstance(cost, dict):
        return ""
    kind = cost.get("type")
    if kind == "Cost":
        return mana_text(cost)
    if kind == "Mana":
        return mana_text(cost.get("cost"))
    if kind == "Tap":
        return "{T}"
    if kind == "Untap":
        return "{Q}"
    if kind == "Composite":
        return ", ".join(t for t in (cost_text(c) for c in cost.get("costs") or []) if t)
    if kind == "Choice":
        return " or ".join(t for t in (cost_text(c) for c in cost.get("data") or []) if t)
    if kind == "PayLife":
        amount = (cost.get("amount") or {}).get("value")
        return f"pay {amount} life" if amount is not None else "pay life"
    if kind in ("Sacrifice", "Discard", "Exile", "ReturnToHand"):
        target = cost.get("target") or {}
        itself = cost.get("self_ref") or (isinstance(target, dict) and target.get("type") == "SelfRef")
        verb = {"ReturnToHand": "return"}.get(kind, kind.lower())
        return f"{verb} it" if itself else f"{verb} {_count(cost)}"
    return words(kind)


def _count(cost: dict) -> str:
    count = cost.get("count")
    n = count.get("value") if isinstance(count, dict) else count
    return "a card" if n in (None, 1) else f"{n} cards"


def _first_sentence(text: str, name: str) -> str:
    text = str(text).replace("~", name).strip()
    cut = re.search(r"(?<=[.!?])\s", text)
    text = (text[:cut.start()] if cut else text).rstrip(".")
    return text if len(text) <= _MAX_ABILITY_TEXT else text[:_MAX_ABILITY_TEXT - 1].rstrip() + "…"


def _may_clause(description: str, name: str) -> str:
    """What an optional effect does: the words after "you may" ("draw a card"), else the whole sentence."""
    text = str(description or "").replace("~", name).strip().rstrip(".")
    found = re.search(r"\byou may (.+)$", text)
    text = found.group(1) if found else text
    return text if len(text) <= _MAX_ABILITY_TEXT else text[:_MAX_ABILITY_TEXT - 1].rstrip(" ,") + "…"


def battlefield_tags(objects: list[dict]) -> dict[int, int]:
    """Object id -> its number among the permanents of the same name its controller has, in battlefield order
    (``objects``: the battlefield's objects in order), for the names a controller has more than one of."""
    by_name: dict[tuple, list[int]] = {}
    for obj in objects:
        if isinstance(obj, dict) and obj.get("id") is not None:
            by_name.setdefault((obj.get("controller"), obj.get("name")), []).append(obj["id"])
    return {oid: n for ids in by_name.values() if len(ids) > 1 for n, oid in enumerate(ids, start=1)}


class Position:
    """What the labels of one decision need to know: the deciding ``seat``, the engine's ``prompt``, each object
    (``lookup(id)``: the engine's object dict, or None) and the battlefield's objects in order (``battlefield()``,
    asked at most once, only when a permanent is named)."""

    def __init__(self, seat: int | None, prompt: dict | None, lookup: Callable[[int], dict | None],
                 battlefield: Callable[[], list[dict]]):
        self.seat = seat
        self.prompt = prompt if isinstance(prompt, dict) else {}
        self._lookup, self._battlefield = lookup, battlefield
        self._objects: dict[int, dict | None] = {}
        self._tags: dict[int, int] | None = None

    @classmethod
    def of_state(cls, st: dict, seat: int | None) -> "Position":
        """The position of an engine state's ``"state"`` dict (``Game.state()["state"]``)."""
        objects = st.get("objects") or {}
        return cls(seat, st.get("waiting_for"), lambda oid: objects.get(str(oid)),
                   lambda: [objects[str(o)] for o in st.get("battlefield") or [] if str(o) in objects])

    @property
    def data(self) -> dict:
        data = self.prompt.get("data")
        return data if isinstance(data, dict) else {}

    def obj(self, oid) -> dict | None:
        try:
            oid = int(oid)
        except (TypeError, ValueError):
            return None
        if oid not in self._objects:
            try:
                found = self._lookup(oid)
            except Exception:  # noqa: BLE001 - a failed lookup (a bad id, an engine panic) names the id only
                found = None
            self._objects[oid] = found if isinstance(found, dict) else None
        return self._objects[oid]

    def tag(self, oid) -> int | None:
        obj = self.obj(oid)
        if obj is None or obj.get("zone") != "Battlefield":
            return None
        if self._tags is None:
            try:
                self._tags = battlefield_tags(self._battlefield() or [])
            except Exception:  # noqa: BLE001 - no listing: no tags (labels stay correct, only less precise)
                self._tags = {}
        return self._tags.get(int(oid))


@dataclass
class Label:
    """One action's label: ``text`` (no two actions of a decision alike), ``group`` (the text it shares with
    interchangeable copies, or None) and ``objects`` (every object id the text names)."""

    text: str
    group: str | None = None
    objects: tuple[int, ...] = ()


# how much a name says: the name and its board tag; then its state; then which copy (off the battlefield)
NAME, STATE, COPY = 0, 1, 2


@dataclass
class _Namer:
    pos: Position
    level: int = NAME
    copies: dict[int, int] = field(default_factory=dict)  # id -> copy number (level COPY)
    named: list[int] = field(default_factory=list)
    copied: bool = False  # a copy number was written

    def __call__(self, oid, *, owner: bool = False) -> str:
        obj = self.pos.obj(oid)
        if obj is None:
            return f"#{oid}"
        self.named.append(int(oid))
        if obj.get("face_down") and obj.get("controller") != self.pos.seat:
            name = "a face-down card"
        else:
            name = obj.get("name") or f"#{oid}"
        tag = self.pos.tag(oid)
        if tag is not None:
            name += f" #{tag}"
        quals = []
        if owner and obj.get("controller") is not None:
            quals.append(f"player {obj['controller']}'s")
        if self.level >= STATE and obj.get("zone") == "Battlefield":
            if obj.get("power") is not None and obj.get("toughness") is not None:
                quals.append(f"{obj['power']}/{obj['toughness']}")
            if obj.get("tapped"):
                quals.append("tapped")
            if obj.get("damage_marked"):
                quals.append(f"{obj['damage_marked']} damage")
            if counter_text(obj.get("counters")):
                quals.append(counter_text(obj.get("counters")))
        if self.level >= COPY and int(oid) in self.copies:
            quals.append(f"copy {self.copies[int(oid)]}")
            self.copied = True
        return name + (f" ({', '.join(quals)})" if quals else "")

    def many(self, ids) -> str:
        return ", ".join(self(i) for i in ids) if ids else "nothing"


def _target(target, name: _Namer) -> str:
    if isinstance(target, dict) and "Object" in target:
        return name(target["Object"], owner=True)
    if isinstance(target, dict) and "Player" in target:
        return f"player {target['Player']}"
    if isinstance(target, dict) and target.get("type") == "Player":
        return f"player {target.get('data')}"
    return str(target)


def _cards(data: dict) -> list:
    cards = data.get("cards")
    return list(cards) if isinstance(cards, list) else []


def _select_cards(data: dict, pos: Position, name: _Namer) -> str:
    """``SelectCards``: what choosing these cards does, by the prompt it answers."""
    chosen = _cards(data)
    prompt, pd = pos.prompt.get("type"), pos.data
    if prompt == "MulliganDecision":
        return f"Put {name.many(chosen)} on the bottom"
    if prompt in ("DiscardToHandSize", "DiscardChoice"):
        return f"Discard {name.many(chosen)}"
    if prompt == "ScryChoice":
        rest = [c for c in pd.get("cards") or [] if c not in chosen]
        if not rest:
            return f"Scry: keep {name.many(chosen)} on top"
        if not chosen:
            return f"Scry: put {name.many(rest)} on the bottom"
        return f"Scry: keep {name.many(chosen)} on top, {name.many(rest)} on the bottom"
    if prompt == "SearchChoice":
        return f"Find {name.many(chosen)}"
    if prompt == "DigChoice":
        where = pd.get("kept_destination")
        return (f"Put {name.many(chosen)} into {words(where)}" if chosen and where else f"Take {name.many(chosen)}")
    if prompt == "PayCost":
        kind = (pd.get("kind") or {}).get("type") if isinstance(pd.get("kind"), dict) else None
        return (f"Tap {name.many(chosen)} to pay the cost" if kind == "TapCreatures"
                else f"Pay the cost with {name.many(chosen)}")
    if prompt == "EffectZoneChoice":
        effect = pd.get("effect_kind")
        if effect == "PutAtLibraryPosition":
            where = ((pd.get("library_position") or {}).get("type") or "Top").lower()
            return f"Put {name.many(chosen)} on {'top' if where == 'top' else 'the ' + where} of the library"
        if effect == "ChangeZone" and pd.get("destination"):
            return f"Move {name.many(chosen)} to {words(pd['destination'])}"
    return f"Choose {name.many(chosen)}"


def _ability(data: dict, name: _Namer) -> str:
    source = data.get("source_id")
    obj = name.pos.obj(source) or {}
    text = name(source)
    abilities = obj.get("abilities") or []
    index = data.get("ability_index", 0)
    ability = abilities[index] if isinstance(index, int) and 0 <= index < len(abilities) else None
    if not isinstance(ability, dict):
        return f"Activate {text} (ability {int(index or 0) + 1})"
    if ability.get("description"):
        return f"Activate {text}: {_first_sentence(ability['description'], obj.get('name') or text)}"
    cost = cost_text(ability.get("cost"))
    effect = words((ability.get("effect") or {}).get("type") or "ability")
    return f"Activate {text}: " + (f"{cost}: {effect}" if cost else effect)


def _attacks(data: dict, name: _Namer) -> str:
    attacks = data.get("attacks") or []
    if not attacks:
        return "No attack"
    parts = []
    for a in attacks:
        attacker, target = (a[0], a[1] if len(a) > 1 else None) if isinstance(a, list) else (a.get("attacker"), a.get("target"))
        part = name(attacker)
        if isinstance(target, dict) and target.get("type") not in (None, "Player"):
            part += " → " + (name(target.get("data")) if isinstance(target.get("data"), int) else words(target["type"]))
        parts.append(part)
    return "Attack with " + ", ".join(parts)


def _blocks(data: dict, name: _Namer) -> str:
    pairs = data.get("assignments") or []
    if not pairs:
        return "No blocks"
    return "Block: " + ", ".join(f"{name(b)} blocks {name(a)}" for b, a in (
        p if isinstance(p, list) else (p.get("blocker"), p.get("attacker")) for p in pairs))


def _optional(data: dict, pos: Position, name: _Namer, accept: bool, remember: bool = False) -> str:
    pd = pos.data
    source = pd.get("source_id")
    src = (pos.obj(source) or {}).get("name") or ""
    what = _may_clause(pd.get("description"), src)
    text = (f"Yes: {what}" if accept else f"No: don't {what}") if what else ("Yes" if accept else "No")
    if source is not None and pos.obj(source) is not None:
        text += f" ({name(source)})"
    return text + (" — and remember this answer" if remember else "")


def describe(d: dict, pos: Position, level: int = NAME, copies: dict[int, int] | None = None) -> Label:
    """The label of one action (``d``: the engine's tagged action ``{"type", "data"}``) at ``level`` of detail."""
    name = _Namer(pos, level, copies or {})
    text = _text(d.get("type"), d.get("data") if isinstance(d.get("data"), dict) else {}, pos, name)
    return Label(text, None, tuple(dict.fromkeys(name.named)))


def _text(kind: str, data: dict, pos: Position, name: _Namer) -> str:  # noqa: C901 - one branch per kind of action
    pd = pos.data
    if kind == "PassPriority":
        return "Pass priority"
    if kind == "PlayLand":
        return f"Play {name(data.get('object_id'))}"
    if kind == "CastSpell":
        obj = pos.obj(data.get("object_id")) or {}
        where = obj.get("zone")
        return f"Cast {name(data.get('object_id'))}" + (f" from {words(where)}" if where not in (None, "Hand") else "")
    if kind == "ActivateAbility":
        return _ability(data, name)
    if kind == "MulliganDecision":
        return "Keep hand" if (data.get("choice") or {}).get("type", "Keep") == "Keep" else "Mulligan"
    if kind == "DeclareAttackers":
        return _attacks(data, name)
    if kind == "DeclareBlockers":
        return _blocks(data, name)
    if kind == "ChooseTarget":
        target = data.get("target")
        return f"Target {_target(target, name)}" if target else "Choose no target"
    if kind == "SelectCards":
        return _select_cards(data, pos, name)
    if kind == "ChooseBranch":
        texts = pd.get("branch_descriptions") or []
        index = data.get("index")
        mode = texts[index] if isinstance(index, int) and 0 <= index < len(texts) else f"mode {index}"
        source = pd.get("source_id")
        targets = [t["Object"] for t in pd.get("parent_targets") or [] if isinstance(t, dict) and "Object" in t]
        head = name(source) + ": " if source is not None and pos.obj(source) is not None else "Mode: "
        extra = [t for t in targets if t != source]
        return head + mode + (f" ({name.many(extra)})" if extra else "")
    if kind == "ChooseOption":
        return f"Choose {data.get('choice')}"
    if kind == "DecideOptionalEffect":
        return _optional(data, pos, name, bool(data.get("accept")))
    if kind == "DecideOptionalEffectAndRemember":
        choice = data.get("choice")
        accept = (choice.get("type") if isinstance(choice, dict) else choice) == "Accept"
        return _optional(data, pos, name, accept, remember=True)
    if kind == "DecideOptionalCost":
        cost = cost_text(pd.get("cost"))
        return ("Pay" if data.get("pay") else "Don't pay") + " the optional cost" + (f" ({cost})" if cost else "")
    if kind == "PayUnlessCost":
        cost = cost_text(pd.get("cost")) or "the cost"
        return f"Pay {cost}" if data.get("pay") else f"Don't pay {cost}"
    if kind == "CancelCast":
        spell = (pd.get("pending_cast") or {}).get("object_id") if isinstance(pd.get("pending_cast"), dict) else None
        return f"Cancel casting {name(spell)}" if spell is not None and pos.obj(spell) else "Cancel the spell"
    if kind == "TapForConvoke":
        oid, mode = data.get("object_id"), pd.get("convoke_mode")
        obj = pos.obj(oid) or {}
        if mode == "Delve":
            return f"Exile {name(oid)} from player {obj.get('owner')}'s graveyard (delve)"
        return f"Tap {name(oid)} for {words(mode or 'convoke')}" + (
            f" ({words(data['mana_type'])} mana)" if data.get("mana_type") else "")
    if kind == "ActivateNinjutsu":
        return f"Ninjutsu: {name(data.get('ninjutsu_object_id'))}, returning {name(data.get('creature_to_return'))}"
    if kind == "AssignCombatDamage":
        parts = [f"{n} to {name(b)}" for b, n in (data.get("assignments") or []) if n]
        if data.get("trample_damage"):
            parts.append(f"{data['trample_damage']} tramples over")
        if data.get("controller_damage"):
            parts.append(f"{data['controller_damage']} to the controller")
        return "Assign damage: " + (", ".join(parts) or "none")
    if kind == "OrderTriggers":
        triggers = pd.get("triggers") or []
        order = [i for i in data.get("order") or [] if isinstance(i, int) and 0 <= i < len(triggers)]
        # the first in the order goes on the stack first: the last resolves first
        names = [name(triggers[i].get("source_id")) if triggers[i].get("source_id") is not None
                 else str(triggers[i].get("source_name") or "a trigger") for i in reversed(order)]
        return "Triggers resolve: " + ", then ".join(names)
    if kind == "Concede":
        return "Concede"
    for key in ("accept", "pay"):
        if key in data:
            return f"{words(kind).capitalize()}: {'yes' if data[key] else 'no'}"
    return words(kind).capitalize()


def _dupes(texts: list[str]) -> list[list[int]]:
    seen: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        seen.setdefault(t, []).append(i)
    return [ix for ix in seen.values() if len(ix) > 1]


def decision_labels(actions: list[dict], pos: Position) -> list[Label]:
    """The labels of one decision's actions (the engine's tagged dicts, in order), no two alike.

    Each starts with its names and board tags; where two read alike, their objects' state is added; where they
    still do, the copies off the battlefield are numbered (interchangeable copies: they share ``group``); the rare
    pair still alike (a difference the words do not show) gets "option n"."""
    labels = [describe(d, pos) for d in actions]
    for ix in _dupes([lb.text for lb in labels]):
        for i in ix:
            labels[i] = describe(actions[i], pos, STATE)
    for ix in _dupes([lb.text for lb in labels]):
        group = labels[ix[0]].text
        alike: dict[tuple, list[int]] = {}  # (name, zone, owner) -> the distinct cards of it these actions name
        for i in ix:
            for oid in labels[i].objects:
                obj = pos.obj(oid) or {}
                if obj.get("zone") not in (None, "Battlefield", "Stack"):
                    ids = alike.setdefault((obj.get("name"), obj.get("zone"), obj.get("owner")), [])
                    if oid not in ids:
                        ids.append(oid)
        copies = {oid: n for ids in alike.values() if len(ids) > 1 for n, oid in enumerate(ids, start=1)}
        for i in ix:
            name = _Namer(pos, COPY, copies)
            d = actions[i]
            text = _text(d.get("type"), d.get("data") if isinstance(d.get("data"), dict) else {}, pos, name)
            labels[i] = Label(text, group if name.copied else None, tuple(dict.fromkeys(name.named)))
    for ix in _dupes([lb.text for lb in labels]):
        for n, i in enumerate(ix, start=1):
            labels[i] = Label(f"{labels[i].text} (option {n})", None, labels[i].objects)
    # an "option n" suffix can meet another label only by chance; make sure, whatever the engine lists
    seen: set[str] = set()
    for i, lb in enumerate(labels):
        text, n = lb.text, 1
        while text in seen:
            n += 1
            text = f"{lb.text} [{n}]"
        seen.add(text)
        if text != lb.text:
            labels[i] = Label(text, lb.group, lb.objects)
    return labels
