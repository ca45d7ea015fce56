"""The sample decks: real decks whose every card the rules engine supports
(``MTG_DATA_DIR/game/phase_supported_pauper_decks.json``: ``{name: {"format", "main": [[card, count], ...], ...}}``).

``sample_decks(data_dir)`` is the one reader the play page, the gauntlet, the training, the benches and the tests
share: ``{}`` when the file is missing, read again only when it changes (the dict is shared: do not change it).
Pure: no Django (the shell passes its ``MTG_DATA_DIR``).
"""
from __future__ import annotations

import json
from pathlib import Path

SAMPLE_FILE = Path("game") / "phase_supported_pauper_decks.json"

_read: dict = {}


def sample_decks(data_dir: str | Path) -> dict[str, dict]:
    """The sample decks under ``data_dir`` by name, ``{}`` when there is no such file."""
    path = Path(data_dir) / SAMPLE_FILE
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return {}
    if _read.get("key") != (str(path), stamp):
        _read.update(key=(str(path), stamp), decks=json.loads(path.read_text(encoding="utf-8")))
    return _read["decks"]
