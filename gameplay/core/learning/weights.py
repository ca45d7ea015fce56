"""The learned models a search uses, built from their files: ``search_models(value=..., network=...)``.

Which versions are in use the caller says, by their weights files: the shell asks the site's registry
(``gameplay.models_in_use``), a bench or a test names its files; this module remembers nothing of it. What it
builds is one ``search.evaluation.SearchModels``, passed down whole to the players, the review and the advisor:

- its ``leaf_model`` returns the value model: the file given, else ``MTG_GAME_VALUE_WEIGHTS``, else the shipped
  ``value.DEFAULT_WEIGHTS`` (a given file that went missing gives way to the next; ``ValueModelError`` when none
  can be read); a ``functools.partial`` of this module's function, so that it crosses to a worker process;
- its ``evaluator`` is the policy/value network in the file given, or None (no file, or one that cannot be read:
  the search then plays as it did before the network); ``load_evaluator`` is ``network.evaluator_at``.

``shipped_models()``: the models without the registry (the shipped value model, no network), what the benches and
the pure tests play with.

The loaded weights are memoized by path and modification time in ``value.model_at`` and ``network.evaluator_at``
(bounded: four files each): the same file is read once per process. Pure: no Django; imports
``gameplay.core.learning.value`` and ``network``, and the search's ``evaluation`` only.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

from gameplay.core.learning.network import NetEvaluator, PolicyModelError, evaluator_at
from gameplay.core.learning.value import DEFAULT_WEIGHTS, ValueModel, ValueModelError, model_at
from gameplay.core.search.evaluation import SearchModels


def value_paths(value: str | Path | None = None) -> tuple[str, ...]:
    """Where the value model is looked for, in order: ``value``, then ``MTG_GAME_VALUE_WEIGHTS`` or the shipped
    ``DEFAULT_WEIGHTS``."""
    return tuple(str(p) for p in ([value] if value else []) + [os.environ.get("MTG_GAME_VALUE_WEIGHTS") or DEFAULT_WEIGHTS])


def first_value_model(*paths: str) -> ValueModel:
    """The value model in the first of ``paths`` that holds one (loaded once per process, again when the file
    changes); a file that went missing gives way to the next, one that exists but cannot be read raises
    ``ValueModelError``, as does none at all."""
    for path in map(Path, paths):
        try:
            return model_at(path)
        except ValueModelError:
            if path.exists():
                raise
    raise ValueModelError(f"no game value model at {', '.join(map(str, paths))} "
                          f"(train one: manage.py models train game_value)")


def network_at(path: str | Path | None) -> NetEvaluator | None:
    """The policy/value network in ``path``, or None (no path, or a file that cannot be read)."""
    if not path:
        return None
    try:
        return evaluator_at(path)
    except PolicyModelError:
        return None


def search_models(*, value: str | Path | None = None, network: str | Path | None = None) -> SearchModels:
    """The learned models in the files given (see the module's docstring): ``value`` the value model's weights
    (None: ``MTG_GAME_VALUE_WEIGHTS`` or the shipped file), ``network`` the policy/value network's (None: none)."""
    return SearchModels(evaluator=network_at(network), leaf_model=functools.partial(first_value_model, *value_paths(value)),
                        load_evaluator=evaluator_at)


def shipped_models() -> SearchModels:
    """The models without the site's registry: the shipped value model (or ``MTG_GAME_VALUE_WEIGHTS``), no network."""
    return search_models()
