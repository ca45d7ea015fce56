"""The model kinds of the registry, each registered by the app that owns it (from its ``AppConfig.ready``).

A ``Kind`` says what a version's weights file must hold given its config (``shapes(config) -> {tensor name:
shape}``, allowed ``dtypes``, ``metadata(config) -> {key: check(value) -> problem or None}``), checked on upload
before any row is written, and, for a kind trained here, how to train and evaluate it: plain functions of the
owning app, ``train(params, progress, scope) -> ModelVersion`` (registered, never activated: the caller decides)
and ``evaluate(version, params, progress) -> metrics``, called by its management commands and by the training runs
(``ml.training``); ``progress`` is an ``ml.progress.Progress``. Pure: no Django, no weights loaded.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ml.safetensors_check import FLOATS


class ConfigError(ValueError):
    """The config does not describe a model of this kind."""


class TrainingError(ValueError):
    """Training or evaluation cannot start or go on (bad parameters, missing data); the message says why."""


def _no_quick(scope: str) -> dict:
    return {}


@dataclass(frozen=True)
class Kind:
    name: str
    shapes: Callable[[dict], dict] | None = None  # None: uploads of this kind are refused
    dtypes: Mapping | frozenset = FLOATS  # allowed dtypes, for every tensor or by tensor name
    metadata: Callable[[dict], dict] | None = None  # metadata keys the loader needs, with a check for each
    train: Callable | None = None  # None: not trained here
    evaluate: Callable | None = None
    parameters: Mapping[str, type] = field(default_factory=dict)  # what a training run accepts, with its type
    evaluate_parameters: Mapping[str, type] | None = None  # None: an evaluation's parameters are not checked
    quick: Callable[[str], dict] = _no_quick  # the parameters of a tiny run (fresh sites, tests), by scope
    check_scope: Callable[[str], None] | None = None  # raises TrainingError; None: the kind has no scope


_KINDS: dict[str, Kind] = {}
_ALIASES: dict[str, str] = {}  # a kind's old name -> its name now (kept for one release by the owning app)


def register(kind: Kind) -> Kind:
    _KINDS[kind.name] = kind
    return kind


def alias(old: str, new: str) -> None:
    """``old`` names the kind ``new`` (a renamed kind, for one release): ``get`` and ``renamed`` know it."""
    _ALIASES[old] = new


def renamed(name: str) -> str | None:
    """The kind's name now when ``name`` is an old one (``alias``), else None."""
    return _ALIASES.get(name)


def get(name: str) -> Kind | None:
    return _KINDS.get(_ALIASES.get(name, name))


def trainable() -> list[str]:
    return [name for name, kind in _KINDS.items() if kind.train is not None]


# --- uploads -----------------------------------------------------------------------------------------------

def need(config: dict, *keys):
    missing = [k for k in keys if k not in config]
    if missing:
        raise ConfigError(f"the config lacks {', '.join(missing)}")


def expected_shapes(kind: str, config: dict) -> dict:
    if not isinstance(config, dict):
        raise ConfigError("the config must be a JSON object")
    uploadable = [name for name, k in _KINDS.items() if k.shapes is not None]
    if kind not in uploadable:
        raise ConfigError(f"uploads of {kind} are not supported (only {', '.join(uploadable)})")
    return _KINDS[kind].shapes(config)


def dtypes(kind: str, config: dict):
    return _KINDS[kind].dtypes if kind in _KINDS else FLOATS


def required_metadata(kind: str, config: dict) -> dict:
    """Metadata keys the loader needs, with a check for each: {key: (check(value) -> problem or None)}."""
    found = _KINDS.get(kind)
    return found.metadata(config) if found is not None and found.metadata is not None else {}


# --- training parameters -----------------------------------------------------------------------------------

def quick_parameters(kind: str, scope: str = "") -> dict:
    """A tiny run's parameters (fresh sites, tests and smoke checks)."""
    found = _KINDS.get(kind)
    return dict(found.quick(scope)) if found is not None else {}


def cast_parameters(params: dict, allowed: Mapping[str, type]) -> dict:
    """The allowed parameters cast to their types; any other (but quick, activate, notes) is refused."""
    out = {}
    for key, cast in allowed.items():
        if key in params and params[key] is not None:
            try:
                out[key] = cast(params[key])
            except (TypeError, ValueError):
                raise TrainingError(f"parameter {key}: {params[key]!r} is not a {cast.__name__}") from None
    unknown = set(params) - set(allowed) - {"quick", "activate", "notes"}
    if unknown:
        raise TrainingError(f"unknown parameters: {', '.join(sorted(unknown))} (allowed: {', '.join(sorted(allowed))})")
    return out


def settle(params: dict, defaults: dict) -> dict:
    """``defaults`` overridden by the parameters that are given (not None)."""
    return {**defaults, **{k: v for k, v in params.items() if v is not None}}
