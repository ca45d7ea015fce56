"""The steps that bring a fresh database to a working site (``manage.py setup_site``), registered by the apps.

Each app registers its steps from its ``AppConfig.ready`` with :func:`step`; ``setup_site`` runs them in the
order of their ``order`` (then of registration), without importing any app. A step is called with one
:class:`Setup`: the command's output, ``force`` (re-run every import) and ``state``, where one step leaves what a
later one finishes (the engine cards convert in the background while the decks import)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Setup:
    """What a step is given: where to write, whether to redo what is there, and what earlier steps left."""
    stdout: Any
    stderr: Any
    style: Any
    force: bool = False
    state: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    order: int
    name: str
    run: Callable[[Setup], None]


_steps: list[Step] = []


def step(order: int, name: str, run: Callable[[Setup], None]) -> None:
    """Register ``run`` as the step ``name`` (once: a second registration under the same name replaces it)."""
    _steps[:] = [s for s in _steps if s.name != name]
    _steps.append(Step(order, name, run))


def steps() -> list[Step]:
    """The registered steps in the order they run."""
    return sorted(_steps, key=lambda s: s.order)
