"""The model versions shipped in the repo (ml/weights/): export the active ones, register them on a fresh site."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from django.conf import settings

from ml.models import ModelVersion
from ml.registry import _stored_path, active_version, register_file, resolve_path, sha256_file

SHIPPED_KINDS = ("card_embeddings", "deck_masked", "deck_rank", "deck_diffusion", "game_value")
# kinds that work without a version: deck_masked completes with the neighbour vote (its prior) until one exists,
# so register_models does not train a quick one (manage.py models train deck_masked trains the real one)
OPTIONAL_KINDS = ("deck_masked", "deck_rank",  # deck_rank: without it the denoiser builds the sideboard
                  "game_value")  # without a version the game uses the shipped file (gameplay.models_in_use)
SCOPED_KINDS = ("draft_bot",)  # one active version per scope (e.g. "neural:BLB"), all shipped
WEIGHTS_DIR = Path(settings.BASE_DIR) / "ml" / "weights"
MANIFEST = WEIGHTS_DIR / "manifest.json"


FIGURES = "figures"  # a shipped entry's role: the version the published held-out figures come from (never activated)
HALF = "float16"  # a shipped file's ``storage`` (config): float tensors rounded to float16, cast back to float32 on load


def export_active(kinds=SHIPPED_KINDS, scoped_kinds=SCOPED_KINDS, merge: bool = False,
                  figures: ModelVersion | None = None, half: bool = False) -> list[dict]:
    """Copy the active version of each kind (and of each scope of the scoped kinds) into ml/weights/
    and write the manifest. ``merge``: keep the manifest's entries of the other kinds (ship one kind alone).
    ``figures``: also ship this version of the kind as ``<kind>.figures.safetensors`` (role ``figures``: the
    version fitted on a dated split whose held-out figures the docs quote, when the active one is a refit on every
    deck); registered on setup, never activated. ``half``: the figures file's float tensors are stored as float16
    (config ``storage``: float16; ``ml.registry.load_version`` casts them back to float32) so that both versions fit
    in the repository's weight budget; its manifest checksum is the float16 file's."""
    WEIGHTS_DIR.mkdir(parents=True, exist_ok=True)
    versions = list(ModelVersion.objects.filter(kind__in=kinds, scope="", active=True).order_by("kind"))
    versions += list(ModelVersion.objects.filter(kind__in=scoped_kinds, active=True).order_by("kind", "scope"))
    roles = {version.pk: "" for version in versions}
    if figures is not None and figures.pk not in roles:
        versions.append(figures)
        roles[figures.pk] = FIGURES
    entries = []
    for version in versions:
        name = (f"{version.kind}.safetensors" if not version.scope else
                f"drafts/{version.scope.replace(':', '-')}.safetensors")
        if roles.get(version.pk) == FIGURES:
            name = f"{version.kind}.{FIGURES}.safetensors"
        (WEIGHTS_DIR / name).parent.mkdir(parents=True, exist_ok=True)
        # read again: copying an earlier version of this loop may have moved this one's file out of the way
        # (_move_registered_out), and the stale path would now hold that other version's weights
        version.refresh_from_db(fields=["weights_path"])
        source, target = resolve_path(version.weights_path), WEIGHTS_DIR / name
        halved = half and roles.get(version.pk) == FIGURES
        if halved:
            _move_registered_out(target, keep=version)
            sha = _write_half(source, target, version)
        else:
            if source.resolve() != target.resolve():  # a shipped default registered in place is already there
                _move_registered_out(target, keep=version)
                shutil.copyfile(source, target)
            sha = version.weights_sha256
            if sha256_file(target) != sha:  # never a manifest entry its file does not match
                raise RuntimeError(f"{target} does not hold {version.kind} v{version.version}'s weights "
                                   f"(checksum mismatch after the copy)")
        config = {**version.config, "role": FIGURES} if roles.get(version.pk) == FIGURES else version.config
        if halved:
            config = {**config, "storage": HALF}
        entries.append({"kind": version.kind, "scope": version.scope, "file": name, "sha256": sha,
                        "config": config, "metrics": version.metrics, "data_snapshot": version.data_snapshot,
                        "notes": version.notes})
    written = entries
    if merge:
        exported = set(kinds) | set(scoped_kinds)
        written = [e for e in shipped() if e["kind"] not in exported] + entries
    MANIFEST.write_text(json.dumps(written, indent=1, sort_keys=True))
    return entries


def _write_half(source: Path, target: Path, version: ModelVersion) -> str:
    """Write ``source``'s tensors to ``target`` with the float ones as float16 (the others as they are); the new
    file's checksum. Refuses a source that is not the version's weights, or a copy that does not read back as them."""
    import torch  # noqa: PLC0415 torch: kept off Django start-up
    from safetensors import safe_open  # noqa: PLC0415 with torch: kept off Django start-up
    from safetensors.torch import load_file, save_file  # noqa: PLC0415 with torch: kept off Django start-up

    if sha256_file(source) != version.weights_sha256:
        raise RuntimeError(f"{source} does not hold {version.kind} v{version.version}'s weights (checksum mismatch)")
    tensors = load_file(str(source))
    with safe_open(str(source), framework="pt") as fh:
        metadata = dict(fh.metadata() or {})
    halved = {k: (v.to(torch.float16) if v.is_floating_point() else v).contiguous() for k, v in tensors.items()}
    save_file(halved, str(target), metadata=metadata or None)
    back = load_file(str(target))
    if set(back) != set(tensors) or any(not torch.equal(back[k], halved[k]) for k in tensors):
        raise RuntimeError(f"{target} does not read back as {version.kind} v{version.version}'s float16 weights")
    return sha256_file(target)


def _move_registered_out(target: Path, keep: ModelVersion) -> None:
    """Before ``target`` (a shipped file) is overwritten: the versions registered in place on it (an earlier
    shipped default) get their own copy under MTG_MODEL_DIR, so exporting never changes the weights of a
    version that may still be rolled back to."""
    if not target.exists():
        return
    others = [v for v in ModelVersion.objects.exclude(pk=keep.pk)
              if resolve_path(v.weights_path).resolve() == target.resolve()]
    if not others:
        return
    kept = Path(settings.MTG_MODEL_DIR) / others[0].kind / f"shipped-{others[0].weights_sha256[:16]}.safetensors"
    kept.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(target, kept)
    for other in others:
        other.weights_path = _stored_path(kept)
        other.save(update_fields=["weights_path"])


def shipped() -> list[dict]:
    if not MANIFEST.exists():
        return []
    return json.loads(MANIFEST.read_text())


def register_shipped(log=print) -> list[ModelVersion]:
    """Register (and activate when nothing of that kind is active) each shipped file not registered yet."""
    created = []
    for entry in shipped():
        path = WEIGHTS_DIR / entry["file"]
        if not path.exists():
            log(f"{entry['kind']} {entry.get('scope', '')}: {path} is missing")
            continue
        if sha256_file(path) != entry["sha256"]:
            log(f"{entry['kind']}: {path} does not match its manifest checksum; skipped")
            continue
        scope = entry.get("scope", "")
        if ModelVersion.objects.filter(kind=entry["kind"], scope=scope, weights_sha256=entry["sha256"]).exists():
            continue
        has_active = active_version(entry["kind"], scope, required=False) is not None
        figures = (entry.get("config") or {}).get("role") == FIGURES
        version = register_file(entry["kind"], path, entry["config"], entry.get("metrics"), scope=scope,
                                activate=not has_active and not figures, data_snapshot=entry.get("data_snapshot"),
                                notes=entry.get("notes", ""))
        log(f"{entry['kind']}{f'[{scope}]' if scope else ''}: registered the shipped default as v{version.version}{' (active)' if version.active else ''}")
        created.append(version)
    return created
