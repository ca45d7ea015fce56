"""Search over the rules engine: which action should ``seat`` take now, and what line follows.

One entry point, ``recommend(game, seat, algorithm=..., budget=...)``, three algorithms:

- ``flat``: flat Monte Carlo over the current decision. Every distinct legal action is tried in
  turn on the same determinizations (common random numbers: the actions are compared on the same
  re-dealt hidden cards), each followed by a rollout; the best mean wins.
- ``mcts``: PUCT over *our* decisions for the current turn. Hidden information is handled with an
  ensemble of determinizations (Cowling, Ward & Powley 2012): each determinization (opponent hand
  and both libraries re-dealt from what ``seat`` cannot see, new engine seed) owns its own subtree
  below a shared root whose statistics are summed over the ensemble. The opponent's decisions
  inside the tree and both sides' decisions in rollouts are the engine's cheap AI; rollouts stop
  after ``horizon`` turns and are scored by the engine's evaluation squashed to a win probability
  (a finished game scores 1 / 0 / 0.5). The engine's stronger AI choice is the PUCT prior.
- ``minimax``: alpha-beta over the next few decisions of both seats (forced ones pass through)
  on determinized states, iterative deepening, with a transposition table keyed by a hash of the
  state (Magarena's MMAB approach); leaves are scored by the evaluation.

Root parallelism (``workers > 1``) runs the same search in other processes on their own
determinizations and sums the root statistics (``gameplay.core.parallel``).

The engine is slow (a copy is ``state()`` + ``load()``, 20-60 ms; a two-turn rollout 0.2-0.5 s),
so: the game is snapshotted once, each determinization once; a simulation loads one and
replays a handful of actions; equivalent actions are pruned (``gameplay.core.pruning``); forced
decisions are never searched; the engine's own attack/block prompts already restrict attacker
subsets. ``recommend`` never touches the game it is given. An engine error inside a simulation
(a panic, an action the engine refuses) drops that simulation and the search goes on.

Pure: no Django. Used by the advisor (streams ``on_progress``), the play page's search opponent
(``SearchPlayer``, registered as ``search:<level>`` in ``players.FACTORIES``) and the benches.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import random
import time
from dataclasses import dataclass, field
from typing import Callable

from gameplay.core import players as _players
from gameplay.core import value as _value
from gameplay.core.engine import (DIFFICULTIES, GAME_OVER, MAIN_PHASES, Action, EngineError, Game, IllegalAction,
                                  _seats_of, determinize)
from gameplay.core.pruning import ObjectLookup, prune_actions, signature

ALGORITHMS = ("flat", "mcts", "minimax")
LEAVES = ("engine", "learned")

# evaluate_state(seat) -> P(win): a logistic fit of the engine's evaluation at the start of each
# turn against the game's winner (bench/eval_quality.py re-fits it: ``fitted_scale``).
EVAL_SCALE = 8.0

# Engine errors that cost one simulation, never the search. A Rust panic arrives as EnginePanic
# (an EngineError); a state the engine cannot load is BadState (also an EngineError).
_SIM_ERRORS = (EngineError, ValueError, KeyError, TypeError, IndexError)


def win_probability(value: float, scale: float = EVAL_SCALE) -> float:
    """The engine's heuristic value (higher is better for the seat) squashed into 0..1."""
    x = max(-60.0, min(60.0, value / scale))
    return 1.0 / (1.0 + math.exp(-x))


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
                                         # "learned" (gameplay.core.value's model; bench/eval_quality.py)

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


# Levels, like Magarena's AI levels: an algorithm, a budget, processes, and how SearchPlayer uses
# them: ``defer`` is the engine AI whose choice is the default (and ``defer_low`` once the per-game
# CPU bank ``game_seconds`` is spent), ``contest`` the second opinion that decides what is searched.
LEVELS: dict[str, dict] = {
    "fast": {"algorithm": "mcts", "budget": Budget(seconds=2.0, simulations=6), "workers": 1, "defer": "Medium",
             "game_seconds": 40.0, "defer_low": "Easy",
             "config": SearchConfig(prior_level="Medium", determinizations=3, horizon=1, keep_margin=0.03, min_visits=2,
                                    root_finalists=2, max_candidates=4)},
    "default": {"algorithm": "mcts", "budget": Budget(seconds=8.0, simulations=12), "workers": 1, "defer": "VeryHard",
                "contest": "Medium", "game_seconds": 70.0, "defer_low": "Medium",
                "config": SearchConfig(prior_level="VeryHard", determinizations=6, horizon=2, keep_margin=0.03,
                                       min_visits=3, root_finalists=2, max_candidates=4)},
    # default with one-turn rollouts scored by the learned value model (gameplay.core.value): it predicts
    # the winner twice as well, yet was not stronger against Medium (bench/README.md), so default keeps
    # the engine's evaluation
    "learned": {"algorithm": "mcts", "budget": Budget(seconds=8.0, simulations=20), "workers": 1, "defer": "VeryHard",
                "contest": "Medium", "game_seconds": 70.0, "defer_low": "Medium",
                "config": SearchConfig(prior_level="VeryHard", determinizations=6, horizon=1, keep_margin=0.03,
                                       min_visits=3, root_finalists=2, max_candidates=4, leaf="learned")},
    "strong": {"algorithm": "mcts", "budget": Budget(seconds=10.0, simulations=48), "workers": 2, "defer": "VeryHard",
               "game_seconds": None,
               "config": SearchConfig(prior_level="VeryHard", determinizations=8, horizon=2, keep_margin=0.02,
                                      min_visits=3, root_finalists=3)},
    "flat": {"algorithm": "flat", "budget": Budget(seconds=6.0, simulations=10), "workers": 1, "defer": "VeryHard",
             "game_seconds": 70.0, "defer_low": "Medium",
             "config": SearchConfig(prior_level="VeryHard", determinizations=3, horizon=2, keep_margin=0.03, min_visits=2,
                                    max_candidates=4)},
    "minimax": {"algorithm": "minimax", "budget": Budget(seconds=3.0), "workers": 1, "defer": "VeryHard",
                "game_seconds": 70.0, "defer_low": "Medium",
                "config": SearchConfig(prior_level="VeryHard", determinizations=1, max_depth=3, horizon=1,
                                       keep_margin=0.03)},
}


# ---------------------------------------------------------------------------------------------
# State hashing (minimax transposition table)

_VOLATILE_KEYS = {"objects", "deck_pools", "resolved_rules_journal", "rng_seed", "rng_word_pos", "zone_changes_this_turn",
                  "player_actions_this_turn", "last_created_token_ids", "last_zone_changed_ids", "next_timestamp",
                  "priority_passes", "triggers_fired_this_turn", "triggers_fired_this_game"}
_STATIC_OBJECT_KEYS = ("abilities", "base_", "trigger_definitions", "static_definitions", "replacement_definitions",
                       "timestamp", "mana_spent_source_snapshots", "incarnation")


def state_hash(state: dict) -> str:
    """A hash of what matters in a position: zones, permanents' status, life, the prompt.

    Object ids, static card text, timestamps and bookkeeping counters that differ between two
    move orders reaching the same position are left out, so transpositions share an entry.
    """
    st = state.get("state", state)
    objects = st.get("objects") or {}
    top = {k: v for k, v in st.items() if k not in _VOLATILE_KEYS and not k.startswith("next_")}
    hidden = set()
    for p in st.get("players") or []:
        hidden.update(p.get("library") or [])
    objs = {}
    for oid, obj in objects.items():
        if not isinstance(obj, dict) or (obj.get("id") in hidden) or (obj.get("zone") == "Library"):
            continue
        objs[oid] = {k: v for k, v in obj.items() if not k.startswith(_STATIC_OBJECT_KEYS)}
    raw = json.dumps([top, objs], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(raw.encode(), digest_size=16).hexdigest()


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
    except _SIM_ERRORS:
        return False


# ---------------------------------------------------------------------------------------------
# The search context: one snapshot, an ensemble of determinizations, the budget, progress.

class _OutOfBudget(Exception):
    pass


class _Edge:
    __slots__ = ("action", "key", "label", "prior", "n", "w", "next", "by_det", "fails")

    def __init__(self, action: Action, prior: float):
        self.action, self.key, self.label, self.prior = action, action.key, action.label, prior
        self.n, self.w, self.fails = 0, 0.0, 0
        self.next: dict[int, "_Node"] = {}  # determinization index -> our next decision below this edge
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


class _Node:
    __slots__ = ("edges", "n", "w")

    def __init__(self, edges: list[_Edge]):
        self.edges, self.n, self.w = edges, 0, 0.0


def paired_difference(a: _Edge, b: _Edge) -> tuple[float, int]:
    """Mean of (a - b) over the determinizations both were simulated on, and how many those are."""
    diffs = [sa[0] / sa[1] - b.by_det[k][0] / b.by_det[k][1] for k, sa in a.by_det.items()
             if sa[1] and k in b.by_det and b.by_det[k][1]]
    if not diffs:
        return 0.0, 0
    return sum(diffs) / len(diffs), len(diffs)


def _priors(actions: list[Action], favourite: str | None, weight: float) -> list[float]:
    if not actions:
        return []
    if favourite is None or favourite not in {a.key for a in actions} or len(actions) == 1:
        return [1.0 / len(actions)] * len(actions)
    rest = (1.0 - weight) / (len(actions) - 1)
    return [weight if a.key == favourite else rest for a in actions]


class Search:
    """One decision's search. Use ``recommend`` unless you need the pieces."""

    def __init__(self, game: Game, seat: int, *, algorithm: str = "mcts", budget: Budget | None = None, seed: int = 0,
                 config: SearchConfig | None = None, on_progress: Callable[[Recommendation], None] | None = None,
                 hint: Action | None = None, state: dict | None = None, actions: list[Action] | None = None,
                 include: list[Action] | None = None):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}")
        self.algorithm = algorithm
        self.engine = game.engine
        self.seat = seat
        self.cfg = config or SearchConfig()
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
        self.dets: list[dict] = []
        self.simulations = 0
        self.dropped = 0
        self.errors: list[str] = []
        self.cache_hits = 0
        self.cache_stores = 0
        self._last_progress = self.start
        self._since_progress = 0
        self.prior_key: str | None = None
        self.finalists: list[_Edge] | None = None
        self.edges: list[_Edge] = []
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
        if self.cfg.leaf == "learned":
            return _value.default_model().win_probability(game.state(), self.seat, game.evaluate(self.seat),
                                                          game.evaluate(1 - self.seat))
        return win_probability(game.evaluate(self.seat))

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
            seats = _seats_of(prompt)
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
        self.advance(game, in_tree=False)
        return self.value(game)

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
        except _SIM_ERRORS:
            return None

    def _root_prior(self) -> str | None:
        if self.hint is not None:
            return self._representative(self.hint)
        if not self.cfg.prior_level:
            return None
        try:  # on a determinized copy: the engine's AI must not see the opponent's real hand
            choice = self._policy(self.load(0), self.seat, self.cfg.prior_level)
        except _SIM_ERRORS as exc:
            self._drop(exc)
            return None
        return self._representative(choice)

    def _drop(self, exc: BaseException):
        self.dropped += 1
        if len(self.errors) < 5:
            self.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")

    def run(self) -> Recommendation:
        if len(self.actions) == 0:
            raise IllegalAction(f"seat {self.seat} has no decision to make now")
        self.prior_key = self._root_prior() if len(self.actions) > 1 else None
        if self.cfg.max_candidates and len(self.actions) > self.cfg.max_candidates:
            wanted = {self.prior_key} | {self._representative(a) for a in self.include}
            keep = [a for a in self.actions if a.key in wanted]
            keep += [a for a in self.actions if a.key not in wanted][:max(0, self.cfg.max_candidates - len(keep))]
            self.actions = [a for a in self.actions if a in keep]
        priors = _priors(self.actions, self.prior_key, self.cfg.prior_weight)
        self.edges = [_Edge(a, p) for a, p in zip(self.actions, priors)]
        if len(self.actions) > 1:
            getattr(self, f"_run_{self.algorithm}")()
        rec = self.recommendation()
        rec.stats["final"] = True
        if self.on_progress is not None:
            self.on_progress(rec)
        return rec

    # -- flat Monte Carlo ----------------------------------------------------------------------
    def _run_flat(self):
        n = len(self.edges)
        i = 0
        while not self.exhausted():
            k, j = divmod(i, n)
            i += 1
            edge = self.edges[j]
            k %= max(1, self.cfg.determinizations)
            try:
                game = self.load(k)
                self._apply_key(game, edge.action)
                v = self.rollout(game)
            except _SIM_ERRORS as exc:
                self._drop(exc)
                self.simulations += 1
                continue
            edge.add(k, v)
            self.simulations += 1
            self._progress()

    # -- MCTS (PUCT, ensemble of determinizations) ---------------------------------------------
    def _select(self, edges: list[_Edge], parent_n: int, parent_mean: float) -> _Edge:
        sqrt_n = math.sqrt(max(1, parent_n))
        best, best_score = edges[0], -1e9
        for e in edges:
            q = e.w / e.n if e.n else parent_mean
            score = q + self.cfg.c_puct * e.prior * sqrt_n / (1 + e.n)
            if score > best_score:
                best, best_score = e, score
        return best

    def _run_mcts(self):
        root_n, root_w = 0, 0.0
        it = 0
        ndet = max(1, self.cfg.determinizations)
        while not self.exhausted():
            it += 1
            # each root action is tried once (the engine's choice first) before the rest of the budget
            # goes to the finalists (round robin) or to PUCT over all of them
            untried = [e for e in self.edges if e.n == 0 and e.fails < 2]
            if untried:
                edge = min(untried, key=lambda e: e.key != self.prior_key)
            elif self.cfg.root_finalists and any(e.n for e in self.edges):
                if self.finalists is None:
                    self.finalists = self._pick_finalists(self.cfg.root_finalists)
                edge = min(self.finalists, key=lambda e: (e.n + e.fails, e.key != self.prior_key))
            else:
                edge = self._select(self.edges, root_n, root_w / root_n if root_n else 0.5)
            # common random numbers: the i-th visit of every root action uses determinization i, so
            # actions are compared on the same re-dealt cards and engine seed (a failed try moves on)
            k = (edge.n + edge.fails) % ndet
            path: list[tuple[_Node | None, _Edge]] = [(None, edge)]
            try:
                game = self.load(k)
                self._apply_key(game, edge.action)
                holder = edge
                while True:
                    status, actions = self.advance(game, in_tree=True)
                    if status != "ours":
                        break
                    node = holder.next.get(k)
                    if node is None:  # expand: our next decision in this determinization
                        favourite = self._policy(game, self.seat, self.cfg.rollout_policy).key
                        node = _Node([_Edge(a, p) for a, p in zip(actions, _priors(actions, favourite, self.cfg.prior_weight))])
                        holder.next[k] = node
                        child = self._select(node.edges, 0, 0.5)
                        self._apply_key(game, child.action)
                        path.append((node, child))
                        break
                    child = self._select(node.edges, node.n, node.w / node.n if node.n else 0.5)
                    self._apply_key(game, child.action)
                    path.append((node, child))
                    holder = child
                v = self.rollout(game)
            except _SIM_ERRORS as exc:
                self._drop(exc)
                edge.fails += 1
                self.simulations += 1
                continue
            for node, e in path:
                if node is None:
                    e.add(k, v)
                else:
                    e.n += 1
                    e.w += v
                    node.n += 1
                    node.w += v
            root_n += 1
            root_w += v
            self.simulations += 1
            self._progress()

    # -- minimax with alpha-beta and a transposition table ------------------------------------
    # Two caches, both keyed by the state hash: ``table`` holds alpha-beta scores (depth, value,
    # bound, best move) as in Magarena's MMAB; ``children`` holds what an action leads to from a
    # position (the next decision, its state as JSON, the leaf value), so iterative deepening and
    # transpositions never replay the engine for a position already expanded.
    _CHILD_CACHE_MAX = 400

    def _run_minimax(self):
        self.table: dict[str, tuple[int, float, int, str | None]] = {}
        self.children: dict[tuple[str, str], tuple] = {}
        ndet = max(1, self.cfg.determinizations)
        completed_depth = 0
        # per depth: root key -> [sum, count] over the determinizations searched at that depth
        results: dict[int, dict[str, list[float]]] = {}
        roots = []
        try:
            for depth in range(1, self.cfg.max_depth + 1):
                acc = results.setdefault(depth, {})
                for k in range(ndet):
                    if len(roots) <= k:
                        state = self.det(k)
                        roots.append((json.dumps(state), state_hash(state)))
                    values = self._minimax_root(roots[k], depth)
                    for key, v in values.items():
                        s = acc.setdefault(key, [0.0, 0])
                        s[0] += v
                        s[1] += 1
                    self._publish_minimax(results, depth)
                completed_depth = depth
                if self.exhausted():
                    break
        except _OutOfBudget:
            pass
        self.extra_stats["depth"] = completed_depth
        if any(results.values()):
            self._publish_minimax(results, max(d for d, r in results.items() if r))

    def _publish_minimax(self, results: dict, depth: int):
        acc = results.get(depth) or {}
        for e in self.edges:
            s = acc.get(e.key)
            if s and s[1]:
                e.n, e.w = int(s[1]), s[0]
                e.by_det = {0: [s[0], int(s[1])]}
        self.extra_stats["depth_reached"] = depth
        self._progress()

    def _minimax_root(self, root: tuple[str, str], depth: int) -> dict[str, float]:
        ordered = sorted(self.edges, key=lambda e: -(e.mean if e.mean is not None else e.prior))
        out: dict[str, float] = {}
        for e in ordered:  # every root action gets an exact value (the advisor lists them all)
            if self.exhausted():
                raise _OutOfBudget
            v = self._child_value(root, self.seat, e.action, depth - 1, -1.0, 2.0)
            if v is not None:
                out[e.key] = v
        return out

    def _expand(self, parent: tuple[str, str], mover: int, action: Action):
        """(status, actions, next mover, leaf value, child JSON, child hash) after ``action``, cached."""
        ck = (parent[1], action.key)
        found = self.children.get(ck)
        if found is not None:
            self.cache_hits += 1
            return found
        game = self.engine.load(parent[0])
        game.apply(mover, Action(mover, action.kind, action.data, action.label))
        status, actions, who = self._advance_forced(game)
        value = self.value(game)
        child = None
        if status == "choice":
            state = game.state()
            child = (json.dumps(state), state_hash(state))
        actions = [Action(a.seat, a.kind, a.data, a.label) for a in actions]  # no native: they outlive the game
        found = (status, actions, who, value, child)
        if len(self.children) < self._CHILD_CACHE_MAX:
            self.children[ck] = found
            self.cache_stores += 1
        return found

    def _child_value(self, parent: tuple[str, str], mover: int, action: Action, depth: int, alpha: float,
                     beta: float) -> float | None:
        try:
            status, actions, who, value, child = self._expand(parent, mover, action)
        except _SIM_ERRORS as exc:
            self._drop(exc)
            self.simulations += 1
            return None
        self.simulations += 1
        if status != "choice" or depth <= 0 or child is None:
            return value
        return self._alphabeta(child, who, actions, depth, alpha, beta)

    def _advance_forced(self, game: Game) -> tuple[str, list[Action], int | None]:
        stop_turn = self.turn0 + self.cfg.horizon
        for _ in range(self.cfg.max_steps):
            prompt = game.prompt()
            if prompt.get("type") == GAME_OVER:
                return "over", [], None
            seats = _seats_of(prompt)
            if not seats:
                return "stuck", [], None
            if game.turn >= stop_turn:
                return "horizon", [], None
            mover = seats[0]
            actions = game.legal_actions(mover)
            if len(actions) > 1:
                actions = prune_actions(game, actions)
            if len(actions) > 1:
                return "choice", actions, mover
            game.apply(mover, actions[0])
        return "stuck", [], None

    def _alphabeta(self, node: tuple[str, str], mover: int, actions: list[Action], depth: int, alpha: float,
                   beta: float) -> float:
        entry = self.table.get(node[1])
        best_key = None
        if entry is not None:
            e_depth, e_value, e_flag, best_key = entry
            if e_depth >= depth and (e_flag == 0 or (e_flag < 0 and e_value <= alpha) or (e_flag > 0 and e_value >= beta)):
                self.cache_hits += 1
                return e_value
        if best_key is not None:  # the move that was best before goes first
            actions = sorted(actions, key=lambda a: a.key != best_key)
        maximizing = mover == self.seat
        a0, b0 = alpha, beta
        best_value, best_action = None, None
        for action in actions:
            if self.exhausted():
                raise _OutOfBudget
            v = self._child_value(node, mover, action, depth - 1, alpha, beta)
            if v is None:
                continue
            if best_value is None or (v > best_value if maximizing else v < best_value):
                best_value, best_action = v, action.key
            if maximizing:
                alpha = max(alpha, v)
            else:
                beta = min(beta, v)
            if alpha >= beta:
                break
        if best_value is None:
            return 0.5
        flag = 0
        if best_value <= a0:
            flag = -1  # an upper bound
        elif best_value >= b0:
            flag = 1   # a lower bound
        self.table[node[1]] = (depth, best_value, flag, best_action)
        return best_value

    # -- the answer ------------------------------------------------------------------------
    def _pick_finalists(self, count: int) -> list[_Edge]:
        """The engine's choice and the best of the others after the first round."""
        ranked = sorted((e for e in self.edges if e.n), key=lambda e: -e.mean)
        prior = [e for e in ranked if e.key == self.prior_key]
        others = [e for e in ranked if e.key != self.prior_key]
        return (prior + others)[:max(1, count)]

    def _best_edge(self) -> _Edge:
        tried = [e for e in self.edges if e.n > 0]
        if not tried:
            prior = next((e for e in self.edges if e.key == self.prior_key), None)
            return prior or self.edges[0]
        if self.algorithm == "minimax":
            best = max(tried, key=lambda e: (e.mean, e.key == self.prior_key))
        elif self.finalists:
            best = max(self.finalists, key=lambda e: (e.mean, e.key == self.prior_key))
        else:
            best = max(tried, key=lambda e: (e.n, e.mean, e.key == self.prior_key))
        prior = next((e for e in tried if e.key == self.prior_key), None)
        if prior is None or prior is best:
            return best
        # the engine's choice is the default: another action replaces it only when it did better on
        # the same determinizations (paired), by keep_margin, over at least min_visits of them
        diff, common = paired_difference(best, prior)
        if common < self.cfg.min_visits or diff <= self.cfg.keep_margin:
            return prior
        return best

    def _line(self, first: _Edge) -> list[str]:
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
        if self.algorithm == "minimax":
            stats.update(cache_hits=self.cache_hits, cache_entries=len(getattr(self, "table", {})) + len(getattr(self, "children", {})))
        if self.errors:
            stats["errors"] = list(self.errors)
        stats.update(self.extra_stats)
        return Recommendation(action=best.action, line=self._line(best), win_estimate=float(estimate),
                              alternatives=alternatives, simulations=self.simulations, elapsed=self.elapsed(),
                              algorithm=self.algorithm, forced=False, stats=stats)

    # -- root statistics, for root parallelism ---------------------------------------------------
    def root_stats(self) -> dict:
        return {"edges": {e.key: {"n": e.n, "w": e.w, "by_det": {str(k): v for k, v in e.by_det.items()}}
                          for e in self.edges}, "simulations": self.simulations,
                "dropped": self.dropped, "line": self._line(self._best_edge()) if self.edges else [],
                "cache_hits": self.cache_hits, "errors": list(self.errors), "prior_key": self.prior_key}


def forced_recommendation(action: Action, start: float, algorithm: str, estimate: float = 0.5) -> Recommendation:
    return Recommendation(action=action, line=[action.label], win_estimate=estimate,
                          alternatives=[{"label": action.label, "key": action.key, "visits": 0, "value": None}],
                          simulations=0, elapsed=time.perf_counter() - start, algorithm=algorithm, forced=True,
                          stats={"final": True})


def recommend(game: Game, seat: int, *, algorithm: str = "mcts", budget: Budget | None = None, seed: int = 0,
              workers: int = 1, on_progress: Callable[[Recommendation], None] | None = None,
              config: SearchConfig | None = None, hint: Action | None = None,
              include: list[Action] | None = None, spread=None) -> Recommendation:
    """The best action for ``seat`` now, the expected line, a win estimate and the alternatives.

    Without ``budget``/``config`` the ``default`` level's are used (for flat/minimax, that level's).
    ``game`` is never changed (the search works on loaded copies). ``on_progress`` is called with
    the best answer so far every few simulations or ``config.progress_seconds``, and once at the
    end. A decision with one distinct action returns at once with ``forced=True``. ``hint`` is an
    action the caller already knows the engine AI would take (the prior; saves computing it);
    ``include`` are actions that must stay among the candidates when ``max_candidates`` cuts them.
    ``workers > 1`` is root parallelism: on this machine's processes, or through ``spread`` (a function
    that starts part payloads elsewhere, e.g. on Celery workers; see ``gameplay.core.parallel``).
    """
    start = time.perf_counter()
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}")
    level = LEVELS["default"] if algorithm == "mcts" else LEVELS.get(algorithm, LEVELS["default"])
    budget = budget or level["budget"]
    config = config or level["config"]
    legal = game.legal_actions(seat)
    if not legal:
        raise IllegalAction(f"seat {seat} has no decision to make now")
    if len(legal) == 1 or len(actions := prune_actions(game, legal)) == 1:
        # nothing to search; the estimate is the engine's evaluation of the position as it stands
        try:
            estimate = win_probability(game.evaluate(seat))
        except EngineError:
            estimate = 0.5
        rec = forced_recommendation(legal[0], start, algorithm, estimate)
        if on_progress is not None:
            on_progress(rec)
        return rec
    if workers and workers > 1:
        from gameplay.core.parallel import recommend_parallel  # noqa: PLC0415

        return recommend_parallel(game, seat, algorithm=algorithm, budget=budget, seed=seed, workers=workers,
                                  on_progress=on_progress, config=config, hint=hint, actions=actions, start=start,
                                  include=include, spread=spread)
    search = Search(game, seat, algorithm=algorithm, budget=budget, seed=seed, config=config,
                    on_progress=on_progress, hint=hint, actions=actions, include=include)
    search.start = start
    return search.run()


# ---------------------------------------------------------------------------------------------
# A player that searches


def worth_searching(game: Game, seat: int, prompt: dict | None = None) -> bool:
    """Decisions of real consequence: the active player's main-phase plays, attacks and blocks."""
    prompt = prompt or game.prompt()
    kind = prompt.get("type")
    if kind in ("DeclareAttackers", "DeclareBlockers"):
        return True
    if kind == "Priority" and game.phase in MAIN_PHASES:
        try:
            return game.active_player() == seat and not (game.state()["state"].get("stack"))
        except _SIM_ERRORS:
            return False
    return False


class SearchPlayer:
    """Plays a level: forced decisions at once, the others searched or taken from the engine's ``defer`` AI.

    Which decisions are searched: with ``contest`` (a second engine level), those where the two
    engine levels disagree, whatever the step (the engine's levels agree on about 75% of real
    decisions; where they differ the choice is uncertain and worth rollouts); without it, those
    ``worth_searching`` says matter (main-phase plays of the active player, attacks, blocks).

    The engine's ``defer`` choice is the search's prior and its default: the search replaces it
    only when another action did better on the same determinizations (``keep_margin``). A level's
    ``game_seconds`` is a per-game bank of this player's CPU time (like a chess clock: the engine's
    choices it defers to count too): each search may use at most its budget and what is left in the
    bank; with the bank empty the player defers.
    """

    def __init__(self, level: str = "default", seed: int = 0, **overrides):
        if level not in LEVELS:
            raise ValueError(f"unknown search level {level!r}; use one of: {', '.join(LEVELS)}")
        spec = {**LEVELS[level], **overrides}
        self.name = f"search:{level}"
        self.level = level
        self.algorithm = spec["algorithm"]
        self.budget: Budget = spec["budget"]
        self.workers = int(spec.get("workers", 1))
        self.defer = spec.get("defer") or "Medium"
        if self.defer not in DIFFICULTIES:
            raise ValueError(f"defer must be one of {', '.join(DIFFICULTIES)}")
        self.config: SearchConfig = modelling(spec.get("config") or SearchConfig(), spec.get("opponent_model"))
        self.opponent_model: str | None = spec.get("opponent_model")
        self.game_seconds: float | None = spec.get("game_seconds")
        self.defer_low: str | None = spec.get("defer_low")  # the cheaper AI once the bank is spent
        self.contest: str | None = spec.get("contest")      # search only where this level disagrees
        self.seed = seed
        self.calls = 0
        self._last_turn = 0
        self.bank_spent = 0.0
        self.last: Recommendation | None = None
        self.changes: list[dict] = []  # where the search overruled the engine (for the benches)
        self.stats = {"decisions": 0, "forced": 0, "deferred": 0, "agreed": 0, "searched": 0, "changed": 0,
                      "bank_empty": 0,
                      "search_seconds": 0.0, "simulations": 0, "dropped": 0}

    def _budget(self) -> Budget | None:
        if self.game_seconds is None:
            return self.budget
        left = self.game_seconds - self.bank_spent
        if left <= 0.05:
            return None
        # spend at most a third of what is left on one decision: late decisions (races, lethal) matter too
        seconds = left / 3 if self.budget.seconds is None else min(self.budget.seconds, left / 3)
        return Budget(seconds=seconds, simulations=self.budget.simulations)

    def choose(self, game: Game, seat: int) -> Action:
        if game.turn < self._last_turn:  # a new game: a full bank
            self.bank_spent = 0.0
        self._last_turn = game.turn
        self.stats["decisions"] += 1
        legal = game.legal_actions(seat)
        if len(legal) == 1:
            self.stats["forced"] += 1
            return legal[0]
        actions = prune_actions(game, legal)
        if len(actions) == 1:
            self.stats["forced"] += 1
            return actions[0]
        cpu = time.process_time()
        low = self.game_seconds is not None and self.bank_spent > self.game_seconds
        strong = game.ai_action(seat, self.defer_low if low and self.defer_low else self.defer)
        if not self.contest and not worth_searching(game, seat):
            self.stats["deferred"] += 1
            self.bank_spent += time.process_time() - cpu
            return strong or actions[0]
        budget = self._budget()
        if budget is None:
            self.stats["bank_empty"] += 1
            self.bank_spent += time.process_time() - cpu
            return strong or actions[0]
        other = None
        if self.contest:
            # a second opinion from another engine level: when both agree, there is nothing to search
            other = game.ai_action(seat, self.contest)
            if strong is not None and (other is None or other.key == strong.key or
                                       signature(other, ObjectLookup(game)) == signature(strong, ObjectLookup(game))):
                self.stats["agreed"] += 1
                self.bank_spent += time.process_time() - cpu
                return strong
        self.calls += 1
        search_cpu = time.process_time()
        rec = recommend(game, seat, algorithm=self.algorithm, budget=budget, seed=self.seed * 100_003 + self.calls,
                        workers=self.workers, config=self.config, hint=strong, include=[other] if other else None)
        spent = time.process_time() - search_cpu
        self.bank_spent += time.process_time() - cpu
        self.last = rec
        self.stats["searched"] += 1
        self.stats["search_seconds"] += spent
        self.stats["simulations"] += rec.simulations
        self.stats["dropped"] += rec.stats.get("dropped", 0)
        if strong is None:
            return rec.action
        if rec.action.key != strong.key:
            lookup = ObjectLookup(game)
            if signature(rec.action, lookup) == signature(strong, lookup):
                return strong
            self.stats["changed"] += 1
            if len(self.changes) < 30:
                alts = {a["key"]: a for a in rec.alternatives}
                self.changes.append({"turn": game.turn, "phase": game.phase, "engine": strong.label,
                                     "search": rec.action.label, "search_value": alts.get(rec.action.key, {}).get("value"),
                                     "engine_value": alts.get(strong.key, {}).get("value"),
                                     "simulations": rec.simulations})
            return rec.action
        return strong


def modelling(config: SearchConfig, opponent_level: str | None) -> SearchConfig:
    """``config`` with the opponent modelled as the engine AI ``opponent_level`` (in the tree and in
    rollouts), for a player that knows which AI it faces (``search:<level>@<AI>``); unchanged for None.
    Measured against Medium it was not stronger at the default budget (bench/README.md), so the
    advisor does not use it."""
    if not opponent_level:
        return config
    if opponent_level not in DIFFICULTIES:
        raise ValueError(f"opponent model must be one of {', '.join(DIFFICULTIES)}")
    return dataclasses.replace(config, opponent_policy=opponent_level, rollout_opponent_policy=opponent_level)


def level_spec(level: str) -> dict:
    spec = LEVELS[level]
    return {"algorithm": spec["algorithm"], "budget": spec["budget"].to_dict(), "workers": spec.get("workers", 1),
            "defer": spec.get("defer"), "defer_low": spec.get("defer_low"), "contest": spec.get("contest"),
            "game_seconds": spec.get("game_seconds"), "config": {k: v for k, v in vars(spec.get("config") or SearchConfig()).items()}}


def _search_player(arg: str, seed: int) -> SearchPlayer:
    """``search:<level>`` or ``search:<level>@<engine level>`` (the opponent is known to play that AI)."""
    level, _, model = (arg or "default").partition("@")
    return SearchPlayer(level or "default", seed=seed, opponent_model=model or None)


_players.FACTORIES["search"] = _search_player
