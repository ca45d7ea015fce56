"""Minimax: alpha-beta over the next few decisions of both seats on determinized states.

Forced decisions pass through; iterative deepening; a transposition table keyed by a hash of the
state (Magarena's MMAB approach); leaves are scored by the leaf value (``Search.value``).

Imports engine, pruning and the search's base.
"""
from __future__ import annotations

import hashlib
import json

from gameplay.core.engine.adapter import GAME_OVER, Action, Game
from gameplay.core.search.pruning import prune_actions
from gameplay.core.search.base import SIM_ERRORS, Edge, Search


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


class _OutOfBudget(Exception):
    pass


class MinimaxSearch(Search):
    """Two caches, both keyed by the state hash: ``table`` holds alpha-beta scores (depth, value,
    bound, best move) as in Magarena's MMAB; ``children`` holds what an action leads to from a
    position (the next decision, its state as JSON, the leaf value), so iterative deepening and
    transpositions never replay the engine for a position already expanded."""

    algorithm = "minimax"
    _CHILD_CACHE_MAX = 400

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.table: dict[str, tuple[int, float, int, str | None]] = {}
        self.children: dict[tuple[str, str], tuple] = {}
        self.cache_stores = 0

    def _run(self):
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
        except SIM_ERRORS as exc:
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
            seats = game.seats_to_act(prompt)
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

    def _leader(self, tried: list[Edge]) -> Edge:
        """Every root action gets an exact value at the depth reached: the best one."""
        return max(tried, key=lambda e: (e.mean, e.key == self.prior_key))

    def _stats(self) -> dict:
        return {"cache_hits": self.cache_hits, "cache_entries": len(self.table) + len(self.children)}
