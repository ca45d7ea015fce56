"""The sample decks: real decks whose every card the rules engine supports
(``MTG_DATA_DIR/game/phase_supported_pauper_decks.json``: ``{name: {"format", "main": [[card, count], ...], ...}}``).

``sample_decks(data_dir)`` is the one reader the play page, the gauntlet, the training, the benches and the tests
share: ``{}`` when the file is missing, read again only when it changes (a memo keyed by the path and its
modification time, ``_load``; the dict is shared: do not change it).
Pure: no Django (the shell passes its ``MTG_DATA_DIR``).
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

SAMPLE_FILE = Path("game") / "phase_supported_pauper_decks.json"


def sample_decks(data_dir: str | Path) -> dict[str, dict]:
    """The sample decks under ``data_dir`` by name, ``{}`` when there is no such file."""
    path = Path(data_dir) / SAMPLE_FILE
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return {}
    return _load(str(path), stamp)


@functools.lru_cache(maxsize=2)
def _load(path: str, stamp: float) -> dict[str, dict]:
    """The decks file at ``path`` as it was at modification time ``stamp`` (read once per process and version)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))
