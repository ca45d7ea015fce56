"""Store, activate and load model versions (safetensors weights + JSON config).

Weights are never unpickled: they are safetensors files, loaded with ``safetensors.torch.load_file``.
``load_active`` checks the active row on every call (one indexed query) and keeps the loaded
tensors per process, so a newly activated version is picked up without a restart.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Max, ProtectedError
from safetensors import safe_open

from ml import kinds
from ml.models import ActivationEvent, ModelVersion
from ml.safetensors_check import UploadRejected, check_tensors, read_header

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
    from safetensors.torch import save_file  # noqa: PLC0415 imports torch (seconds): kept off Django start-up

    path.parent.mkdir(parents=True, exist_ok=True)
    clean = {k: v.detach().contiguous().cpu() for k, v in tensors.items()}
    save_file(clean, str(path), metadata={k: v if isinstance(v, str) else json.dumps(v) for k, v in (metadata or {}).items()})
    path.chmod(0o644)  # readable by a web server running as another user


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{max(n / 1e3, 0.1):.1f} kB"


def _headline_metric(metrics: dict) -> str:
    """The one figure that says how good a version is, from what its trainer recorded."""
    top1 = ((metrics.get("held_out") or {}).get("all") or {}).get("top1")
    if top1 is not None:
        return f"held-out top-1 {top1:.3f}"
    for key, label in (("classifier_top1_noisy", "card classifier top-1 on noisy vectors"),
                       ("val_loss", "validation loss"), ("valid_log_loss", "validation log-loss"),
                       ("val_recall", "validation recall")):
        if isinstance(metrics.get(key), (int, float)):
            return f"{label} {metrics[key]:.3f}"
    return ""


def describe_version(kind: str, scope: str, metrics: dict, data_snapshot: dict, weights_bytes: int) -> str:
    """What a version is, for its notes when nobody wrote any: kind, the data it learned from, size, key metric."""
    data, metrics = data_snapshot or {}, metrics or {}
    label = kinds.label(kind) + (f" {scope}" if scope else "")
    decks = data.get("train_decks") or metrics.get("train_decks")
    picks = data.get("train_rows") or metrics.get("refit_picks") or metrics.get("train_picks")
    if decks:
        learned = f"{decks:,} decks" + (f" first seen before {data['split_date']}" if data.get("split_date") else "")
    elif picks:
        learned = f"{picks:,} picks" + (f" of {data['logs']}" if isinstance(data.get("logs"), str) else "")
    elif data.get("games"):
        learned = f"{data['games']} self-play games"
    elif data.get("cards"):
        learned = f"{data['cards']:,} cards"
    else:
        learned = ""
    parts = [label, f"trained on {learned}" if learned else "", _size(weights_bytes), _headline_metric(metrics)]
    return " · ".join(p for p in parts if p)


def register_file(kind: str, path: Path, config: dict, metrics: dict | None = None, scope: str = "",
                  activate: bool = False, data_snapshot: dict | None = None, notes: str = "",
                  user: str = "") -> ModelVersion:
    """Add an existing safetensors file as the next version of (kind, scope); without notes, they say
    what the version is (``describe_version``)."""
    path = Path(path)
    size = path.stat().st_size
    with transaction.atomic():
        last = ModelVersion.objects.select_for_update().filter(kind=kind, scope=scope).aggregate(m=Max("version"))["m"]
        version = ModelVersion.objects.create(
            kind=kind, scope=scope, version=(last or 0) + 1, config=config, weights_path=_stored_path(path),
            weights_sha256=sha256_file(path), weights_bytes=size, metrics=metrics or {},
            data_snapshot=data_snapshot or {}, code_version=code_version(),
            notes=notes or describe_version(kind, scope, metrics, data_snapshot, size))
        if activate:
            activate_version(version, user=user)
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
def activate_version(version: ModelVersion, user: str = "", action: str = "activate",
                     previous: ModelVersion | None = None) -> ModelVersion:
    """Make ``version`` the one active version of its (kind, scope) and record the activation
    (``previous``: what was active before, unless a rollback says otherwise)."""
    current = (ModelVersion.objects.select_for_update().filter(kind=version.kind, scope=version.scope, active=True)
               .exclude(pk=version.pk).first())
    already = ModelVersion.objects.filter(pk=version.pk, active=True).exists()
    if current is not None:
        ModelVersion.objects.filter(pk=current.pk).update(active=False)
    ModelVersion.objects.filter(pk=version.pk).update(active=True)
    version.active = True
    if not already or action == "rollback":
        ActivationEvent.objects.create(kind=version.kind, scope=version.scope, version=version, action=action,
                                       previous=previous if action == "rollback" else current, user=user or "")
    return version


class RegistryError(ValueError):
    """A registry operation that is not allowed (the message says why)."""


def rollback(kind: str, scope: str = "", user: str = "") -> ModelVersion:
    """Activate the version that was active before the current one (walks back through the history:
    rolling back twice goes two activations back)."""
    with transaction.atomic():
        current = ModelVersion.objects.select_for_update().filter(kind=kind, scope=scope, active=True).first()
        if current is None:
            raise RegistryError(f"No active {kind}{f' [{scope}]' if scope else ''} version to roll back from.")
        event = ActivationEvent.objects.filter(version=current).order_by("-id").first()
        target = event.previous if event is not None else None
        if target is None and event is None:  # versions activated before the history existed: the next older one
            target = (ModelVersion.objects.filter(kind=kind, scope=scope, version__lt=current.version)
                      .order_by("-version").first())
        if target is None:
            raise RegistryError(f"{current} has no earlier active version to roll back to.")
        before = ActivationEvent.objects.filter(version=target).order_by("-id").first()
        activate_version(target, user=user, action="rollback", previous=before.previous if before else None)
        return target


def references(version: ModelVersion) -> dict[str, int]:
    """Rows that point at this version (jobs, drafts, training runs), by model: {label: count}."""
    out = {}
    for rel in version._meta.related_objects:
        if rel.related_model.__name__ == "ActivationEvent":
            continue  # history rows go with the version
        count = rel.related_model._default_manager.filter(**{rel.field.name: version}).count()
        if count:
            out[rel.related_model._meta.verbose_name_plural] = count
    return out


def delete_version(version: ModelVersion) -> None:
    """Delete an unused version and its weights file (a file under MTG_MODEL_DIR only; shipped files stay).
    Refused for the active version and for one that jobs, drafts or runs refer to."""
    version.refresh_from_db()
    if version.active:
        raise RegistryError(f"{version} is active: activate another version (or roll back) before deleting it.")
    refs = references(version)
    if refs:
        raise RegistryError(f"{version} is in use and is kept: referenced by "
                            + ", ".join(f"{n} {label}" for label, n in refs.items()) + ".")
    path = resolve_path(version.weights_path)
    shared = ModelVersion.objects.filter(weights_path=version.weights_path).exclude(pk=version.pk).exists()
    try:
        version.delete()
    except ProtectedError as exc:
        raise RegistryError(f"{version} is in use and is kept ({exc.args[0]}).") from None
    try:
        if not shared and path.exists() and path.resolve().is_relative_to(model_dir().resolve()):
            path.unlink()
    except OSError:
        pass


def upload_version(kind: str, scope: str, file, config: dict, notes: str = "", activate: bool = False,
                   user: str = "", metrics: dict | None = None) -> ModelVersion:
    """Check an uploaded safetensors file (size, header, tensors against the kind's config; never
    unpickled, never fully loaded) and register it. ``file``: a path or a file object (e.g. Django's
    UploadedFile). Raises ``UploadRejected`` with the reason; nothing is written then."""
    limit = int(settings.MTG_MODEL_UPLOAD_MAX_BYTES)
    if kinds.get(kind) is None:
        raise UploadRejected(f"Unknown kind {kind!r} (registered kinds: {', '.join(kinds.names())}).")
    kind = kinds.canonical(kind)
    if isinstance(config, str):
        try:
            config = json.loads(config or "{}")
        except ValueError as exc:
            raise UploadRejected(f"The config is not valid JSON: {exc}.") from None
    try:
        expected = kinds.expected_shapes(kind, config)
    except kinds.ConfigError as exc:
        raise UploadRejected(f"The config does not fit {kind}: {exc}.") from None
    if kind == "draft_bot" and ":" not in scope:
        raise UploadRejected("A draft bot's scope is FAMILY:SET, e.g. neural:BLB.")
    with contextlib.ExitStack() as files:  # a path is opened (and closed) here, a file object is the caller's
        fh = files.enter_context(open(file, "rb")) if isinstance(file, (str, Path)) else file
        size = getattr(fh, "size", None)
        if size is None:
            size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise UploadRejected(f"The file is {size / 1e6:.1f} MB; uploads are limited to {limit / 1e6:.0f} MB "
                                 f"(MTG_MODEL_UPLOAD_MAX_BYTES).")
        fh.seek(0)
        header = read_header(fh, size)
        problems = check_tensors(header, expected, kinds.dtypes(kind, config))
        for key, check in kinds.required_metadata(kind, config).items():
            problem = check(header.metadata[key]) if key in header.metadata else f"metadata {key!r} is missing"
            if problem:
                problems.append(problem)
        if problems:
            raise UploadRejected("The weights do not match the config: " + "; ".join(problems[:8])
                                 + (f" (and {len(problems) - 8} more)" if len(problems) > 8 else "") + ".")
        folder = model_dir() / kind / (scope.replace(":", "-") or "_")
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"upload-{uuid.uuid4().hex[:12]}.safetensors"
        fh.seek(0)
        descriptor, part = tempfile.mkstemp(dir=folder, suffix=".part")
        try:
            with os.fdopen(descriptor, "wb") as tmp:
                written = 0
                while True:
                    block = fh.read(1 << 20)
                    if not block:
                        break
                    written += len(block)
                    if written > limit:
                        raise UploadRejected("The file grew past the size limit while it was copied.")
                    tmp.write(block)
            os.chmod(part, 0o644)
            os.replace(part, target)
        except BaseException:
            Path(part).unlink(missing_ok=True)
            raise
    try:
        return register_file(kind, target, config, metrics or {}, scope=scope, activate=activate,
                             data_snapshot={"uploaded_by": user} if user else {},
                             notes=notes, user=user)
    except BaseException:
        target.unlink(missing_ok=True)
        raise


def active_version(kind: str, scope: str = "", *, required: bool = True) -> ModelVersion | None:
    """The active version of ``kind`` (for ``scope``): the one registry call every app asks it by. None active:
    :class:`NoActiveModel` with what to do, or None when not ``required``."""
    version = ModelVersion.objects.filter(kind=kind, scope=scope, active=True).first()
    if version is None and required:
        raise NoActiveModel(f"No active {kind} model{f' for {scope}' if scope else ''}: "
                            f"run `manage.py setup_site` (registers the shipped default) or train one.")
    return version


def load_version(version: ModelVersion) -> LoadedModel:
    from safetensors.torch import load_file  # noqa: PLC0415 imports torch (seconds): kept off Django start-up

    path = resolve_path(version.weights_path)
    if not path.exists():
        raise NoActiveModel(f"Weights of {version} are missing at {path}.")
    tensors = load_file(str(path))
    if (version.config or {}).get("storage") == "float16":  # shipped at half size (ml.defaults.HALF): computed in float32
        import torch  # noqa: PLC0415 loaded already by safetensors.torch

        tensors = {k: (v.float() if v.dtype == torch.float16 else v) for k, v in tensors.items()}
    with safe_open(str(path), framework="pt") as fh:
        metadata = dict(fh.metadata() or {})
    return LoadedModel(version, version.config, tensors, metadata)


def _same_row(a: ModelVersion, b: ModelVersion) -> bool:
    return (a.pk == b.pk and a.weights_sha256 == b.weights_sha256 and a.created == b.created
            and a.config == b.config)


def load_active(kind: str, scope: str = "") -> LoadedModel:
    """The active version's tensors, cached per process until another version becomes active. A hit needs the
    same row as written: id, weights, creation time and config (SQLite reuses a rolled-back row's id, and a
    deterministic training writes the same weights again)."""
    version = active_version(kind, scope)
    key = (kind, scope)
    with _lock:
        cached = _cache.get(key)
        if cached is not None and _same_row(cached.version, version):
            return cached
    loaded = load_version(version)
    with _lock:
        _cache[key] = loaded
    return loaded
