"""The online draft protocol: what a client may send, what each seat may be told (pure: no Django).

Every message is a JSON object with the protocol version ``v`` (see docs/websockets.md). The
shell parses client text with :func:`parse_client_message` and builds replies with
:func:`seat_view` (private: one seat's pack and pool) and :func:`public_status` (what every
socket of the pod may see: names, pick counts, who is still picking, never a card).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from common import wire
from drafts.core.cards import DraftError, SetList
from drafts.core.pod import DraftPod, pass_direction
from drafts.core.simratings import for_cards, sim_label

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 4096
CLIENT_PICK_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
ACTIONS = ("pick", "sync", "start", "ping")


ProtocolError = wire.ProtocolError  # the envelope checks are shared with the draft pods


@dataclass(frozen=True)
class ClientMessage:
    action: str
    card: str | None = None
    pack_number: int | None = None
    pick_number: int | None = None
    client_pick_id: str | None = None


def _int_field(message: Mapping, key: str) -> int:
    value = message.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 100:
        raise ProtocolError(f"'{key}' must be a whole number (0-based), got {value!r}")
    return value


def parse_client_message(text: str | bytes | None) -> ClientMessage:
    """Validate one message from a drafting client. Raises :class:`ProtocolError` with a clear reason.

    * ``{"v": 1, "action": "pick", "card": str, "pack_number": int, "pick_number": int,
      "client_pick_id": str}`` takes a card (numbers are 0-based and must be the seat's current ones;
      the client pick id makes a resend harmless);
    * ``{"v": 1, "action": "sync"}`` asks for the seat's view and the pod status again;
    * ``{"v": 1, "action": "start"}`` starts the draft (the host only);
    * ``{"v": 1, "action": "ping"}`` is answered with ``pong``.
    """
    message = wire.decode_message(text, version=PROTOCOL_VERSION, actions=ACTIONS, max_chars=MAX_MESSAGE_BYTES)
    action = message["action"]
    if action != "pick":
        return ClientMessage(action=action)
    card = message.get("card")
    if not isinstance(card, str) or not card.strip() or len(card) > 200:
        raise ProtocolError("'card' must be the name of a card in your pack")
    client_pick_id = message.get("client_pick_id")
    if not isinstance(client_pick_id, str) or not CLIENT_PICK_ID.match(client_pick_id):
        raise ProtocolError("'client_pick_id' must be 1-64 letters, digits or _.:- (make one per pick and reuse it "
                            "when you resend that pick)")
    return ClientMessage(action="pick", card=card.strip(), pack_number=_int_field(message, "pack_number"),
                         pick_number=_int_field(message, "pick_number"), client_pick_id=client_pick_id)


def message(kind: str, **payload) -> dict:
    return {"v": PROTOCOL_VERSION, "type": kind, **payload}


def card_facts(s: SetList, name: str) -> dict:
    """What the drafting page shows for a card: name, cost, type, colours, rarity, mana value."""
    try:
        card = s.card(name)
    except (DraftError, KeyError):
        return {"name": name, "cost": "", "type": "", "colors": "", "rarity": "", "mv": 0}
    return {"name": card.name, "cost": card.mana_cost, "type": card.types, "colors": card.colors,
            "rarity": card.rarity, "mv": card.mana_value}


@dataclass(frozen=True)
class SeatKey:
    """A seat's position in the draft: changes exactly when its pack or pool changes."""

    complete: bool
    pack_number: int
    pick_number: int
    pack: tuple[str, ...] | None
    waiting: int


def seat_key(pod: DraftPod, seat: int) -> SeatKey:
    pack = pod.current_pack(seat)
    return SeatKey(pod.is_complete, pod.pack_number, pod.pick_number(seat), None if pack is None else tuple(pack),
                   pod.packs_waiting(seat))


def seat_view(pod: DraftPod, seat: int, deadline: float | None = None,
              suggestions: Sequence[tuple[str, float]] | None = None,
              sim_ratings: Mapping[str, Mapping] | None = None) -> dict:
    """The private view of one seat: its current pack (or None while it waits), its pool, the numbers
    to send back with a pick, the pick deadline (epoch seconds), the bot's ranked suggestions and ``sim``: the
    simulated pods' ratings (``drafts.core.simratings``) of the cards of this seat's pack only, with their label."""
    s = pod.set_list
    pack = pod.current_pack(seat)
    pool = pod.pool(seat)
    return message(
        "seat", seat=seat, complete=pod.is_complete, pack_number=pod.pack_number, pick_number=pod.pick_number(seat),
        packs=pod.packs, picks_per_pack=pod.picks_per_pack,
        pass_direction="left" if pass_direction(pod.pack_number) > 0 else "right",
        pack=None if pack is None else [card_facts(s, n) for n in pack],
        pool=[card_facts(s, n) for n in pool],
        packs_waiting=pod.packs_waiting(seat), deadline=deadline,
        suggestions=None if suggestions is None or pack is None
        else [[n, round(float(v), 4)] for n, v in suggestions],
        sim={} if pack is None or not sim_ratings
        else {n: {**r, "label": sim_label(r)} for n, r in for_cards(sim_ratings, pack).items()},
    )


def public_status(pod: DraftPod | None, seats: Sequence[Mapping], status: str, host_seat: int | None = None) -> dict:
    """What every socket of the pod may see. ``seats`` rows are ``{"seat", "name", "kind" ("human" |
    "bot" | "open"), "connected"}``. Pick counts and packs waiting per seat; no card names."""
    rows = []
    for row in seats:
        seat = int(row["seat"])
        out = {"seat": seat, "name": row.get("name") or "", "kind": row.get("kind", "open"),
               "connected": bool(row.get("connected", False))}
        if pod is not None:
            out["picks"] = len(pod.history(seat))
            out["packs_waiting"] = pod.packs_waiting(seat)
        rows.append(out)
    payload = {"status": status, "seats": rows, "host_seat": host_seat}
    if pod is not None:
        payload.update(pack_number=pod.pack_number, packs=pod.packs, picks_per_pack=pod.picks_per_pack,
                       pass_direction="left" if pass_direction(pod.pack_number) > 0 else "right",
                       complete=pod.is_complete, picking=pod.waiting_seats())
    return message("status", **payload)


__all__ = ["ClientMessage", "PROTOCOL_VERSION", "ProtocolError", "SeatKey", "card_facts", "message",
           "parse_client_message", "public_status", "seat_key", "seat_view"]
