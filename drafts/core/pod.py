"""A draft pod: seats passing packs, with people and bots at their own pace (pure: no Django).

Rules (as in the 17Lands logs, numbers 0-based):

* ``seats`` players (2..8) open ``packs`` packs each (3 by default). Packs pass left, seat ``i`` to
  seat ``i+1 mod n``, in pack_number 0 and 2, and right in pack_number 1 (alternating for more).
* People are slower than bots, so each seat has a queue of packs waiting for it. The head of the
  queue is the seat's current pack; after a pick the rest of that pack joins the end of the
  neighbour's queue (an empty pack is dropped). A seat with an empty queue waits. Because every
  seat takes its packs in arrival order, a seat's ``pick_number`` (picks made this round) always
  equals the number of cards already taken from its current pack.
* A round ends when every pack of the round is empty; then every seat opens its next pack.

Reproducibility: all ``packs x seats`` packs are opened when the pod is made, from one
``numpy.random.default_rng(seed)``, by a single ``collation.open_packs(rng, seats * packs)`` call
whose packs are assigned round by round, seat by seat (pack ``r * seats + s`` is the one seat ``s``
opens in round ``r``); a single call lets a cube deal every card at most once per draft. The same
seed, set list and collation therefore give the same packs, and the same picks give the same pod.

Persistence: :meth:`DraftPod.to_state` stores the opened packs and the picks in the order they
were made (with the bots' scores). :meth:`DraftPod.from_state` replays them, which rebuilds the
queues, pools and history exactly and re-validates every pick, so a damaged state cannot load as
a silently different draft. Replaying a full pod takes about a millisecond.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import asdict, dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from drafts.bots.base import DraftBot, PickContext
from drafts.core.cards import DraftError, SetList
from drafts.core.collation import BoosterCollation

STATE_VERSION = 1
MIN_SEATS, MAX_SEATS = 2, 8
Scores = tuple[tuple[str, float], ...]


def pass_direction(pack_number: int) -> int:
    """+1 (to the left, seat i -> i+1) for pack_number 0 and 2; -1 (right) for pack_number 1."""
    return 1 if pack_number % 2 == 0 else -1


@dataclass(frozen=True)
class PickRecord:
    """One pick as the drafter saw it: the pack and pool *before* the pick (17Lands' convention)."""

    seat: int
    pack_number: int
    pick_number: int
    pack: tuple[str, ...]
    pool: tuple[str, ...]
    pick: str
    scores: Scores | None = None  # the bot's ranking (best first) when a bot made the pick

    def as_dict(self) -> dict:
        """Plain JSON-ready form (lists instead of tuples), e.g. for a template or the plots."""
        out = asdict(self)
        out["pack"], out["pool"] = list(self.pack), list(self.pool)
        out["scores"] = None if self.scores is None else [[n, s] for n, s in self.scores]
        return out


class DraftPod:
    """The pod engine. See the module docstring for the passing rules and reproducibility.

    ``collation`` is any object with ``open_packs(rng, n) -> list[list[str]]`` (default: a
    :class:`BoosterCollation` of the set's booster kind; ``pack_size`` is passed to it for cubes).
    """

    def __init__(self, set_list: SetList, seats: int = 8, packs: int = 3, seed: int | None = 0,
                 collation: BoosterCollation | None = None, pack_size: int | None = None):
        if collation is None:
            collation = BoosterCollation(set_list, pack_size=pack_size)
        elif pack_size is not None and getattr(collation, "pack_size", pack_size) != pack_size:
            raise DraftError(f"pack_size={pack_size} disagrees with the collation's {collation.pack_size}")
        self._check_shape(seats, packs)
        opened = collation.open_packs(np.random.default_rng(seed), seats * packs)
        if len(opened) != seats * packs:
            raise DraftError(f"the collation opened {len(opened)} packs; {seats * packs} were asked for")
        self._setup(set_list, seats, packs, seed, getattr(collation, "variant", None), opened)

    @staticmethod
    def _check_shape(seats: int, packs: int) -> None:
        if not isinstance(seats, (int, np.integer)) or not MIN_SEATS <= seats <= MAX_SEATS:
            raise DraftError(f"a pod has {MIN_SEATS} to {MAX_SEATS} seats, not {seats}")
        if not isinstance(packs, (int, np.integer)) or packs < 1:
            raise DraftError(f"a draft needs at least 1 pack per seat, not {packs}")

    def _setup(self, set_list: SetList, seats: int, packs: int, seed, variant, opened: Sequence[Sequence[str]]):
        self.set_list = set_list
        self.seats, self.packs, self.seed, self.variant = int(seats), int(packs), seed, variant
        self._opened: tuple[tuple[str, ...], ...] = tuple(tuple(p) for p in opened)  # kept for to_state
        if any(not p for p in self._opened):
            raise DraftError("every opened pack must hold at least one card")
        self._round_sizes = [max(len(p) for p in self._opened[r * seats:(r + 1) * seats]) for r in range(packs)]
        self._queues: list[deque[list[str]]] = [deque() for _ in range(seats)]
        self._pools: list[list[str]] = [[] for _ in range(seats)]
        self._history: list[list[PickRecord]] = [[] for _ in range(seats)]
        self._log: list[PickRecord] = []  # every pick, in the order made (what to_state stores)
        self._picked = [0] * seats  # picks made by each seat in the current round
        self._round = -1
        self._left_in_round = 0
        self._start_round(0)

    def _start_round(self, number: int) -> None:
        self._round = number
        if number >= self.packs:
            return  # complete
        self._picked = [0] * self.seats
        for seat in range(self.seats):
            pack = list(self._opened[number * self.seats + seat])
            self._queues[seat].append(pack)
        self._left_in_round = sum(len(q[0]) for q in self._queues)

    # -- queries -------------------------------------------------------------------------------

    @property
    def is_complete(self) -> bool:
        return self._round >= self.packs

    @property
    def pack_number(self) -> int:
        """The current round, 0-based (the last round once the draft is complete)."""
        return min(self._round, self.packs - 1)

    @property
    def picks_per_pack(self) -> int:
        """Cards in a pack of the current round (14 for a Play Booster)."""
        return self._round_sizes[self.pack_number]

    def _seat(self, seat: int) -> int:
        if not isinstance(seat, (int, np.integer)) or not 0 <= seat < self.seats:
            raise DraftError(f"no seat {seat!r} in a pod of {self.seats} (seats are 0..{self.seats - 1})")
        return int(seat)

    def pick_number(self, seat: int) -> int:
        """Picks ``seat`` has made this round, i.e. the 0-based number of its next pick."""
        return self._picked[self._seat(seat)]

    def current_pack(self, seat: int) -> list[str] | None:
        """A copy of the pack ``seat`` must pick from now, or None while it waits for one."""
        queue = self._queues[self._seat(seat)]
        return list(queue[0]) if queue else None

    def packs_waiting(self, seat: int) -> int:
        """How many packs are queued for ``seat`` (the current one included)."""
        return len(self._queues[self._seat(seat)])

    def waiting_seats(self) -> list[int]:
        """Seats the pod is waiting on: each holds at least one pack and may pick now."""
        return [s for s in range(self.seats) if self._queues[s]]

    def pool(self, seat: int) -> list[str]:
        """The cards ``seat`` has picked, in pick order."""
        return list(self._pools[self._seat(seat)])

    def history(self, seat: int) -> list[PickRecord]:
        return list(self._history[self._seat(seat)])

    def records(self) -> list[PickRecord]:
        """Every pick of the pod in the order it was made."""
        return list(self._log)

    def context(self, seat: int, **extra) -> PickContext:
        """The :class:`PickContext` for ``seat``'s next pick (what a bot is given)."""
        seat = self._seat(seat)
        return PickContext(set_list=self.set_list, pack_number=self.pack_number, pick_number=self._picked[seat],
                           packs=self.packs, picks_per_pack=self.picks_per_pack, seat=seat, seats=self.seats,
                           extra=extra)

    # -- picking -------------------------------------------------------------------------------

    def pick(self, seat: int, card: str, pack_number: int | None = None, pick_number: int | None = None,
             scores: Sequence[tuple[str, float]] | None = None) -> PickRecord:
        """Take ``card`` from ``seat``'s current pack and pass the rest on.

        ``pack_number``/``pick_number`` (0-based), when given, must be the seat's current ones: a
        web client sends what it showed, so a double-submitted or delayed pick is refused as stale
        instead of landing on the next pack. ``scores`` (a bot's ranking) is kept in the record.
        """
        seat = self._seat(seat)
        if self.is_complete:
            raise DraftError("the draft is complete: no more picks")
        queue = self._queues[seat]
        expected_pack, expected_pick = self._round, self._picked[seat]
        if not queue:
            if expected_pick >= self.picks_per_pack:
                raise DraftError(f"pick out of turn: seat {seat} has made all its picks of pack {expected_pack + 1}; "
                                 "the next pack opens when every seat has finished this one")
            raise DraftError(f"pick out of turn: seat {seat} has no pack yet "
                             f"(waiting for pack {expected_pack + 1} pick {expected_pick + 1})")
        if (pack_number is not None and pack_number != expected_pack) or \
                (pick_number is not None and pick_number != expected_pick):
            raise DraftError(f"stale pick: expected pack {expected_pack + 1} pick {expected_pick + 1} "
                             f"(pack_number={expected_pack}, pick_number={expected_pick}), got "
                             f"pack_number={pack_number}, pick_number={pick_number}")
        pack = queue[0]
        if card not in pack:
            raise DraftError(f"{card} is not in the pack of seat {seat} "
                             f"(pack {expected_pack + 1} pick {expected_pick + 1})")
        record = PickRecord(seat=seat, pack_number=expected_pack, pick_number=expected_pick, pack=tuple(pack),
                            pool=tuple(self._pools[seat]), pick=card,
                            scores=None if scores is None else tuple((str(n), float(s)) for n, s in scores))
        pack.remove(card)
        queue.popleft()
        if pack:
            self._queues[(seat + pass_direction(expected_pack)) % self.seats].append(pack)
        self._pools[seat].append(card)
        self._history[seat].append(record)
        self._log.append(record)
        self._picked[seat] += 1
        self._left_in_round -= 1
        if self._left_in_round == 0:
            self._start_round(self._round + 1)
        return record

    # -- persistence ---------------------------------------------------------------------------

    def to_state(self) -> dict:
        """A JSON-serialisable snapshot: the opened packs and the picks in order (see module doc).

        Non-finite bot scores are stored as the strings ``"inf"``, ``"-inf"``, ``"nan"`` so the
        state is valid JSON for PostgreSQL's jsonb, and read back as the same floats.
        """
        return {
            "version": STATE_VERSION,
            "set": self.set_list.code,
            "seats": self.seats,
            "packs": self.packs,
            "seed": None if self.seed is None else int(self.seed),
            "variant": self.variant,
            "opened": [list(p) for p in self._opened],
            "picks": [[r.seat, r.pick, None if r.scores is None else [[n, _encode(s)] for n, s in r.scores]]
                      for r in self._log],
        }

    @classmethod
    def from_state(cls, set_list: SetList, state: Mapping) -> "DraftPod":
        """Rebuild a pod saved with :meth:`to_state` by replaying its picks (each one re-checked)."""
        try:
            version, code = state["version"], state["set"]
            seats, packs, opened, picks = int(state["seats"]), int(state["packs"]), state["opened"], state["picks"]
        except (KeyError, TypeError, ValueError) as exc:
            raise DraftError(f"not a draft pod state ({exc!r})") from exc
        if version != STATE_VERSION:
            raise DraftError(f"draft state version {version} is not supported (expected {STATE_VERSION})")
        if code != set_list.code:
            raise DraftError(f"the state is a {code} draft, not {set_list.code}")
        cls._check_shape(seats, packs)
        if len(opened) != seats * packs:
            raise DraftError(f"the state holds {len(opened)} packs; {seats} seats x {packs} packs need {seats * packs}")
        pod = cls.__new__(cls)
        pod._setup(set_list, seats, packs, state.get("seed"), state.get("variant"), opened)
        for number, entry in enumerate(picks):
            try:
                seat, card, scores = entry
            except (TypeError, ValueError):
                raise DraftError(f"pick {number} of the state is not [seat, card, scores]: {entry!r}") from None
            pod.pick(seat, card, scores=None if scores is None else [(n, _decode(s)) for n, s in scores])
        return pod


def _encode(x: float):
    return x if math.isfinite(x) else repr(x)


def _decode(x) -> float:
    return float(x)


# -- bots ------------------------------------------------------------------------------------------

Bots = Mapping[int, DraftBot] | Sequence[DraftBot | None]


def _bot_seats(pod: DraftPod, bots: Bots) -> dict[int, DraftBot]:
    items = bots.items() if isinstance(bots, Mapping) else enumerate(bots)
    out = {}
    for seat, bot in items:
        if bot is not None:
            out[pod._seat(seat)] = bot
    return out


def bot_pick(pod: DraftPod, seat: int, bot: DraftBot) -> PickRecord:
    """Let ``bot`` make ``seat``'s next pick: its top-ranked card, with its ranking kept as scores."""
    pack = pod.current_pack(seat)
    if pack is None:
        raise DraftError(f"pick out of turn: seat {seat} has no pack for its bot")
    ranking = bot.pick(pack, pod.pool(seat), pod.context(seat))
    if not ranking or ranking[0][0] not in pack:
        top = ranking[0][0] if ranking else None
        raise DraftError(f"bot {getattr(bot, 'name', bot)!r} at seat {seat} chose {top!r}, which is not in its pack")
    return pod.pick(seat, ranking[0][0], scores=ranking)


def step_bots(pod: DraftPod, bots: Bots, on_pick: Callable[[PickRecord], None] | None = None) -> list[PickRecord]:
    """One simultaneous step: every bot seat that holds a pack now makes one pick, in seat order.

    Returns the records of the picks made (empty when no bot can pick: the pod is complete or waits
    only on seats without a bot). A shell that wants bots to catch up fully calls :func:`simulate`.
    """
    seats = _bot_seats(pod, bots)
    records = []
    for seat in [s for s in pod.waiting_seats() if s in seats]:
        if pod.is_complete:
            break
        record = bot_pick(pod, seat, seats[seat])
        records.append(record)
        if on_pick is not None:
            on_pick(record)
    return records


def simulate(pod: DraftPod, bots: Bots, on_pick: Callable[[PickRecord], None] | None = None) -> DraftPod:
    """Run bot picks until the pod is complete or every seat that can pick has no bot.

    ``bots`` maps seats to bots (a dict, or a list indexed by seat with None for people). With a
    bot at every seat this drafts the whole pod. Returns ``pod`` (changed in place).
    """
    seats = _bot_seats(pod, bots)
    while step_bots(pod, seats, on_pick):
        pass
    return pod


__all__ = ["DraftPod", "PickRecord", "bot_pick", "pass_direction", "simulate", "step_bots"]
