"""How the search scores a position: the engine's evaluation squashed, or a learned model the caller passes in.

The search imports nothing of ``gameplay.core.learning``: a learned model reaches it as an argument, never
through a global. Two shapes, both protocols (any object with the method will do):

- ``Evaluator``: ``predict(state, seat, actions) -> (a probability per action, P(seat wins))``, the
  policy/value network (``gameplay.core.learning.network.NetEvaluator``): its prior steers PUCT, its
  value scores the leaves (``Search(evaluator=...)``, ``recommend(evaluator=...)``). A worker process of
  root parallelism loads the same network from ``evaluator.path`` with the caller's ``load_evaluator``.
- ``LeafModel``: ``win_probability(state, seat, evaluation, evaluation_other) -> P(seat wins)``, the value
  model (``gameplay.core.learning.value.ValueModel``) that scores cut rollouts when
  ``SearchConfig.leaf == "learned"``; the search is given a function that returns it (``leaf_model``), asked
  at each leaf so that a model that cannot be loaded costs that simulation, as any engine error does.

Without either, a leaf is ``win_probability(game.evaluate(seat))``: the engine's heuristic value squashed.
"""
from __future__ import annotations

import math
from typing import Callable, Protocol

# evaluate_state(seat) -> P(win): a logistic fit of the engine's evaluation at the start of each
# turn against the game's winner (bench/eval_quality.py re-fits it: ``fitted_scale``).
EVAL_SCALE = 8.0


def win_probability(value: float, scale: float = EVAL_SCALE) -> float:
    """The engine's heuristic value (higher is better for the seat) squashed into 0..1."""
    x = max(-60.0, min(60.0, value / scale))
    return 1.0 / (1.0 + math.exp(-x))


class Evaluator(Protocol):
    """A prior over a decision's actions and a value of the position, from ``seat``'s side."""

    def predict(self, state: dict, seat: int, actions: list) -> tuple[list[float], float]: ...


class LeafModel(Protocol):
    """P(``seat`` wins) of a position from its state and both seats' engine evaluations."""

    def win_probability(self, state: dict, seat: int, evaluation: float, evaluation_other: float) -> float: ...


LeafModelSource = Callable[[], LeafModel]
EvaluatorLoader = Callable[[str], Evaluator]
