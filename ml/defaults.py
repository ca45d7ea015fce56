"""The model versions shipped in the repo (ml/weights/): export the active ones, register them on a fresh site."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from django.conf import settings

from ml.models import ModelVersion
from ml.registry import register_file, resolve_path, sha256_file

SHIPPED_KINDS = ("card_embeddings", "deck_diffusion")
WEIGHTS_DIR = Path(settings.BASE_DIR) / "ml" / "weights"
MANIFEST = WEIGHTS_DIR / "manifest.json"


def export_active(kinds=SHIPPED_KINDS) -> list[dict]:
    """Copy the active version of each kind into ml/weights/ and write the manifest."""
    WEIGHTS_DIR.mkdir(parents=True, exist_ok=True)
    entries = []
    for kind in kinds:
        version = ModelVersion.objects.get(kind=kind, scope="", active=True)
        name = f"{kind}.safetensors"
        shutil.copyfile(resolve_path(version.weights_path), WEIGHTS_DIR / name)
        entries.append({"kind": kind, "file": name, "sha256": version.weights_sha256, "config": version.config,
                        "metrics": version.metrics, "data_snapshot": version.data_snapshot,
                        "notes": version.notes or f"exported from {kind} v{version.version}"})
    MANIFEST.write_text(json.dumps(entries, indent=1, sort_keys=True))
    return entries


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
            log(f"{entry['kind']}: {path} is missing")
            continue
        if sha256_file(path) != entry["sha256"]:
            log(f"{entry['kind']}: {path} does not match its manifest checksum; skipped")
            continue
        if ModelVersion.objects.filter(kind=entry["kind"], weights_sha256=entry["sha256"]).exists():
            continue
        has_active = ModelVersion.objects.filter(kind=entry["kind"], scope="", active=True).exists()
        version = register_file(entry["kind"], path, entry["config"], entry.get("metrics"), activate=not has_active,
                                data_snapshot=entry.get("data_snapshot"), notes=entry.get("notes", "shipped default"))
        log(f"{entry['kind']}: registered the shipped default as v{version.version}{' (active)' if version.active else ''}")
        created.append(version)
    return created
