"""The model kinds of the registry, each registered by the app that owns it (from its ``AppConfig.ready``).

A ``Kind`` says what a version's weights file must hold given its config (``shapes(config) -> {tensor name:
shape}``, allowed ``dtypes``, ``metadata(config) -> {key: check(value) -> problem or None}``), checked on upload
before any row is written, and, for a kind trained here, how to train and evaluate it: plain functions of the
owning app, ``train(params, progress, scope) -> ModelVersion`` (registered, never activated: the caller decides)
and ``evaluate(version, params, progress) -> metrics``, called by its management commands and by the training runs
(``ml.training``); ``progress`` is an ``ml.progress.Progress``. Pure: no Django, no weights loaded.

A kind's name is what ``ModelVersion.kind`` and ``TrainingRun.kind`` hold; the registered names are the only valid
ones (``check(name)``: ``UnknownKind`` otherwise). A renamed kind keeps its old name for a release as an alias:
``register(kind, aliases=("old_name",))`` (or ``alias("old_name", "new_name")``); ``get``/``check`` of the old name
give the new kind, ``canonical`` its new name and ``renamed(old)`` the line to show ("old_name is now new_name").

Parameters given as text (``manage.py models train KIND --param key=value``) are cast to the kind's types by
``cast_parameters``: int, float, str; bool from true/false, yes/no, on/off, 1/0; list from a JSON list or
comma-separated items (numbers read as numbers); dict from a JSON object; ``Path`` (a file path) checked to exist.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ml.safetensors_check import FLOATS


class ConfigError(ValueError):
    """The config does not describe a model of this kind."""


class TrainingError(ValueError):
    """Training or evaluation cannot start or go on (bad parameters, missing data); the message says why."""


class UnknownKind(TrainingError):
    """No registered kind has this name."""


def _no_quick(scope: str) -> dict:
    return {}


@dataclass(frozen=True)
class Kind:
    name: str
    label: str = ""  # what the pages call it; empty: the name
    shapes: Callable[[dict], dict] | None = None  # None: uploads of this kind are refused
    dtypes: Mapping | frozenset = FLOATS  # allowed dtypes, for every tensor or by tensor name
    metadata: Callable[[dict], dict] | None = None  # metadata keys the loader needs, with a check for each
    train: Callable | None = None  # None: not trained here
    evaluate: Callable | None = None
    parameters: Mapping[str, type] = field(default_factory=dict)  # what a training run accepts, with its type
    evaluate_parameters: Mapping[str, type] | None = None  # None: an evaluation's parameters are not checked
    quick: Callable[[str], dict] = _no_quick  # the parameters of a tiny run (fresh sites, tests), by scope
    check_scope: Callable[[str], None] | None = None  # raises TrainingError; None: the kind has no scope
    better: Callable[[dict, dict], bool] | None = None  # (new metrics, active's metrics): does the new one beat it?


_KINDS: dict[str, Kind] = {}
_ALIASES: dict[str, str] = {}  # an old name -> the kind's name now


def register(kind: Kind, aliases: tuple[str, ...] = ()) -> Kind:
    """Register ``kind`` (again: replaces it); ``aliases``: its former names, still accepted."""
    _KINDS[kind.name] = kind
    for old in aliases:
        alias(old, kind.name)
    return kind


def alias(old: str, new: str) -> None:
    """``old`` (a kind's former name) now means ``new``."""
    if old in _KINDS:
        raise ValueError(f"{old} is a registered kind: it cannot also be an alias of {new}")
    _ALIASES[old] = new


def canonical(name: str) -> str:
    """The kind's name now (``name`` itself unless it is an alias)."""
    return _ALIASES.get(name, name)


def renamed(name: str) -> str | None:
    """The notice for an old name ("game_policy is now game_value"), None for a current or unknown one."""
    return f"{name} is now {_ALIASES[name]}" if name in _ALIASES else None


def get(name: str) -> Kind | None:
    return _KINDS.get(canonical(name))


def check(name: str) -> Kind:
    """The registered kind of ``name`` (or of its alias); ``UnknownKind`` saying which kinds exist otherwise."""
    found = get(name)
    if found is None:
        raise UnknownKind(f"unknown model kind {name!r} (registered kinds: {', '.join(names()) or 'none'})")
    return found


def names() -> list[str]:
    """The registered kinds' names, sorted."""
    return sorted(_KINDS)


def label(name: str) -> str:
    found = get(name)
    return (found.label or found.name) if found is not None else name


def choices(which: Callable[[Kind], bool] | None = None) -> list[tuple[str, str]]:
    """(name, label) of the registered kinds (those ``which`` accepts), sorted by name: the pages' choices."""
    return [(name, label(name)) for name in names() if which is None or which(_KINDS[name])]


def trainable() -> list[str]:
    return [name for name, kind in _KINDS.items() if kind.train is not None]


def uploadable() -> list[str]:
    return [name for name, kind in _KINDS.items() if kind.shapes is not None]


# --- uploads -----------------------------------------------------------------------------------------------

def need(config: dict, *keys):
    missing = [k for k in keys if k not in config]
    if missing:
        raise ConfigError(f"the config lacks {', '.join(missing)}")


def expected_shapes(kind: str, config: dict) -> dict:
    if not isinstance(config, dict):
        raise ConfigError("the config must be a JSON object")
    found = get(kind)
    if found is None or found.shapes is None:
        raise ConfigError(f"uploads of {kind} are not supported (only {', '.join(uploadable())})")
    return found.shapes(config)


def dtypes(kind: str, config: dict):
    found = get(kind)
    return found.dtypes if found is not None else FLOATS


def required_metadata(kind: str, config: dict) -> dict:
    """Metadata keys the loader needs, with a check for each: {key: (check(value) -> problem or None)}."""
    found = get(kind)
    return found.metadata(config) if found is not None and found.metadata is not None else {}


# --- training parameters -----------------------------------------------------------------------------------

def quick_parameters(kind: str, scope: str = "") -> dict:
    """A tiny run's parameters (fresh sites, tests and smoke checks)."""
    found = get(kind)
    return dict(found.quick(scope)) if found is not None else {}


TRUE, FALSE = frozenset({"true", "yes", "on", "1"}), frozenset({"false", "no", "off", "0", ""})


def cast_value(value, cast: type):
    """``value`` as a ``cast``; text (from a command line) is parsed for bool, list, dict and Path (see the top)."""
    if isinstance(value, str) and cast is bool:
        if value.strip().lower() not in TRUE | FALSE:
            raise ValueError(value)
        return value.strip().lower() in TRUE
    if isinstance(value, str) and cast in (list, dict):
        text = value.strip()
        if text.startswith(("[", "{")):
            value = json.loads(text)
        elif cast is list:
            value = [json_scalar(item.strip()) for item in text.split(",") if item.strip()]
        if not isinstance(value, cast):
            raise ValueError(value)
        return value
    if cast is Path:
        path = Path(value)
        if not path.exists():
            raise ValueError(f"{value}: no such file")
        return str(path)
    return cast(value)


def json_scalar(text: str):
    """A number (or true/false/null) as JSON reads it, any other text as itself."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if not isinstance(value, (list, dict)) else text


def type_name(cast: type) -> str:
    return "file path" if cast is Path else cast.__name__


def cast_parameters(params: dict, allowed: Mapping[str, type]) -> dict:
    """The allowed parameters cast to their types; any other (but quick, activate, notes) is refused."""
    out = {}
    for key, cast in allowed.items():
        if key in params and params[key] is not None:
            try:
                out[key] = cast_value(params[key], cast)
            except (TypeError, ValueError):
                raise TrainingError(f"parameter {key}: {params[key]!r} is not a {type_name(cast)}") from None
    unknown = set(params) - set(allowed) - {"quick", "activate", "notes"}
    if unknown:
        raise TrainingError(f"unknown parameters: {', '.join(sorted(unknown))} (allowed: {', '.join(sorted(allowed))})")
    return out


def settle(params: dict, defaults: dict) -> dict:
    """``defaults`` overridden by the parameters that are given (not None)."""
    return {**defaults, **{k: v for k, v in params.items() if v is not None}}
