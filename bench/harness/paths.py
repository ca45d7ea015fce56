"""Where things are: the repository root, the results folder, the data folder; and Django's set-up."""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"


def data_dir() -> Path:
    """MTG_DATA_DIR, else the shared data beside the checkout (as the settings' default)."""
    return Path(os.environ.get("MTG_DATA_DIR") or ROOT.parent / "shared" / "data")


def command(name: str, argv: list[str] | None = None) -> str:
    """The command line that ran benchmark ``name``, as recorded in its result."""
    return f"python -m bench.{name} " + shlex.join(sys.argv[1:] if argv is None else argv)


def setup_django(settings: str = "mtgsite.settings", *, force: bool = False) -> None:
    """``django.setup()`` with ``settings`` (only where DJANGO_SETTINGS_MODULE is unset, unless ``force``)."""
    if force:
        os.environ["DJANGO_SETTINGS_MODULE"] = settings
    else:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", settings)
    import django  # noqa: PLC0415 - benches without Django never import it

    django.setup()
