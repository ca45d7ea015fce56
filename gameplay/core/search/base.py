"""What every search algorithm shares: the budget, the knobs, the answer, and ``Search``, the root.

``Search`` holds one decision's search: the game snapshotted once, an ensemble of determinizations
(the opponent's hand and both libraries re-dealt from what ``seat`` cannot see, a new engine seed;
each re-dealt once; or the copies a caller gives, ``determinizations``: an ensemble vote's, so the search
weighs the actions on the very copies the vote asked), the engine AIs that play both seats in the tree and in
rollouts, the leaf value (``gameplay.core.search.evaluation``), the root's edges with their statistics per
determinization, the engine's choice as the prior and the default to beat, progress, and the answer (``Recommendation``). An
algorithm (``flat``, ``mcts``, ``minimax``) is a subclass that fills in ``_run``: it spends the budget
adding values to the root edges; how the best edge is picked from them it may refine (``_leader``).

The engine is slow (a copy is ``state()`` + ``load()``, 20-60 ms; a two-turn rollout 0.2-0.5 s),
so: the game is snapshotted once, each determinization once; a simulation loads one and
replays a handful of actions; equivalent actions are pruned (``gameplay.core.search.pruning``); forced
decisions are never searched; the engine's own attack/block prompts already restrict attacker
subsets. A search never touches the game it is given.

The learned models plug in from outside, as one argument (``models``: ``gameplay.core.search.evaluation.SearchModels``).
Its ``evaluator`` (any object with ``predict(state, seat, actions) -> (a probability per action, P(seat wins))``,
``gameplay.core.search.evaluation.Evaluator``, e.g. ``gameplay.core.learning.network.NetEvaluator``): its prior
replaces the engine's choice as the PUCT prior (the engine's choice stays the default to beat) and orders the
candidates ``max_candidates`` keeps, and its value scores the leaves where the tree stops (``net_rollout``: after
the rollout instead). The leaf value is chosen once per search (``evaluation.leaf_value``: the network's, else the
value model's for ``leaf="learned"``, else the engine's evaluation squashed). An engine error inside a simulation
(a panic, an action the engine refuses) drops that simulation and the search goes on.

Imports the engine, ``search.pruning`` and ``search.evaluation`` only: the learned models are passed in
(``models``), never looked up.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field, replace
from typing import Callable

from gameplay.core.engine.adapter import (DIFFICULTIES, GAME_OVER, MAIN_PHASES, Action, EngineError, Game, IllegalAction,
                                  determinize)
from gameplay.core.search.pruning import ObjectLookup, prune_actions, signature
from gameplay.core.search.evaluation import NO_MODELS, SearchModels, leaf_value

LEAVES = ("engine", "learned")

# Engine errors that cost one simulation, never the search. A Rust panic arrives as EnginePanic
# (an EngineError); a state the engine cannot load is BadState (also an EngineError).
SIM_ERRORS = (EngineError, ValueError, KeyError, TypeError, IndexError)


@dataclass
class Budget:
    """How long one decision may think: wall-clock seconds, simulations, or both (first one reached)."""

    seconds: float | None = None
    simulations: int | None = None

    def __post_init__(self):
        if self.seconds is not None and self.seconds < 0:
            raise ValueError("budget seconds must be >= 0")
        if self.simulations is not None and self.simulations < 1:
            raise ValueError("budget simulations must be >= 1")

    def to_dict(self) -> dict:
        return {"seconds": self.seconds, "simulations": self.simulations}


@dataclass
class SearchConfig:
    """The knobs behind a level (defaults suit the advisor)."""

    rollout_policy: str = "Easy"         # engine AI that plays both seats in rollouts
    opponent_policy: str = "Easy"        # the opponent model inside the tree
    rollout_opponent_policy: str | None = None  # the opponent's AI in rollouts (None: rollout_policy)
    prior_level: str | None = "Medium"   # engine AI whose choice is the PUCT prior and the default to beat
    prior_weight: float = 0.5            # share of the prior on that choice (the rest is uniform)
    horizon: int = 2                     # rollouts stop when the turn number reaches root turn + horizon
    determinizations: int = 8            # size of the ensemble (simulation i uses i % n)
    c_puct: float = 1.4
    keep_margin: float = 0.0             # the prior's choice stays unless another beats it by this much ...
    min_visits: int = 1                  # ... on at least this many common determinizations
    root_finalists: int | None = None    # after one try each, only the engine's choice and the best
                                         # others share the rest (round robin); None: PUCT over all
    max_candidates: int | None = None    # consider at most this many root actions (the engine's first)
    max_depth: int = 4                   # minimax: plies (non-forced decisions of either seat)
    progress_seconds: float = 0.25       # on_progress at least this often ...
    progress_simulations: int = 4        # ... or every this many simulations
    max_steps: int = 800                 # a rollout longer than this many decisions is cut
    rescue_policy: str | None = None     # the AI that takes over a seat whose cheap policy stalls (see _policy)
    leaf: str = "engine"                 # what scores a cut rollout: "engine" (its evaluation, squashed) or
                                         # "learned" (the value model of the caller's models.leaf_model;
                                         # bench/eval_quality.py)
    net_rollout: bool = False            # with an evaluator: play the rollout before its value (else none)

    def __post_init__(self):
        if self.leaf not in LEAVES:
            raise ValueError(f"leaf must be one of {', '.join(LEAVES)}, not {self.leaf!r}")
        # a misspelt AI would otherwise fail inside every simulation, each dropped without a word
        for name in ("rollout_policy", "opponent_policy", "rollout_opponent_policy", "prior_level", "rescue_policy"):
            value = getattr(self, name)
            if value is not None and value not in DIFFICULTIES:
                raise ValueError(f"{name} must be one of {', '.join(DIFFICULTIES)}, not {value!r}")


@dataclass
class Recommendation:
    action: Action
    line: list[str]
    win_estimate: float
    alternatives: list[dict]
    simulations: int
    elapsed: float
    algorithm: str
    forced: bool = False
    stats: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"action": self.action.to_dict(), "line": list(self.line), "win_estimate": round(self.win_estimate, 4),
                "alternatives": [dict(a) for a in self.alternatives], "simulations": self.simulations,
                "elapsed": round(self.elapsed, 4), "algorithm": self.algorithm, "forced": self.forced,
                "stats": dict(self.stats)}

_STALLING = {"VeryEasy", "Easy"}  # the engine AIs seen stuck passing (bench/README.md)


def stalls(game: Game, seat: int, action: Action) -> bool:
    """Whether ``action`` passes on ``seat``'s own main phase, with nothing on the stack, while a
    land could be played: almost never right, and the mark of an engine AI stuck passing."""
    if action.kind != "PassPriority" or game.phase not in MAIN_PHASES:
        return False
    try:
        if game.active_player() != seat or game.stack_size():
            return False
        return any(a.kind == "PlayLand" for a in game.legal_actions(seat))
    except SIM_ERRORS:
        return False


# ---------------------------------------------------------------------------------------------
# The tree: an edge per action (the root's keep their values per determinization), a node per decision

class Edge:
    __slots__ = ("action", "key", "label", "prior", "n", "w", "next", "by_det", "fails")

    def __init__(self, action: Action, prior: float):
        self.action, self.key, self.label, self.prior = action, action.key, action.label, prior
        self.n, self.w, self.fails = 0, 0.0, 0
        self.next: dict[int, "Node"] = {}  # determinization index -> our next decision below this edge
        self.by_det: dict[int, list] = {}    # determinization index -> [value sum, count] (root edges)

    def add(self, k: int, v: float):
        self.n += 1
        self.w += v
        s = self.by_det.setdefault(k, [0.0, 0])
        s[0] += v
        s[1] += 1

    @property
    def mean(self) -> float | None:
        return self.w / self.n if self.n else None


class Node:
    __slots__ = ("edges", "n", "w")

    def __init__(self, edges: list[Edge]):
        self.edges, self.n, self.w = edges, 0, 0.0


def paired_difference(a: Edge, b: Edge) -> tuple[float, int]:
    """Mean of (a - b) over the determinizations both were simulated on, and how many those are."""
    diffs = [sa[0] / sa[1] - b.by_det[k][0] / b.by_det[k][1] for k, sa in a.by_det.items()
             if sa[1] and k in b.by_det and b.by_det[k][1]]
    if not diffs:
        return 0.0, 0
    return sum(diffs) / len(diffs), len(diffs)


def priors(actions: list[Action], favourite: str | None, weight: float) -> list[float]:
    if not actions:
        return []
    if favourite is None or favourite not in {a.key for a in actions} or len(actions) == 1:
        return [1.0 / len(actions)] * len(actions)
    rest = (1.0 - weight) / (len(actions) - 1)
    return [weight if a.key == favourite else rest for a in actions]


# ---------------------------------------------------------------------------------------------
# The search context: one snapshot, an ensemble of determinizations, the budget, progress.

class Search:
    """One decision's search: everything but the algorithm, which a subclass supplies (``_run``).

    Use ``gameplay.core.search.advisor.recommend`` unless you need the pieces; ``make_search``
    (``gameplay.core.search.algorithms``) builds the subclass for an algorithm's name.
    """

    algorithm = ""  # the subclass's name in ``ALGORITHMS``

    def __init__(self, game: Game, seat: int, *, budget: Budget | None = None, seed: int = 0,
                 config: SearchConfig | None = None, on_progress: Callable[[Recommendation], None] | None = None,
                 hint: Action | None = None, state: dict | None = None, actions: list[Action] | None = None,
                 include: list[Action] | None = None, models: SearchModels | None = None,
                 determinizations: list[dict] | None = None):
        self.engine = game.engine
        self.models = models or NO_MODELS
        self.evaluator = self.models.evaluator
        self.seat = seat
        self.cfg = config or SearchConfig()
        if determinizations:  # given copies (an ensemble's): exactly these, simulation i on copy i % len
            self.cfg = replace(self.cfg, determinizations=len(determinizations))
        self._leaf = leaf_value(self.models, self.cfg.leaf)  # ValueError: leaf="learned" without a value model
        self.budget = budget or Budget(seconds=1.0)
        if self.budget.seconds is None and self.budget.simulations is None:
            self.budget = Budget(simulations=16)
        self.seed = seed
        self.rng = random.Random(seed)
        self.on_progress = on_progress
        self.start = time.perf_counter()
        self.turn0 = game.turn
        self.root_state = state if state is not None else game.state()
        self.actions = actions if actions is not None else prune_actions(game, game.legal_actions(seat))
        self.hint = hint
        self.include = [a for a in (include or []) if a is not None]
        self.dets: list[dict] = list(determinizations or [])
        self.given_dets = len(self.dets)  # how many of them the caller gave
        self.simulations = 0
        self.dropped = 0
        self.errors: list[str] = []
        self.cache_hits = 0
        self._last_progress = self.start
        self._since_progress = 0
        self.prior_key: str | None = None
        self.edges: list[Edge] = []
        self.extra_stats: dict = {}
        self._rescued: set[int] = set()  # seats the rescue policy plays in the current simulation

    # -- budget and progress -------------------------------------------------------------
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def exhausted(self) -> bool:
        b = self.budget
        if b.simulations is not None and self.simulations >= b.simulations:
            return True
        return b.seconds is not None and self.elapsed() >= b.seconds

    def _progress(self, force: bool = False):
        self._since_progress += 1
        if self.on_progress is None:
            return
        now = time.perf_counter()
        if force or now - self._last_progress >= self.cfg.progress_seconds or self._since_progress >= self.cfg.progress_simulations:
            self._last_progress, self._since_progress = now, 0
            self.on_progress(self.recommendation())

    # -- determinizations and copies -----------------------------------------------------
    def det(self, k: int) -> dict:
        while len(self.dets) <= k:
            self.dets.append(determinize(self.root_state, self.seat, self.rng))
        return self.dets[k]

    def load(self, k: int) -> Game:
        self._rescued.clear()  # a new simulation: no seat has stalled in it yet
        return self.engine.load(self.det(k))

    # -- playing moves ---------------------------------------------------------------------
    def _policy(self, game: Game, seat: int, level: str) -> Action:
        rescue = self.cfg.rescue_policy
        if rescue and seat in self._rescued:
            level = rescue
        action = game.ai_action(seat, level)
        if rescue and level in _STALLING and action is not None and stalls(game, seat, action):
            # the cheap AIs sometimes pass every priority for the rest of a game, which turns a
            # rollout into noise; a land left in hand on its own main phase gives it away, and the
            # seat is handed over for the rest of this simulation
            self._rescued.add(seat)
            action = game.ai_action(seat, rescue)
        if action is None:
            actions = game.legal_actions(seat)
            if not actions:
                raise IllegalAction("no legal action for the seat to act")
            action = actions[0]
        return action

    def _outcome(self, game: Game) -> float | None:
        prompt = game.prompt()
        if prompt.get("type") != GAME_OVER:
            return None
        winner = (prompt.get("data") or {}).get("winner")
        return 0.5 if winner is None else (1.0 if winner == self.seat else 0.0)

    def value(self, game: Game) -> float:
        done = self._outcome(game)
        if done is not None:
            return done
        return self._leaf(game, self.seat)

    def advance(self, game: Game, *, in_tree: bool) -> tuple[str, list[Action]]:
        """Play forced actions and the other seat's moves until our next real choice.

        Returns ``("ours", actions)`` at a decision of ``seat`` with more than one distinct action
        during the root turn (only when ``in_tree``), else ``("over"|"horizon"|"stuck", [])``.
        """
        stop_turn = self.turn0 + self.cfg.horizon
        for _ in range(self.cfg.max_steps):
            prompt = game.prompt()
            if prompt.get("type") == GAME_OVER:
                return "over", []
            seats = game.seats_to_act(prompt)
            if not seats:
                return "stuck", []
            if game.turn >= stop_turn:
                return "horizon", []
            mover = next((s for s in seats if s != self.seat), seats[0])
            if in_tree and mover == self.seat and game.turn == self.turn0:
                actions = game.legal_actions(mover)
                if len(actions) > 1:
                    actions = prune_actions(game, actions)
                if len(actions) > 1:
                    return "ours", actions
                game.apply(mover, actions[0])
                continue
            if mover == self.seat:
                level = self.cfg.rollout_policy
            elif in_tree:
                level = self.cfg.opponent_policy
            else:
                level = self.cfg.rollout_opponent_policy or self.cfg.rollout_policy
            game.apply(mover, self._policy(game, mover, level))
        return "stuck", []

    def rollout(self, game: Game) -> float:
        if self.evaluator is None or self.cfg.net_rollout:
            self.advance(game, in_tree=False)
        return self.value(game)

    def node_priors(self, game: Game, actions: list[Action]) -> list[float]:
        """The PUCT prior of a decision of ``seat`` inside the tree: the evaluator's, else ``prior_weight`` on the
        rollout AI's choice."""
        if self.evaluator is not None:
            return self.evaluator.predict(game.state(), self.seat, actions)[0]
        return priors(actions, self._policy(game, self.seat, self.cfg.rollout_policy).key, self.cfg.prior_weight)

    def _apply_key(self, game: Game, action: Action):
        game.apply(self.seat, Action(self.seat, action.kind, action.data, action.label))

    # -- the root ----------------------------------------------------------------------------
    def _representative(self, action: Action) -> str | None:
        """The key of the kept root action equivalent to ``action`` (another copy of a land, ...)."""
        keys = {a.key for a in self.actions}
        if action.key in keys:
            return action.key
        try:
            lookup = ObjectLookup(self.load(0))
            want = signature(action, lookup)
            return next((a.key for a in self.actions if signature(a, lookup) == want), None)
        except SIM_ERRORS:
            return None

    def _root_prior(self) -> str | None:
        if self.hint is not None:
            return self._representative(self.hint)
        if not self.cfg.prior_level:
            return None
        try:  # on a determinized copy: the engine's AI must not see the opponent's real hand
            choice = self._policy(self.load(0), self.seat, self.cfg.prior_level)
        except SIM_ERRORS as exc:
            self._drop(exc)
            return None
        return self._representative(choice)

    def _net_priors(self) -> dict[str, float] | None:
        """The evaluator's prior of each root action by key (from ``seat``'s view of the root state), or None."""
        if self.evaluator is None or len(self.actions) < 2:
            return None
        try:
            return dict(zip((a.key for a in self.actions),
                            self.evaluator.predict(self.root_state, self.seat, self.actions)[0]))
        except SIM_ERRORS as exc:
            self._drop(exc)
            return None

    def _drop(self, exc: BaseException):
        self.dropped += 1
        if len(self.errors) < 5:
            self.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")

    def run(self) -> Recommendation:
        if len(self.actions) == 0:
            raise IllegalAction(f"seat {self.seat} has no decision to make now")
        self.prior_key = self._root_prior() if len(self.actions) > 1 else None
        net = self._net_priors()
        if net is not None:  # the candidates a cut keeps are the network's favourites
            self.actions = sorted(self.actions, key=lambda a: -net[a.key])
        if self.cfg.max_candidates and len(self.actions) > self.cfg.max_candidates:
            wanted = {self.prior_key} | {self._representative(a) for a in self.include}
            keep = [a for a in self.actions if a.key in wanted]
            keep += [a for a in self.actions if a.key not in wanted][:max(0, self.cfg.max_candidates - len(keep))]
            self.actions = [a for a in self.actions if a in keep]
        weights = priors(self.actions, self.prior_key, self.cfg.prior_weight)
        if net is not None:  # renormalised over the candidates kept
            total = sum(net[a.key] for a in self.actions) or 1.0
            weights = [net[a.key] / total for a in self.actions]
        self.edges = [Edge(a, p) for a, p in zip(self.actions, weights)]
        if len(self.actions) > 1:
            self._run()
        rec = self.recommendation()
        rec.stats["final"] = True
        if self.on_progress is not None:
            self.on_progress(rec)
        return rec

    def _run(self):
        """Spend the budget adding simulation values to ``self.edges`` (the algorithm)."""
        raise NotImplementedError(f"{type(self).__name__} is not a search algorithm; use make_search")

    # -- the answer ------------------------------------------------------------------------
    def _leader(self, tried: list[Edge]) -> Edge:
        """The best of the root edges tried so far, before the engine's choice may keep its place:
        the most visited (then the best mean)."""
        return max(tried, key=lambda e: (e.n, e.mean, e.key == self.prior_key))

    def _best_edge(self) -> Edge:
        tried = [e for e in self.edges if e.n > 0]
        if not tried:
            prior = next((e for e in self.edges if e.key == self.prior_key), None)
            return prior or self.edges[0]
        best = self._leader(tried)
        prior = next((e for e in tried if e.key == self.prior_key), None)
        if prior is None or prior is best:
            return best
        # the engine's choice is the default: another action replaces it only when it did better on
        # the same determinizations (paired), by keep_margin, over at least min_visits of them
        diff, common = paired_difference(best, prior)
        if common < self.cfg.min_visits or diff <= self.cfg.keep_margin:
            return prior
        return best

    def _line(self, first: Edge) -> list[str]:
        line = [first.label]
        holders = [first]
        for _ in range(12):
            merged: dict[str, list] = {}
            for h in holders:
                for node in h.next.values():
                    for e in node.edges:
                        m = merged.setdefault(e.key, [0, 0.0, e.label, []])
                        m[0] += e.n
                        m[1] += e.w
                        m[3].append(e)
            if not merged:
                break
            key, best = max(merged.items(), key=lambda kv: (kv[1][0], kv[1][1]))
            if best[0] == 0:
                break
            line.append(best[2])
            holders = best[3]
        return line

    def recommendation(self) -> Recommendation:
        best = self._best_edge()
        alts = sorted(self.edges, key=lambda e: (e is not best, -e.n, -(e.mean if e.mean is not None else -1)))
        alternatives = [{"label": e.label, "key": e.key, "visits": e.n,
                         "value": round(e.mean, 4) if e.mean is not None else None,
                         "prior": round(e.prior, 3), "engine_choice": e.key == self.prior_key} for e in alts]
        estimate = best.mean if best.mean is not None else 0.5
        stats = {"dropped": self.dropped, "determinizations": len(self.dets), "seed": self.seed,
                 "budget": self.budget.to_dict(),
                 "prior": next((e.label for e in self.edges if e.key == self.prior_key), None)}
        stats.update(self._stats())
        if self.given_dets:
            stats["given_determinizations"] = self.given_dets
        if self.evaluator is not None:
            stats["net"] = {"calls": getattr(self.evaluator, "calls", None),
                            "seconds": round(getattr(self.evaluator, "seconds", 0.0), 3)}
        if self.errors:
            stats["errors"] = list(self.errors)
        stats.update(self.extra_stats)
        return Recommendation(action=best.action, line=self._line(best), win_estimate=float(estimate),
                              alternatives=alternatives, simulations=self.simulations, elapsed=self.elapsed(),
                              algorithm=self.algorithm, forced=False, stats=stats)

    def _stats(self) -> dict:
        """The algorithm's own figures for ``Recommendation.stats`` (none here)."""
        return {}

    # -- root statistics, for root parallelism ---------------------------------------------------
    def root_stats(self) -> dict:
        return {"edges": {e.key: {"n": e.n, "w": e.w, "by_det": {str(k): v for k, v in e.by_det.items()}}
                          for e in self.edges}, "simulations": self.simulations,
                "dropped": self.dropped, "line": self._line(self._best_edge()) if self.edges else [],
                "cache_hits": self.cache_hits, "errors": list(self.errors), "prior_key": self.prior_key}

