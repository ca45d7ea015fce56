"""How the search scores a position: the engine's evaluation squashed, or a learned model the caller passes in.

The search imports nothing of ``gameplay.core.learning``: the learned models reach it as one argument,
``SearchModels`` (built once by the caller: the shell from the registry's active versions, a bench from files;
``gameplay.core.learning.weights.search_models``), never through a global. Two shapes, both protocols (any object
with the method will do):

- ``Evaluator``: ``predict(state, seat, actions) -> (a probability per action, P(seat wins))``, the
  policy/value network (``gameplay.core.learning.network.NetEvaluator``): its prior steers PUCT, its
  value scores the leaves (``Search(evaluator=...)``, ``recommend(evaluator=...)``). A worker process of
  root parallelism loads the same network from ``evaluator.path`` with the caller's ``load_evaluator``.
- ``LeafModel``: ``win_probability(state, seat, evaluation, evaluation_other) -> P(seat wins)``, the value
  model (``gameplay.core.learning.value.ValueModel``) that scores cut rollouts when
  ``SearchConfig.leaf == "learned"``; the search is given a function that returns it (``leaf_model``), asked
  at each leaf so that a model that cannot be loaded costs that simulation, as any engine error does.

Without either, a leaf is ``win_probability(game.evaluate(seat))``: the engine's heuristic value squashed.
``leaf_value(models, leaf)`` picks the one of the three a search scores its leaves with, once per search.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
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


@dataclass(frozen=True)
class SearchModels:
    """The learned models a search uses, passed down whole (as OpenSpiel passes one evaluator to its bot).

    ``evaluator``: the policy/value network (its prior steers PUCT, its value scores the leaves; None: none);
    ``leaf_model``: what returns the value model for ``SearchConfig.leaf == "learned"`` (asked at each leaf);
    ``load_evaluator``: how a worker process of root parallelism loads ``evaluator`` from its ``path``.
    ``SearchModels()`` is the search without learned models."""

    evaluator: Evaluator | None = None
    leaf_model: LeafModelSource | None = None
    load_evaluator: EvaluatorLoader | None = None

    def with_evaluator(self, evaluator: Evaluator | None) -> "SearchModels":
        """The same models with another policy/value network (None: without one)."""
        return SearchModels(evaluator, self.leaf_model, self.load_evaluator)


NO_MODELS = SearchModels()


def leaf_value(models: SearchModels, leaf: str) -> Callable[[object, int], float]:
    """The function ``(game, seat) -> P(seat wins)`` that scores a position where a simulation stops, chosen once:
    the network's value (``models.evaluator``), else the value model's (``leaf == "learned"``:
    ``models.leaf_model``; ValueError without one), else the engine's evaluation squashed."""
    if leaf == "learned" and models.leaf_model is None:
        raise ValueError("leaf='learned' needs the value model: pass models with a leaf_model "
                         "(gameplay.core.learning.weights.search_models)")
    if models.evaluator is not None:
        evaluator = models.evaluator
        return lambda game, seat: evaluator.predict(game.state(), seat, [])[1]
    if leaf == "learned":
        source = models.leaf_model
        return lambda game, seat: source().win_probability(game.state(), seat, game.evaluate(seat),
                                                           game.evaluate(1 - seat))
    return lambda game, seat: win_probability(game.evaluate(seat))
