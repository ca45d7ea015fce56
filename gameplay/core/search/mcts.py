"""MCTS: PUCT over *our* decisions for the current turn, on an ensemble of determinizations.

Hidden information is handled with an ensemble of determinizations (Cowling, Ward & Powley 2012):
each determinization (opponent hand and both libraries re-dealt from what ``seat`` cannot see, new
engine seed) owns its own subtree below a shared root whose statistics are summed over the ensemble.
The opponent's decisions inside the tree and both sides' decisions in rollouts are the engine's
cheap AI; rollouts stop after ``horizon`` turns and are scored by the leaf value (the engine's
evaluation squashed to a win probability, or the learned model; a finished game scores 1 / 0 / 0.5).
The engine's stronger AI choice is the PUCT prior, or a learned evaluator's prior (``gameplay.core.learning.network``),
whose value then scores the leaves (``Search``).

Imports the search's base only.
"""
from __future__ import annotations

import math

from gameplay.core.search.base import SIM_ERRORS, Edge, Node, Search


class MCTSSearch(Search):
    algorithm = "mcts"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.finalists: list[Edge] | None = None  # root_finalists: the root edges that share the rest of the budget

    def _select(self, edges: list[Edge], parent_n: int, parent_mean: float) -> Edge:
        sqrt_n = math.sqrt(max(1, parent_n))
        best, best_score = edges[0], -1e9
        for e in edges:
            q = e.w / e.n if e.n else parent_mean
            score = q + self.cfg.c_puct * e.prior * sqrt_n / (1 + e.n)
            if score > best_score:
                best, best_score = e, score
        return best

    def _run(self):
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
            path: list[tuple[Node | None, Edge]] = [(None, edge)]
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
                        node = Node([Edge(a, p) for a, p in zip(actions, self.node_priors(game, actions))])
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
            except SIM_ERRORS as exc:
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

    def _pick_finalists(self, count: int) -> list[Edge]:
        """The engine's choice and the best of the others after the first round."""
        ranked = sorted((e for e in self.edges if e.n), key=lambda e: -e.mean)
        prior = [e for e in ranked if e.key == self.prior_key]
        others = [e for e in ranked if e.key != self.prior_key]
        return (prior + others)[:max(1, count)]

    def _leader(self, tried: list[Edge]) -> Edge:
        if self.finalists:  # they shared the budget round robin: the best mean among them
            return max(self.finalists, key=lambda e: (e.mean, e.key == self.prior_key))
        return super()._leader(tried)
