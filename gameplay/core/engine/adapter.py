"""The rules-engine interface the rest of the site uses, and its phase.rs implementation.

Everything above this module (search, the play page, the gauntlet) talks to ``GameEngine`` /
``Game`` only: state, legal actions *per seat*, apply, snapshot/restore, result, evaluation and
each seat's observation. Another engine can replace phase.rs by implementing the same two
classes. Pure: no Django; ``phase`` is imported lazily so the rest of the site runs without it.

Facts about phase-python 0.103.0 this adapter hides:
- ``Game.actions()`` is not tagged with the seat that may act; the seat comes from the
  ``waiting_for`` prompt (``data.player``, or every ``pending`` player of a mulligan), except under
  turn control (Emrakul, the Promised End), where the prompt names the controlled player but the engine
  takes the action only from the controller ("Wrong player"): ``submitter``.
- unknown card names are dropped silently at ``new_game``: we check names first.
- there is no clone; a snapshot is the ``state()`` dict and a restore is ``load_game``.
- a Rust panic arrives as ``BaseException`` (pyo3's ``PanicException``): it is turned into
  ``EnginePanic`` so callers keep their last good snapshot and carry on.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from gameplay.core.engine import labels

DIFFICULTIES = ("VeryEasy", "Easy", "Medium", "Hard", "VeryHard")
# every AI preset phase.rs accepts: the difficulties the site offers, and CEDH (its competitive-Commander preset,
# measured against VeryHard by bench/game_strength.py's yardstick; not offered on the site)
ENGINE_LEVELS = DIFFICULTIES + ("CEDH",)
GAME_OVER = "GameOver"
MAIN_PHASES = frozenset({"PreCombatMain", "PostCombatMain"})  # where a player may cast sorceries and play lands


class EngineError(Exception):
    """Base class: something the engine refused or could not do."""


class UnknownCards(EngineError):
    def __init__(self, names: Sequence[str]):
        self.names = sorted(set(names))
        super().__init__("the engine does not know these cards: " + ", ".join(self.names))


class IllegalAction(EngineError):
    """An action that is not legal now (wrong seat, not offered, or refused by the rules)."""


class BadState(EngineError):
    """A game state the engine cannot load."""


class EnginePanic(EngineError):
    """The engine crashed (a Rust panic) while doing something; the game before it is intact."""


@dataclass(frozen=True)
class Action:
    """One legal action for one seat. ``key`` identifies it across snapshots of the same state."""

    seat: int
    kind: str
    data: Any
    label: str
    native: Any = field(default=None, compare=False, repr=False, hash=False)
    # the label shared with interchangeable copies (two Mountains in hand: one button, one log text), or None
    group: str | None = field(default=None, compare=False, hash=False)
    objects: tuple = field(default=(), compare=False, repr=False, hash=False)  # the object ids the label names

    @property
    def key(self) -> str:
        return json.dumps({"type": self.kind, "data": self.data}, sort_keys=True, separators=(",", ":"))

    def to_dict(self) -> dict:
        out = {"type": self.kind, "seat": self.seat, "label": self.label, "key": self.key}
        if self.data is not None:
            out["data"] = self.data
        if self.group is not None:
            out["group"] = self.group
        if self.objects:
            out["objects"] = list(self.objects)
        return out

    @property
    def plain(self) -> str:
        """The label as a log says it: interchangeable copies by their shared text (never "copy 2": which copy of
        a card in hand was played is nobody's business)."""
        return self.group or self.label


def _seats_of(prompt: dict) -> list[int]:
    if not isinstance(prompt, dict) or prompt.get("type") == GAME_OVER:
        return []
    data = prompt.get("data")
    if isinstance(data, dict):
        if isinstance(data.get("player"), int):
            return [data["player"]]
        pending = data.get("pending")
        if isinstance(pending, list):
            return [p["player"] for p in pending if isinstance(p, dict) and isinstance(p.get("player"), int)]
    return []


def submitter(state: dict, player: int) -> int:
    """The seat that submits ``player``'s decision in the engine ``state`` (``Game.state()["state"]``).

    Usually ``player`` itself. Under a turn-control effect (CR 723: Emrakul, the Promised End, Mindslaver) the
    controlling player makes every decision of the controlled player's turn (CR 723.5), so the engine takes the
    actions from the controller, while its prompt still names the controlled player; a library search may also
    be latched to another player's control. The engine's own rule (phase.rs ``turn_control.rs``), restated for
    two players: ``turn_decision_controller`` submits for the active player; a ``SearchChoice`` under a latched
    ``active_search_decision_controls`` entry is submitted by that entry's controller."""
    waiting = state.get("waiting_for") or {}
    if waiting.get("type") == "SearchChoice":
        control = (state.get("active_search_decision_controls") or {}).get(str(player)) or {}
        authority = control.get("authority") or {}
        if authority.get("type") == "latched_controller" and isinstance(authority.get("controller"), int):
            return authority["controller"]
    controller = state.get("turn_decision_controller")
    if isinstance(controller, int) and player == state.get("active_player"):
        return controller
    return player


def submitters(state: dict) -> list[int]:
    """The seats that may act now in the engine ``state`` (``submitter`` applied to the prompt's players)."""
    return [submitter(state, p) for p in _seats_of(state.get("waiting_for") or {})]


def _guard(call, *args, **kwargs):
    """Run an engine call; a panic (a BaseException that is not an interpreter exit) -> EnginePanic."""
    try:
        return call(*args, **kwargs)
    except Exception:
        raise
    except BaseException as exc:  # pyo3's PanicException derives from BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        raise EnginePanic(f"the rules engine crashed: {exc}") from None


# Enum variants phase.rs (0.103) writes in a state but refuses when reading it back, and what to read
# instead. A target prompt for a pump spell describes the pump as "Increase" / "Decrease" (e.g. +2/+0,
# -3/-0); the reader knows only None / Destination / Modification. The detail only describes the
# effect to whoever picks the targets; the targets offered and their legality do not depend on it.
_UNREADABLE_EFFECT_DETAILS = {"Increase", "Decrease"}


def _repair_target_slots(st: dict) -> dict | None:
    """The pump prompt's effect detail (see _UNREADABLE_EFFECT_DETAILS) as one the engine reads: a new
    ``waiting_for``, or None when the prompt needs no repair."""
    waiting = st.get("waiting_for")
    slots = (waiting.get("data") or {}).get("target_slots") if isinstance(waiting, dict) else None
    if not isinstance(slots, list) or not any(
            isinstance(slot, dict) and (slot.get("effect_detail") or {}).get("type") in _UNREADABLE_EFFECT_DETAILS
            for slot in slots):
        return None
    return dict(waiting, data=dict(waiting["data"], target_slots=[
        dict(slot, effect_detail={"type": "None"})
        if isinstance(slot, dict) and (slot.get("effect_detail") or {}).get("type") in _UNREADABLE_EFFECT_DETAILS
        else slot for slot in slots]))


def _misaligned_origins(obj) -> bool:
    """A token copy whose ``base_trigger_printed_origins`` phase.rs wrote longer than its own
    ``base_trigger_definitions``, every entry empty. The list is read as one entry per base trigger
    ("copiable trigger origins do not align with the active base set"); an Offspring token (a 1/1 copy
    of Manifold Mouse: its combat trigger, not the Offspring trigger) gets the original's two entries.
    Only all-``None`` lists are repaired: then which entry belonged to the dropped trigger does not
    matter, and ``[None] * n`` is what the engine writes back after loading such a state."""
    if not isinstance(obj, dict):
        return False
    origins, triggers = obj.get("base_trigger_printed_origins"), obj.get("base_trigger_definitions")
    return (isinstance(origins, list) and isinstance(triggers, list) and len(origins) > len(triggers)
            and all(o is None for o in origins))


def repair_state(state: dict) -> dict:
    """``state`` (``Game.state()``), with what the engine writes but cannot read back replaced by what
    it can, without changing the game: the pump prompt's effect detail (_UNREADABLE_EFFECT_DETAILS) and
    a token copy's trigger origins (_misaligned_origins). Returns ``state`` itself when nothing needs
    repair, else a repaired copy sharing the parts it does not change (the caller's dict is never
    changed)."""
    st = state["state"]
    changes = {}
    waiting = _repair_target_slots(st)
    if waiting is not None:
        changes["waiting_for"] = waiting
    objects = st.get("objects")
    if isinstance(objects, dict):
        bad = [key for key, obj in objects.items() if _misaligned_origins(obj)]
        if bad:
            changes["objects"] = dict(objects, **{key: dict(
                objects[key], base_trigger_printed_origins=[None] * len(objects[key]["base_trigger_definitions"]))
                for key in bad})
    if not changes:
        return state
    return dict(state, state=dict(st, **changes))


class Game:
    """A live game. Seats are 0 and 1."""

    def __init__(self, engine: "PhaseEngine", native):
        self.engine = engine
        self._g = native
        self._end_events: list | None = None  # the events of the move that ended the game, when applied here

    # -- reading ------------------------------------------------------------------------
    @property
    def turn(self) -> int:
        return self._g.turn

    @property
    def phase(self) -> str:
        return self._g.phase

    def prompt(self) -> dict:
        return _guard(self._g.waiting_for)

    def is_over(self) -> bool:
        return self.prompt().get("type") == GAME_OVER

    def result(self) -> dict | None:
        """``None`` while the game goes on, else ``{"winner": seat or None for a draw}``."""
        prompt = self.prompt()
        if prompt.get("type") != GAME_OVER:
            return None
        return {"winner": (prompt.get("data") or {}).get("winner")}

    def seats_to_act(self, prompt: dict | None = None) -> list[int]:
        """The seats that may act now (``prompt``: ``self.prompt()`` if the caller already has it). The prompt
        names the player whose decision it is; the engine names the seat that submits it as its priority
        player, which differs only under turn control (``submitter``): then the state says who it is."""
        seats = _seats_of(self.prompt() if prompt is None else prompt)
        if len(seats) == 1 and _guard(self._g.priority_player) not in (None, seats[0]):
            return submitters(self.state()["state"])
        return seats

    def seat_to_act(self) -> int | None:
        seats = self.seats_to_act()
        return seats[0] if seats else None

    def active_player(self) -> int:
        return self.state()["state"]["active_player"]

    def object_name(self, object_id) -> str:
        try:
            obj = _guard(self._g.object, int(object_id))
        except Exception:  # noqa: BLE001 - any failed lookup (a bad id, a panic as EnginePanic) only shows the id
            return f"#{object_id}"
        return (obj or {}).get("name") or f"#{object_id}"

    def legal_actions(self, seat: int) -> list[Action]:
        """The actions ``seat`` may take now (empty when it is not this seat's decision)."""
        if seat not in self.seats_to_act():
            return []
        listed, seen = [], set()
        belongs = self._mulligan_filter(seat)
        for native in _guard(self._g.actions):
            d = native.to_dict()
            if belongs is not None and not belongs(d):
                continue
            key = Action(seat, d["type"], d.get("data"), "").key
            if key in seen:  # mulligans list one Keep/Mulligan per pending player
                continue
            seen.add(key)
            listed.append((d, native))
        words = labels.decision_labels([d for d, _ in listed], self._position(seat))
        return [Action(seat, d["type"], d.get("data"), lb.text, native, lb.group, lb.objects)
                for (d, native), lb in zip(listed, words)]

    def _position(self, seat: int | None) -> labels.Position:
        """What the labels of ``seat``'s decision read: the prompt, objects and battlefield, asked lazily."""
        return labels.Position(seat, self.prompt(), lambda oid: _guard(self._g.object, int(oid)),
                               lambda: _guard(self._g.battlefield))

    def _action(self, seat: int, d: dict, native) -> Action:
        """An action outside a listed decision (the engine AI's own choice, a replayed move): labelled alone."""
        lb = labels.describe(d, self._position(seat))
        return Action(seat, d["type"], d.get("data"), lb.text, native, None, lb.objects)

    def _mulligan_filter(self, seat: int) -> Callable[[dict], bool] | None:
        """While mulligans are pending the engine lists every pending player's actions together, with
        no owner: Keep/Mulligan for a player still declaring, the choice of cards to put on the bottom
        for one who kept after mulliganing. Which of them are ``seat``'s: its own phase's kind, and
        for a bottom choice only cards from its own hand (never the other player's hidden cards).
        ``None`` outside mulligans."""
        prompt = self.prompt()
        if prompt.get("type") != "MulliganDecision":
            return None
        mine = next((p for p in (prompt.get("data") or {}).get("pending") or [] if p.get("player") == seat), None)
        if mine is None:
            return lambda d: False
        if (mine.get("phase") or {}).get("type") != "BottomCards":
            return lambda d: d["type"] == "MulliganDecision"
        hand = {obj["id"] for obj in _guard(self._g.hand, seat)}
        return lambda d: d["type"] == "SelectCards" and set((d.get("data") or {}).get("cards") or []) <= hand

    def describe(self, d: dict, seat: int | None = None) -> str:
        """A short human label for a tagged action dict on its own (``labels.describe``; a decision's actions are
        labelled together by :meth:`legal_actions`, which tells same-named ones apart)."""
        return labels.describe(d, self._position(seat)).text

    def stack_size(self) -> int:
        """How many spells and abilities are on the stack."""
        return len(_guard(self._g.stack) or [])

    def evaluate(self, seat: int) -> float:
        """The engine's heuristic position value from ``seat``'s side (higher is better)."""
        return float(_guard(self._g.evaluate_state, seat))

    # -- acting -------------------------------------------------------------------------
    def apply(self, seat: int, action: Action | dict) -> dict:
        """Apply one action as ``seat``. Raises IllegalAction / EnginePanic; returns the events. A concession
        (:meth:`concede`) may come at any time."""
        conceding = isinstance(action, Action) and action.kind == "Concede" and action.native is not None
        if not conceding and seat not in self.seats_to_act():
            raise IllegalAction(f"seat {seat} may not act now")
        native = action.native if isinstance(action, Action) and action.native is not None else None
        if native is None:
            payload = {"type": action.kind, "data": action.data} if isinstance(action, Action) else action
            if not isinstance(payload, dict) or not isinstance(payload.get("type"), str):
                raise IllegalAction("an action is a JSON object with a 'type'")
            if payload.get("data") is None:
                payload = {"type": payload["type"]}
            offered = {a.key: a for a in self.legal_actions(seat)}
            key = json.dumps({"type": payload["type"], "data": payload.get("data")}, sort_keys=True, separators=(",", ":"))
            if key not in offered:
                raise IllegalAction(f"{payload['type']} is not one of the legal actions now")
            native = offered[key].native
        try:
            result = _guard(self._g.apply, seat, native)
        except ValueError as exc:
            raise IllegalAction(str(exc)) from None
        if (result.waiting_for or {}).get("type") == GAME_OVER:  # kept for final_observation
            self._end_events = result.events
        return {"fast_forwarded": result.fast_forwarded}

    def concede(self, seat: int) -> Action:
        """``seat`` concedes (CR 104.3a: at any time, whoever's decision it is); the engine ends the game and, as
        for any loss, exiles the conceding player's cards. Returns the move applied (a replay applies it again
        as a recorded move). Raises IllegalAction when the game is over."""
        if self.is_over():
            raise IllegalAction("the game is over")
        action = self.engine_action(seat, {"type": "Concede", "data": {"player_id": seat}})
        self.apply(seat, action)
        return action

    def apply_or_next(self, seat: int, chosen: Action | None, *, apply: Callable[[Action], Any] | None = None,
                      on_refused: Callable[[Action, Exception], None] | None = None) -> Action:
        """Apply ``chosen`` (listed or not: the engine's AI picks among more than ``legal_actions``); if the engine
        refuses it, or there is no choice, the listed actions in order instead, the first one it accepts. phase.rs
        sometimes lists an action it then refuses ("Cannot pay required additional cost"): a game must not stop on
        that. ``apply(action)`` applies one (default ``self.apply(seat, action)``; the play page records the move
        too); ``on_refused(action, error)`` hears each refusal. Returns the action applied; raises
        ``IllegalAction`` when there is none to try or the engine refuses them all, and at once for an action the
        engine neither produced nor listed (a caller's mistake, not the engine's)."""
        apply = apply or (lambda action: self.apply(seat, action))
        listed = self.legal_actions(seat)
        if chosen is not None and chosen.native is None and chosen.key not in {a.key for a in listed}:
            raise IllegalAction(f"{chosen.label} is not one of the legal actions now")
        tries = ([chosen] if chosen is not None else []) + [a for a in listed if chosen is None or a.key != chosen.key]
        if not tries:
            raise IllegalAction(f"seat {seat} has no legal action (the engine is stuck)")
        for action in tries:
            try:
                apply(action)
                return action
            except IllegalAction as exc:
                if on_refused is not None:
                    on_refused(action, exc)
        raise IllegalAction(f"the rules engine refused every move it offered seat {seat}")

    def engine_action(self, seat: int, payload: dict) -> Action:
        """The action ``{"type", "data"}`` as the engine reads it, whether or not :meth:`legal_actions`
        lists it: the engine's own AI chooses among more than that list (a four-creature attack, two
        blockers on one attacker, a scry order), and a recorded game replays such moves. The engine
        still checks it when it is applied. Never for what a person sends (they pick offered keys)."""
        import phase  # noqa: PLC0415 - loaded with the engine

        if not isinstance(payload, dict) or not isinstance(payload.get("type"), str):
            raise IllegalAction("an action is a JSON object with a 'type'")
        if payload.get("data") is None:
            payload = {"type": payload["type"]}
        try:
            native = phase.GameAction.from_dict(payload)
        except (ValueError, TypeError) as exc:
            raise IllegalAction(f"the engine cannot read this action: {str(exc)[:200]}") from None
        return self._action(seat, native.to_dict(), native)

    def ai_action(self, seat: int, difficulty: str = "Medium") -> Action | None:
        """The engine's built-in AI choice for ``seat`` at ``difficulty``."""
        if difficulty not in ENGINE_LEVELS:
            raise ValueError(f"difficulty must be one of {', '.join(ENGINE_LEVELS)}")
        native = _guard(self._g.choose_action, seat, difficulty=difficulty)
        if native is None:
            return None
        return self._action(seat, native.to_dict(), native)

    # -- snapshots ----------------------------------------------------------------------
    def state(self) -> dict:
        """The engine's full persisted state (a JSON-able dict). Holds hidden information."""
        return _guard(self._g.state)

    def snapshot(self) -> dict:
        return self.state()

    def copy(self) -> "Game":
        return self.engine.load(self.state())

    # -- what a seat may see -------------------------------------------------------------
    def observation(self, seat: int) -> dict:
        """What ``seat`` may see: public zones, its own hand, counts of hidden cards (:func:`observe`)."""
        return observe(self.state()["state"], seat, self.phase)

    def final_observation(self, seat: int) -> dict:
        """What ``seat`` may see of the game as it stood when it ended. When a player loses, the engine moves every
        card of theirs to exile, hand and library included; the board a person wants to see is the one before that
        clean-up: the cards it moved are put back where the last move's events say they came from (the rest of the
        game's last move stays: life totals, the creatures that died). Hidden information stays hidden (the loser's
        hand and library are counts again). Outside a game just ended by a move applied here: the observation."""
        st = self.state()["state"]
        restored = restore_before_cleanup(st, self._end_events) if self._end_events else st
        return observe(restored, seat, self.phase)

    def hidden_cards(self, observer: int) -> dict:
        """The cards ``observer`` cannot see, by object id: the opponent's hand and both libraries (by player)."""
        out = {}
        for pid in (0, 1):
            p = _guard(self._g.player, pid) or {}
            ids = list(p.get("library") or [])
            if pid != observer:
                ids += list(p.get("hand") or [])
            out[pid] = ids
        return out


def _stack_entry(entry, objects) -> dict:
    source = None
    if isinstance(entry, dict):
        source = entry.get("source_id") or entry.get("id")
    name = (objects.get(str(source)) or {}).get("name") if source is not None else None
    return {"name": name or "an ability", "controller": entry.get("controller") if isinstance(entry, dict) else None}


def observe(st: dict, seat: int, phase: str | None = None) -> dict:
    """What ``seat`` may see of the engine state ``st`` (``Game.state()["state"]``): public zones, its own hand,
    counts of hidden cards. A card: id, name, controller, tapped, power/toughness, damage, counters (and their
    words), and ``tag``, its number among its controller's permanents of the same name (labels.battlefield_tags:
    the "#2" the labels of actions name it by)."""
    objects = st["objects"]
    tags = labels.battlefield_tags([objects[str(o)] for o in st.get("battlefield") or [] if str(o) in objects])

    def card(oid):
        obj = objects.get(str(oid)) or {}
        out = {"id": obj.get("id", oid), "name": obj.get("name") or f"#{oid}",
               "controller": obj.get("controller"), "tapped": bool(obj.get("tapped"))}
        if obj.get("power") is not None:
            out["power"], out["toughness"] = obj.get("power"), obj.get("toughness")
        if obj.get("damage_marked"):
            out["damage"] = obj["damage_marked"]
        if obj.get("counters"):
            out["counters"] = obj["counters"]
            out["counters_text"] = labels.counter_text(obj["counters"])
        if obj.get("face_down") and obj.get("controller") != seat:
            out = {"id": out["id"], "name": "face-down card", "controller": obj.get("controller"),
                   "tapped": out["tapped"]}
        if out["id"] in tags and obj.get("zone") == "Battlefield":
            out["tag"] = tags[out["id"]]
        return out

    players = []
    for p in st["players"]:
        pid = p["id"]
        entry = {
            "seat": pid, "life": p.get("life"), "poison": p.get("poison_counters", 0),
            "library": len(p.get("library") or []), "hand_count": len(p.get("hand") or []),
            "graveyard": [card(o) for o in p.get("graveyard") or []],
            "battlefield": [card(o) for o in st.get("battlefield") or [] if (objects.get(str(o)) or {}).get("controller") == pid],
        }
        if pid == seat:
            entry["hand"] = [card(o) for o in p.get("hand") or []]
        players.append(entry)
    prompt = st.get("waiting_for") or {}
    acting = submitters(st)
    mine = seat in acting
    # a player who loses has every card of theirs moved to exile, hand and library included: from then on
    # the other seat sees none of that player's exile (the cards exiled earlier, once public, go with it)
    eliminated = set(st.get("eliminated_players") or []) - {seat}
    exile = [o for o in st.get("exile") or [] if (objects.get(str(o)) or {}).get("owner") not in eliminated]
    return {
        "seat": seat,
        "turn": st.get("turn_number"),
        "phase": phase if phase is not None else st.get("phase"),
        "active_player": st.get("active_player"),
        "priority_player": st.get("priority_player"),
        "players": players,
        "stack": [_stack_entry(e, objects) for e in st.get("stack") or []],
        "exile": [card(o) for o in exile],
        "prompt": {"type": prompt.get("type"), "seats": acting,
                   **({"data": prompt.get("data")} if mine or prompt.get("type") == GAME_OVER else {})},
    }


_CLEANUP_ZONES = {"Battlefield": "battlefield", "Hand": "hand", "Library": "library", "Graveyard": "graveyard"}


def cleanup_moves(events: list) -> dict[int, str]:
    """Object id -> the zone it was in, for each card the engine's end-of-game clean-up moved to exile: the
    ``ZoneChanged`` events to ``Exile`` of the last move (the events of ``Game.apply``) after its ``PlayerLost``;
    a concession has none (it only eliminates the player: every such event of the move is the clean-up)."""
    events = [e for e in events or [] if isinstance(e, dict)]
    lost = next((i for i, e in enumerate(events) if e.get("type") == "PlayerLost"), 0)
    out: dict[int, str] = {}
    for event in events[lost:]:
        data = event.get("data") or {}
        if (event.get("type") == "ZoneChanged" and data.get("to") == "Exile" and data.get("from") in _CLEANUP_ZONES
                and isinstance(data.get("object_id"), int)):
            out[data["object_id"]] = data["from"]
    return out


def restore_before_cleanup(st: dict, events: list) -> dict:
    """A copy of the engine state ``st`` (``Game.state()["state"]``) with the cards the end-of-game clean-up
    exiled (:func:`cleanup_moves` of ``events``) back where they were, and no player eliminated (so their cards
    exiled during the game show again): the final board to display. The objects keep what they had (tapped,
    counters, power); permanents go back in the order they entered (their timestamps)."""
    moved = {oid: zone for oid, zone in cleanup_moves(events).items() if str(oid) in st.get("objects", {})}
    if not moved:
        return dict(st, eliminated_players=[])
    objects = dict(st["objects"])
    for oid, zone in moved.items():
        objects[str(oid)] = dict(objects[str(oid)], zone=zone)
    back = [oid for oid, zone in moved.items() if zone == "Battlefield"]
    battlefield = list(st.get("battlefield") or []) + sorted(back, key=lambda o: objects[str(o)].get("timestamp") or 0)
    players = []
    for p in st["players"]:
        p = dict(p)
        for zone, key in _CLEANUP_ZONES.items():
            if key != "battlefield":
                mine = [oid for oid, z in moved.items() if z == zone and objects[str(oid)].get("owner") == p["id"]]
                if mine:
                    p[key] = list(p.get(key) or []) + mine
        players.append(p)
    exile = [o for o in st.get("exile") or [] if o not in moved]
    return dict(st, objects=objects, battlefield=battlefield, players=players, exile=exile, eliminated_players=[])


def revealed_ids(st: dict) -> set[int]:
    """The ids of the cards revealed in the engine state ``st`` (``Game.state()["state"]``)."""
    revealed = set()
    for key in ("revealed_cards", "public_revealed_cards"):
        value = st.get(key)
        if isinstance(value, list):
            revealed.update(v for v in value if isinstance(v, int))
        elif isinstance(value, dict):
            revealed.update(int(k) for k in value if str(k).isdigit())
    return revealed


def determinize(state: dict | str, observer: int, rng: random.Random) -> dict:
    """A copy of ``state`` with what ``observer`` cannot see re-dealt at random.

    The opponent's hand is redrawn from their hand + library (the same number of cards), each
    library is shuffled, and the engine's random seed is replaced, so a search over this state
    cannot peek at hidden cards. Cards the opponent revealed stay in their hand. The result depends
    only on what ``observer`` can see and ``rng``: the unseen cards are sorted before they are dealt.

    Copy on write: the result shares with ``state`` every part it does not change (the objects that
    stay where they were, the battlefield, the stack...); only the players, the objects moved and the
    containers holding them are new, so ``state`` is never changed and many copies of one parsed
    state cost little (an ensemble deals k of them per decision). Treat the result as read-only
    (``json.dumps`` it, or ``PhaseEngine.load`` it).
    """
    full = json.loads(state) if isinstance(state, str) else state
    st = dict(full["state"])
    objects = dict(st["objects"])
    revealed = revealed_ids(st)
    players = []
    for p in st["players"]:
        p = dict(p)
        library = list(p.get("library") or [])
        if p["id"] != observer:
            hand = list(p.get("hand") or [])
            keep = [o for o in hand if o in revealed]
            # sorted first: the re-deal depends only on which cards are unseen, never on where they are
            pool = sorted([o for o in hand if o not in revealed] + library)
            rng.shuffle(pool)
            new_hand = keep + pool[: len(hand) - len(keep)]
            new_library = pool[len(hand) - len(keep):]
            for zone, ids in (("Hand", new_hand), ("Library", new_library)):
                for oid in ids:
                    obj = objects[str(oid)]
                    if obj.get("zone") != zone:
                        objects[str(oid)] = dict(obj, zone=zone)
            p["hand"], p["library"] = new_hand, new_library
        else:
            library.sort()
            rng.shuffle(library)
            p["library"] = library
        players.append(p)
    st.update(objects=objects, players=players, rng_seed=rng.getrandbits(63), rng_word_pos=0)
    return dict(full, state=st)


class PhaseEngine:
    """phase.rs through phase-python: one loaded card database, many games."""

    name = "phase"

    def __init__(self, card_data: dict | str):
        import phase  # noqa: PLC0415 - optional dependency, loaded when a game is played

        self._phase = phase
        self.card_source = card_data  # worker processes of a root-parallel search rebuild the engine from it
        if isinstance(card_data, dict):
            self.card_keys = set(card_data)
            self._engine = phase.Engine.from_json(json.dumps(card_data))
        else:
            with open(card_data, encoding="utf-8") as fh:
                raw = fh.read()
            self.card_keys = set(json.loads(raw))
            self._engine = phase.Engine.from_json(raw)

    def unknown(self, names: Iterable[str]) -> list[str]:
        return sorted({n for n in names if n.lower() not in self.card_keys})

    def new_game(self, deck_a: Sequence[str], deck_b: Sequence[str], *, seed: int = 0,
                 first_player: int | None = 0, format: str = "Standard") -> Game:
        """Start a game between two main decks (lists of card names, one entry per copy)."""
        missing = self.unknown(list(deck_a) + list(deck_b))
        if missing:
            raise UnknownCards(missing)
        native = _guard(self._engine.new_game, list(deck_a), list(deck_b), seed=int(seed) % (2 ** 63),
                        first_player=first_player, format=format)
        return Game(self, native)

    def replay(self, deck_a: Sequence[str], deck_b: Sequence[str], moves: Iterable[Sequence], *, seed: int,
               first_player: int) -> Game:
        """The game :meth:`new_game` starts, with ``moves`` ([seat, action key], as applied) applied in
        order: the engine is deterministic, so this rebuilds a game whose state it cannot read back.
        A move given as the key of an offered action is applied as offered, any other through
        :meth:`Game.engine_action` (the engine AI's own choices). Raises EngineError (IllegalAction
        for a move the engine refuses)."""
        game = self.new_game(deck_a, deck_b, seed=seed, first_player=first_player)
        for seat, key in moves:
            offered = {a.key: a for a in game.legal_actions(seat)}
            if key in offered:
                game.apply(seat, offered[key])
                continue
            try:
                payload = json.loads(key)
            except (TypeError, ValueError):
                raise IllegalAction(f"a recorded move is not an action's JSON: {str(key)[:100]}") from None
            game.apply(seat, game.engine_action(seat, payload))
        return game

    def load(self, state: dict | str) -> Game:
        """Resume a game from ``Game.state()`` (a dict or its JSON text)."""
        if isinstance(state, str):
            try:
                state = json.loads(state)
            except json.JSONDecodeError as exc:
                raise BadState(f"the game state is not JSON: {exc}") from None
        if not isinstance(state, dict) or not isinstance(state.get("state"), dict):
            raise BadState("a game state is the engine's JSON object with a 'state' key")
        state = repair_state(state)
        try:
            native = _guard(self._engine.load_game, state)
        except (ValueError, TypeError, KeyError) as exc:
            raise BadState(f"the engine cannot load this state: {str(exc)[:300]}") from None
        return Game(self, native)
