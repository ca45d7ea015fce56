"""The gameplay app's model kinds, registered with the model registry (``ml.kinds``) from ``GameplayConfig.ready``.

- ``game_value``: the search's value model (``gameplay.core.learning.value``: the learned leaf of the ``learned``
  level and the advisor's win estimate), trained and evaluated by ``gameplay.training.value``. Until this release
  it was called ``game_policy``; that name stays an alias for one release (``manage.py models train game_policy``
  and lookups of that kind still work, and say that it is now ``game_value``).
- ``game_policy_net``: the policy/value network (``gameplay.core.learning.network``: the PUCT prior and leaf value),
  trained and evaluated by ``gameplay.training.policy``.

What the old ``train_game_value`` and ``train_game_policy`` commands took as flags are the kinds' parameters
(``manage.py models train KIND --params '{"games": 40, "from_rows": ["rows.jsonl"]}'``).
"""
from __future__ import annotations

from gameplay.training import policy as policy_training
from gameplay.training import value as value_training
from ml import kinds


def paths(value) -> list[str]:
    """A list of file paths (one path alone is a list of one)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise TypeError("expected a path or a list of paths")


GAME_VALUE = kinds.Kind(
    value_training.KIND, label="Game value model (the search's learned leaf and win estimate)", shapes=value_training.shapes, metadata=value_training.metadata, train=value_training.train,
    evaluate=value_training.evaluate,
    parameters={"games": int, "workers": int, "seed": int, "epochs": int, "hidden": str, "weight_decay": float,
                "rows": str, "from_rows": paths, "out": str, "level": str},
    evaluate_parameters={"games": int, "workers": int, "seed": int, "level": str},
    quick=lambda scope: {"games": 4, "workers": 1, "epochs": 60, "hidden": "8", "level": "Easy"})

GAME_POLICY_NET = kinds.Kind(
    policy_training.KIND, label="Game policy/value network (search prior and leaf value)", shapes=policy_training.shapes, metadata=policy_training.metadata,
    train=policy_training.train, evaluate=policy_training.evaluate,
    parameters={"games": int, "workers": int, "seed": int, "imitate": str, "celery": bool, "epochs": int, "width": int,
                "layers": int, "heads": int, "lr": float, "batch": int, "weight_decay": float, "teacher": float,
                "records": str, "from_records": paths},
    evaluate_parameters={"games": int, "workers": int, "seed": int, "imitate": str},
    quick=lambda scope: dict(policy_training.QUICK))


def register() -> None:
    kinds.register(GAME_VALUE)
    kinds.register(GAME_POLICY_NET)
    kinds.alias(value_training.OLD_KIND, GAME_VALUE.name)
