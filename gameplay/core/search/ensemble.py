"""The ensemble: the engine's own search asked on k honest copies of a decision, its choice taken by vote.

phase-python 0.103's AI at a level (``Game.choose_action``) is a depth-limited beam / alpha-beta search with
rollouts that picks by a softmax at temperature 0.3 over its scored actions, drawn from a generator seeded with
the state's ``rng_seed``: about a fifth of VeryHard's choices flip with the seed alone (docs/game-advice.md). The
ensemble asks it on ``copies`` honest copies of what the seat can see (``determinize``: the other hand and both
libraries re-dealt, a fresh engine seed each: perfect-information Monte Carlo, as GIB did for bridge, and the
ensemble determinization Cowling, Ward & Powley found best for Magic), and takes the action most copies chose.
That removes the temperature's noise and averages over the hidden cards.

It spends copies where they matter: the copies are asked ``workers`` at a time (the engine releases the GIL
while it searches, so threads use every core); it stops once ``settle`` copies all agree, or once the leader
cannot be caught by the copies left, or (``EnsembleConfig.seconds``, a wall budget) once another batch as slow
as the slowest so far would overrun the budget, but never before ``min_copies`` copies were counted (or every
copy asked: the ones the engine refuses do not count), so a vote never rests on two copies. Under a wall budget
the first ``min_copies`` copies are asked at once: the engine's search stops at its own 1.5 s wall-clock cap, so
two batches of two each at the cap took twice that (a loaded machine, a second game advising), one batch of four
takes it once, each search getting less of the CPU instead; without a budget (the benches' ensemble players)
batches stay ``workers`` wide, never more searches at once than asked for. Ties go to the engine's evaluation of the position after each tied
action (on the first copy; or, ``tie_break="copies"``, its mean over the copies that chose it, taken as they were
asked, which costs no load). Equivalent actions (two copies of one card in hand) are one candidate
(``search.pruning.signature``).

Copies are dealt copy-on-write from the one state read per decision (``determinize``) and loaded from that.
A copy the engine refuses (it cannot read back some states it wrote) is counted; when the first copy is
refused the decision falls back to one call on the real game, counted with its reason (``EnsembleStats``),
never silent. A copy's choice that names a card the seat cannot see is discarded and counted. A call that
ran into the engine's 1.5 s wall-clock cap (a loaded machine makes the search shallower) is counted as cut off.

Pure: no Django; imports the engine adapter, ``engine.honest`` and ``search.pruning`` only.
"""
from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from gameplay.core.engine.adapter import ENGINE_LEVELS, Action, EngineError, Game, determinize
from gameplay.core.engine.honest import hidden_ids, to_real_action
from gameplay.core.search.pruning import ObjectLookup, signature

# phase-ai's levels stop their search after 1.5 s of wall-clock time; a call at least this long was cut off
ENGINE_CAP_SECONDS = 1.45


@dataclass(frozen=True)
class EnsembleConfig:
    """How many copies, at which engine level, and when to stop early."""

    level: str = "VeryHard"     # the engine AI asked on each copy
    copies: int = 8             # at most this many honest copies a decision
    settle: int = 4             # stop once this many copies all chose the same action
    workers: int = 2            # copies asked at once (threads: the engine's search releases the GIL)
    seconds: float | None = None  # wall budget: no new batch starts when the slowest one so far would overrun it
    min_copies: int = 4         # copies counted before the wall budget may stop the vote (at most ``copies``)
    first_batch: int | None = None  # copies asked at once in the first batch; None: ``min_copies`` under a wall
                                    # budget (wider than ``workers``), else ``workers``. A bench that must never run
                                    # more engine searches at once than cores sets it to ``workers``
    tie_break: str = "evaluate"   # "evaluate": the engine's evaluation after each tied action, on the first copy
                                  # (a load per tied action); "copies": its mean over the copies that chose it,
                                  # evaluated as they were asked (no extra load)

    def __post_init__(self):
        if self.level not in ENGINE_LEVELS:
            raise ValueError(f"level must be one of {', '.join(ENGINE_LEVELS)}, not {self.level!r}")
        if self.copies < 1 or self.settle < 1 or self.workers < 1 or self.min_copies < 1:
            raise ValueError("copies, settle, workers and min_copies must be at least 1")
        if self.first_batch is not None and self.first_batch < 1:
            raise ValueError("first_batch must be at least 1 (or None)")
        if self.seconds is not None and self.seconds <= 0:
            raise ValueError("seconds must be positive (or None: no wall budget)")
        if self.tie_break not in ("evaluate", "copies"):
            raise ValueError(f"tie_break must be 'evaluate' or 'copies', not {self.tie_break!r}")

    @property
    def name(self) -> str:
        return f"ensemble:{self.level}:{self.copies}"


@dataclass
class Vote:
    """One decision's ensemble: the chosen action (of the real game), each candidate's votes, and what it cost."""

    action: Action | None
    ballots: list[dict]                 # per candidate, most votes first: label, key, votes, share
    copies: int = 0                     # copies whose choice counted
    forced: bool = False                # one distinct action: nothing asked
    fallback: str | None = None         # why the real game decided (no copy could be loaded), else None
    refused: int = 0                    # copies the engine would not load
    discarded: int = 0                  # choices naming a card the seat cannot see
    cut_off: int = 0                    # engine calls that hit its wall-clock cap
    tie_break: bool = False             # the leaders tied and the engine's evaluation chose
    seconds: float = 0.0                # wall clock
    out_of_time: bool = False           # copies were left unasked because of ``EnsembleConfig.seconds``
    engine_seconds: float = 0.0         # summed wall clock of the engine's calls (its work over all threads)
    states: list[dict] = field(default_factory=list, repr=False)  # the copies asked (a search may reuse them)
    # per copy asked (as in ``states``), the engine's evaluation of it for the seat and for the other seat
    evaluations: list[tuple[float, float]] = field(default_factory=list, repr=False)

    @property
    def split(self) -> bool:
        """More than one candidate got votes: the copies disagree, so the decision is worth searching."""
        return sum(1 for b in self.ballots if b["votes"]) > 1

    def share(self, key: str) -> float:
        return next((b["share"] for b in self.ballots if b["key"] == key), 0.0)

    def to_dict(self) -> dict:
        return {"action": self.action.to_dict() if self.action else None, "ballots": [dict(b) for b in self.ballots],
                "copies": self.copies, "forced": self.forced, "split": self.split, "fallback": self.fallback,
                "refused": self.refused, "discarded": self.discarded, "cut_off": self.cut_off,
                "tie_break": self.tie_break, "out_of_time": self.out_of_time, "seconds": round(self.seconds, 4),
                "engine_seconds": round(self.engine_seconds, 4)}


@dataclass
class EnsembleStats:
    """Totals over one caller's decisions (what a bench or a game's advice reports)."""

    decisions: int = 0
    forced: int = 0
    unanimous: int = 0
    split: int = 0
    copies: int = 0
    fallbacks: int = 0
    refused: int = 0
    discarded: int = 0
    cut_off: int = 0
    tie_breaks: int = 0
    reasons: Counter = field(default_factory=Counter)

    def add(self, vote: Vote) -> None:
        self.decisions += 1
        if vote.forced:
            self.forced += 1
            return
        self.copies += vote.copies
        self.refused += vote.refused
        self.discarded += vote.discarded
        self.cut_off += vote.cut_off
        self.tie_breaks += vote.tie_break
        if vote.fallback:
            self.fallbacks += 1
            self.reasons[vote.fallback[:80]] += 1
        elif vote.split:
            self.split += 1
        else:
            self.unanimous += 1

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in ("decisions", "forced", "unanimous", "split", "copies", "fallbacks",
                                             "refused", "discarded", "cut_off", "tie_breaks")}
        out["reasons"] = dict(self.reasons)
        return out


_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def _pool(workers: int) -> ThreadPoolExecutor:
    with _pools_lock:
        pool = _pools.get(workers)
        if pool is None:
            pool = _pools[workers] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ensemble")
        return pool


def _ask(engine, state: dict, seat: int, level: str, seed: int, after: bool = False) -> tuple:
    """One copy: dealt from ``state`` with ``seed``, loaded, asked. Returns (copy state, choice or None,
    seconds of the engine's call, the engine's evaluation of the copy for ``seat`` and for the other seat or None,
    with ``after`` its
    evaluation once the choice is played on the copy or None) or (None, the EngineError, 0.0, None, None) when the
    engine refuses the copy."""
    copy = determinize(state, seat, random.Random(seed))
    try:
        game = engine.load(copy)
        try:
            value = (game.evaluate(seat), game.evaluate(1 - seat))
        except EngineError:
            value = None
        started = time.perf_counter()
        chosen = game.ai_action(seat, level)
        seconds = time.perf_counter() - started
    except EngineError as exc:
        return None, exc, 0.0, None, None
    played = None
    if after and chosen is not None:
        try:
            game.apply(seat, chosen)
            played = game.evaluate(seat)
        except (EngineError, ValueError, TypeError):
            played = None
    return copy, chosen, seconds, value, played


def _candidates(game: Game, legal: list[Action]) -> tuple[ObjectLookup, dict[str, Action], dict[str, str]]:
    """The position's distinct actions: signature -> the first listed action, and each action key -> signature."""
    lookup = ObjectLookup(game)
    by_sig: dict[str, Action] = {}
    sig_of: dict[str, str] = {}
    for action in legal:
        sig = signature(action, lookup)
        by_sig.setdefault(sig, action)
        sig_of[action.key] = sig
    return lookup, by_sig, sig_of


def _tie_break(engine, state: dict, seat: int, tied: list[Action]) -> Action:
    """The tied action after which the engine's evaluation of ``state`` (a copy) is best for ``seat``."""
    best, best_value = tied[0], None
    for action in tied:
        try:
            copy = engine.load(state)
            copy.apply(seat, copy.engine_action(seat, json.loads(action.key)))
            value = copy.evaluate(seat)
        except (EngineError, ValueError, TypeError):
            continue
        if best_value is None or value > best_value:
            best, best_value = action, value
    return best


def _ballots(votes: Counter, first_choice: dict[str, Action], by_sig: dict[str, Action]) -> list[dict]:
    """Each candidate's votes and share, most votes first, then the candidates no copy chose (share 0)."""
    total = max(1, sum(votes.values()))
    ballots = [{"key": first_choice.get(s, by_sig.get(s)).key, "label": first_choice.get(s, by_sig.get(s)).label,
                "votes": n, "share": round(n / total, 4)} for s, n in votes.most_common()]
    named = {b["key"] for b in ballots}
    return ballots + [{"key": a.key, "label": a.label, "votes": 0, "share": 0.0} for s, a in by_sig.items()
                      if s not in votes and a.key not in named]


def ensemble_vote(game: Game, seat: int, config: EnsembleConfig, rng: random.Random, *,
                  stats: EnsembleStats | None = None, legal: list[Action] | None = None,
                  on_batch: Callable[[Vote], None] | None = None) -> Vote:
    """The ensemble's choice for ``seat`` in ``game`` (never changed): see the module's docstring. ``rng`` deals
    the copies (``config.copies`` seeds are drawn from it whatever the early stop, so a caller's stream does not
    depend on how the votes fell). ``stats`` adds this decision to a caller's totals. ``on_batch`` is called with
    the vote so far (``action`` the leader, ``ballots`` the votes counted) after each batch of ``workers`` copies;
    an exception it raises stops the vote (a caller's cancel)."""
    started = time.perf_counter()
    legal = legal if legal is not None else game.legal_actions(seat)
    seeds = [rng.getrandbits(63) for _ in range(config.copies)]
    lookup, by_sig, sig_of = _candidates(game, legal) if len(legal) > 1 else (None, {}, {})
    if len(legal) <= 1 or len(by_sig) == 1:
        action = legal[0] if legal else None
        vote = Vote(action, [{"key": action.key, "label": action.label, "votes": 0, "share": 1.0}] if action else [],
                    forced=True, seconds=time.perf_counter() - started)
        if stats is not None:
            stats.add(vote)
        return vote
    engine = game.engine
    state = game.state()
    hidden = hidden_ids(state, seat)
    votes: Counter = Counter()
    first_choice: dict[str, Action] = {}  # signature -> the real game's action the copies named first
    played_values: dict[str, list[float]] = {}  # signature -> evaluations after it on the copies that chose it
    vote = Vote(None, [])
    floor = min(config.min_copies, config.copies)  # copies counted before the wall budget may stop the vote
    first = config.first_batch or (max(config.workers, floor) if config.seconds is not None else config.workers)
    pool = _pool(first)
    asked = 0
    slowest = 0.0
    while asked < config.copies:
        if (config.seconds is not None and asked and sum(votes.values()) >= floor
                and time.perf_counter() - started + slowest > config.seconds):
            vote.out_of_time = True
            break
        batch_started = time.perf_counter()
        batch = seeds[asked:asked + (first if not asked else config.workers)]
        asked += len(batch)
        after = config.tie_break == "copies"
        for copy, chosen, seconds, value, played in pool.map(
                lambda s: _ask(engine, state, seat, config.level, s, after), batch):
            if copy is None:
                vote.refused += 1
                continue
            vote.states.append(copy)
            vote.evaluations.append(value)
            vote.engine_seconds += seconds
            vote.cut_off += seconds >= ENGINE_CAP_SECONDS
            action, _ = to_real_action(game, seat, chosen, legal, hidden)
            if action is None:
                vote.discarded += chosen is not None
                continue
            sig = sig_of.get(action.key) or signature(action, lookup)
            votes[sig] += 1
            first_choice.setdefault(sig, action)
            if played is not None:
                played_values.setdefault(sig, []).append(played)
        slowest = max(slowest, time.perf_counter() - batch_started)
        if not vote.states:
            break  # the first copies were refused: the others would be too (the state, not the deal)
        if on_batch is not None and votes:
            vote.copies = sum(votes.values())
            vote.ballots = _ballots(votes, first_choice, by_sig)
            vote.action = first_choice[votes.most_common(1)[0][0]]
            vote.seconds = time.perf_counter() - started
            on_batch(vote)
        ranked = votes.most_common()
        counted = sum(votes.values())
        if ranked and len(ranked) == 1 and counted >= config.settle:
            break
        if len(ranked) >= 2 and ranked[0][1] - ranked[1][1] > config.copies - asked:
            break
    vote.copies = sum(votes.values())
    if not votes:
        reason = "no copy could be loaded" if not vote.states else "no copy's choice could be played"
        vote.fallback = reason
        vote.action = game.ai_action(seat, config.level) or legal[0]
        votes[sig_of.get(vote.action.key) or signature(vote.action, lookup)] = 0
        first_choice.setdefault(next(iter(votes)), vote.action)
    else:
        top = votes.most_common(1)[0][1]
        tied_sigs = [s for s, n in votes.items() if n == top]
        tied = [first_choice[s] for s in tied_sigs]
        if len(tied) == 1:
            vote.action = tied[0]
        elif config.tie_break == "copies" and all(played_values.get(s) for s in tied_sigs):
            vote.action = first_choice[max(tied_sigs, key=lambda s: sum(played_values[s]) / len(played_values[s]))]
        else:
            vote.action = _tie_break(engine, vote.states[0], seat, tied)
        vote.tie_break = len(tied) > 1
    vote.ballots = _ballots(votes, first_choice, by_sig)
    vote.seconds = time.perf_counter() - started
    if stats is not None:
        stats.add(vote)
    return vote

