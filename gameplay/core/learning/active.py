"""Which learned models are in use: the one place that remembers what the shell said.

The site's registry names the active ``game_value`` and ``game_policy_net`` versions; ``gameplay.apps`` hands
this module a resolver for each (``set_resolvers(value=fn, network=fn)``, ``fn() -> path or None``), asked at
most every ``RESOLVE_SECONDS`` (a failing ``fn`` keeps the last answer). The search never reads this module:
a caller above it (the players, the review, the shell's advice) asks here and passes what it gets
(``recommend(evaluator=network(), leaf_model=value_model, load_evaluator=evaluator_at)``).

- ``value_model()``: the value model in use, the resolver's file, else ``MTG_GAME_VALUE_WEIGHTS``, else the
  shipped ``value.DEFAULT_WEIGHTS`` (``ValueModelError`` when none can be read);
- ``network()``: the active policy/value network, or None (no resolver, no active version, or a file that
  cannot be read): the search then plays as it did before the network.

Pure: no Django; imports ``gameplay.core.learning.value`` and ``network`` only.
"""
from __future__ import annotations

import math
import os
import time
from pathlib import Path

from gameplay.core.learning.network import NetEvaluator, PolicyModelError, evaluator_at
from gameplay.core.learning.value import DEFAULT_WEIGHTS, ValueModel, ValueModelError, model_at

RESOLVE_SECONDS = 5.0


class Resolver:
    """Where the shell says a model in use lives: ``fn() -> path or None``, asked at most every RESOLVE_SECONDS
    (a failing ``fn`` keeps the last answer)."""

    def __init__(self):
        self.fn, self.at, self.path = None, -math.inf, None

    def set(self, fn) -> None:
        self.fn, self.at, self.path = fn, -math.inf, None

    def __call__(self) -> str | None:
        if self.fn is None:
            return None
        now = time.monotonic()
        if now - self.at >= RESOLVE_SECONDS:
            self.at = now
            try:
                self.path = self.fn()
            except Exception:  # noqa: BLE001 - the resolver's failure keeps the last answer
                pass
        return self.path


_value = Resolver()
_network = Resolver()


def set_resolvers(*, value=None, network=None) -> None:
    """The shell's resolvers (``fn() -> path or None``); each one given replaces the last (and forgets its answer)."""
    if value is not None:
        _value.set(value)
    if network is not None:
        _network.set(network)


def value_model() -> ValueModel:
    """The value model in use, loaded once per process (again when the file changes): the one the shell's
    resolver names, else ``MTG_GAME_VALUE_WEIGHTS``, else the shipped ``DEFAULT_WEIGHTS``."""
    resolved = _value()
    candidates = ([resolved] if resolved else []) + [os.environ.get("MTG_GAME_VALUE_WEIGHTS") or DEFAULT_WEIGHTS]
    for path in map(Path, candidates):  # a resolved file that went missing gives way to the next
        try:
            return model_at(path)
        except ValueModelError:
            if path.exists():
                raise
    raise ValueModelError(f"no game value model at {', '.join(map(str, candidates))} "
                          f"(train one: manage.py models train game_value)")


def network() -> NetEvaluator | None:
    """The active policy/value network, or None."""
    path = _network()
    if not path:
        return None
    try:
        return evaluator_at(path)
    except PolicyModelError:
        return None


def search_models() -> dict:
    """The learned models in use as ``recommend``'s keyword arguments: the active network (or None), the value
    model's source for the learned leaf, and the loader a worker process uses for the network."""
    return {"evaluator": network(), "leaf_model": value_model, "load_evaluator": evaluator_at}
