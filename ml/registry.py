"""Store, activate and load model versions (safetensors weights + JSON config).

Weights are never unpickled: they are safetensors files, loaded with ``safetensors.torch.load_file``.
``load_active`` checks the active row on every call (one indexed query) and keeps the loaded
tensors per process, so a newly activated version is picked up without a restart.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from ml.models import ModelVersion

_cache: dict[tuple[str, str], "LoadedModel"] = {}
_lock = threading.Lock()


class NoActiveModel(LookupError):
    """No version of this kind is active: train one or register the shipped default."""


@dataclass
class LoadedModel:
    version: ModelVersion
    config: dict
    tensors: dict  # name -> torch.Tensor
    metadata: dict


def model_dir() -> Path:
    return Path(settings.MTG_MODEL_DIR)


def resolve_path(stored: str) -> Path:
    path = Path(stored)
    return path if path.is_absolute() else Path(settings.BASE_DIR) / path


def _stored_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path(settings.BASE_DIR).resolve()))
    except ValueError:
        return str(path.resolve())


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def code_version() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=settings.BASE_DIR, capture_output=True,
                              text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def save_tensors(path: Path, tensors: dict, metadata: dict | None = None) -> None:
    from safetensors.torch import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    clean = {k: v.detach().contiguous().cpu() for k, v in tensors.items()}
    save_file(clean, str(path), metadata={k: v if isinstance(v, str) else json.dumps(v) for k, v in (metadata or {}).items()})
    path.chmod(0o644)  # readable by a web server running as another user


def register_file(kind: str, path: Path, config: dict, metrics: dict | None = None, scope: str = "",
                  activate: bool = False, data_snapshot: dict | None = None, notes: str = "") -> ModelVersion:
    """Add an existing safetensors file as the next version of (kind, scope)."""
    path = Path(path)
    with transaction.atomic():
        last = ModelVersion.objects.select_for_update().filter(kind=kind, scope=scope).aggregate(m=Max("version"))["m"]
        version = ModelVersion.objects.create(
            kind=kind, scope=scope, version=(last or 0) + 1, config=config, weights_path=_stored_path(path),
            weights_sha256=sha256_file(path), weights_bytes=path.stat().st_size, metrics=metrics or {},
            data_snapshot=data_snapshot or {}, code_version=code_version(), notes=notes)
        if activate:
            activate_version(version)
    return version


def save_version(kind: str, tensors: dict, config: dict, metrics: dict | None = None, scope: str = "",
                 activate: bool = False, data_snapshot: dict | None = None, metadata: dict | None = None,
                 notes: str = "") -> ModelVersion:
    """Write tensors to MTG_MODEL_DIR/<kind>/<scope>/ and register them as a new version."""
    folder = model_dir() / kind / (scope or "_")
    folder.mkdir(parents=True, exist_ok=True)
    last = ModelVersion.objects.filter(kind=kind, scope=scope).aggregate(m=Max("version"))["m"] or 0
    path = folder / f"v{last + 1}-{hashlib.sha1(json.dumps(config, sort_keys=True).encode()).hexdigest()[:8]}.safetensors"
    save_tensors(path, tensors, metadata)
    return register_file(kind, path, config, metrics, scope, activate, data_snapshot, notes)


@transaction.atomic
def activate_version(version: ModelVersion) -> ModelVersion:
    ModelVersion.objects.filter(kind=version.kind, scope=version.scope, active=True).exclude(pk=version.pk).update(active=False)
    ModelVersion.objects.filter(pk=version.pk).update(active=True)
    version.active = True
    return version


def active_version(kind: str, scope: str = "") -> ModelVersion:
    version = ModelVersion.objects.filter(kind=kind, scope=scope, active=True).first()
    if version is None:
        raise NoActiveModel(f"No active {kind} model{f' for {scope}' if scope else ''}: "
                            f"run `manage.py setup_site` (registers the shipped default) or train one.")
    return version


def load_version(version: ModelVersion) -> LoadedModel:
    from safetensors import safe_open
    from safetensors.torch import load_file

    path = resolve_path(version.weights_path)
    if not path.exists():
        raise NoActiveModel(f"Weights of {version} are missing at {path}.")
    tensors = load_file(str(path))
    with safe_open(str(path), framework="pt") as fh:
        metadata = dict(fh.metadata() or {})
    return LoadedModel(version, version.config, tensors, metadata)


def load_active(kind: str, scope: str = "") -> LoadedModel:
    """The active version's tensors, cached per process until another version becomes active."""
    version = active_version(kind, scope)
    key = (kind, scope)
    with _lock:
        cached = _cache.get(key)
        if cached is not None and cached.version.pk == version.pk and cached.version.weights_sha256 == version.weights_sha256:
            return cached
    loaded = load_version(version)
    with _lock:
        _cache[key] = loaded
    return loaded
