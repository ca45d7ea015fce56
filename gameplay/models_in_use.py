"""Which learned models the game uses now: the registry's active ``game_value`` and ``game_policy_net`` versions,
built into the one ``SearchModels`` a search is handed (``search_models()``).

The shell asks here once per request or job (the advice, a review, a game against a search player, a worker's
part of a spread search, a self-play game, a yardstick game) and passes what it gets down to the pure core
(``gameplay.core``), which never looks a model up. The registry is asked at most every ``RESOLVE_SECONDS`` per
kind (a registry that fails keeps the last answer), so a version activated on the models page is in use within
seconds, in every process; ``forget()`` drops the last answers (a test that has just activated a version).

- the value model: the active ``game_value`` version's file, else ``MTG_GAME_VALUE_WEIGHTS``, else the shipped
  ``gameplay.core.learning.value.DEFAULT_WEIGHTS``;
- the policy/value network: the active ``game_policy_net`` version, or none (the search plays as before it).
"""
from __future__ import annotations

import math
import threading
import time

from gameplay.core.learning.weights import search_models as models_from_files
from gameplay.core.search.evaluation import SearchModels
from ml import registry

RESOLVE_SECONDS = 5.0
KINDS = ("game_value", "game_policy_net")

_lock = threading.Lock()
_answers: dict[str, tuple[float, str | None]] = {}  # kind -> (when asked, the active version's weights file)


def active_weights(kind: str) -> str | None:
    """The weights file of ``kind``'s active version (None: none active), asked of the registry now."""
    version = registry.active_version(kind, required=False)
    return str(registry.resolve_path(version.weights_path)) if version is not None else None


def _weights(kind: str) -> str | None:
    now = time.monotonic()
    with _lock:
        at, path = _answers.get(kind, (-math.inf, None))
        if now - at < RESOLVE_SECONDS:
            return path
    try:
        path = active_weights(kind)
    except Exception:  # noqa: BLE001 - the registry's failure (a database down) keeps the last answer
        pass
    with _lock:
        _answers[kind] = (now, path)
    return path


def forget() -> None:
    """Drop the last answers: the next ``search_models()`` asks the registry again."""
    with _lock:
        _answers.clear()


def search_models() -> SearchModels:
    """The learned models in use now (see the module's docstring), built once for the caller to pass down."""
    return models_from_files(value=_weights("game_value"), network=_weights("game_policy_net"))
