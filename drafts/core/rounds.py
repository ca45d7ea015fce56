"""Play your pod: the small Swiss that pairs a person's rounds against the bots' decks (pure: no Django).

A finished pod's people each play ``ROUNDS`` best-of-one rounds against the bots' auto-built decks. Only
games with a person in them are played (the bots do not play each other here), so a bot's record is
its results against the pod's people. Each round pairs the person with the bot whose record is nearest
their own (wins, then losses), a bot they have not met yet when one is left; ties go to the bot seated
furthest from them (as a Swiss's first round pairs across the table), then to the lower seat.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

ROUNDS = 3


@dataclass(frozen=True)
class Record:
    wins: int = 0
    losses: int = 0

    def add(self, won: bool) -> "Record":
        return Record(self.wins + bool(won), self.losses + (not won))


def records(results: Sequence[tuple[int, int, bool]]) -> dict[int, Record]:
    """Every seat's record from finished games ``(person seat, bot seat, person won)``."""
    out: dict[int, Record] = {}
    for person, bot, won in results:
        out[person] = out.get(person, Record()).add(won)
        out[bot] = out.get(bot, Record()).add(not won)
    return out


def _distance(a: int, b: int, seats: int) -> int:
    d = abs(a - b) % seats
    return min(d, seats - d)


def swiss_opponent(me: int, bots: Sequence[int], seats: int, table: Mapping[int, Record],
                   met: Sequence[int]) -> int:
    """The bot seat ``me`` plays next: the nearest record among the bots not met yet (all of them again
    once every bot has been met), then the furthest seat, then the lowest. ``ValueError`` without bots."""
    if not bots:
        raise ValueError("a pod without bots has no decks to play against")
    fresh = [b for b in bots if b not in met] or list(bots)
    mine = table.get(me, Record())

    def key(bot: int):
        theirs = table.get(bot, Record())
        return (abs(mine.wins - theirs.wins), abs(mine.losses - theirs.losses), -_distance(me, bot, seats), bot)

    return min(fresh, key=key)


def cards_drawn(state: dict, seat: int, deck: Mapping[str, int], board: dict | None = None) -> dict[str, int]:
    """The cards of ``deck`` that left ``seat``'s library during a game (opening hand included), by name.

    ``state`` is the engine's final JSON state; ``board`` the seat's observation of the board as it stood when
    the game ended (``PlayedGame.final_board``): the engine's end-of-game clean-up exiles the loser's cards,
    library included, so a loser's cards are read from ``board`` (hand, graveyard, battlefield, exile) and
    their names and owners from ``state``. Without ``board``, every object the seat owns outside its library
    counts. Tokens and cards not in the deck are left out, at most the deck's count of each."""
    st = state.get("state", state) if isinstance(state, dict) else {}
    objects = st.get("objects") or {}
    if board:
        ids = {c.get("id") for c in board.get("exile") or [] if isinstance(c, dict)}
        for p in board.get("players") or []:
            for key in ("hand", "graveyard", "battlefield"):
                ids.update(c.get("id") for c in p.get(key) or [] if isinstance(c, dict))
        chosen = [objects.get(str(i)) for i in ids if i is not None]
    else:
        chosen = [o for o in objects.values() if isinstance(o, dict) and o.get("zone") != "Library"]
    out: dict[str, int] = {}
    for obj in chosen:
        if not isinstance(obj, dict) or obj.get("owner") != seat or obj.get("is_token"):
            continue
        name = obj.get("name")
        if name in deck and out.get(name, 0) < deck[name]:
            out[name] = out.get(name, 0) + 1
    return out
