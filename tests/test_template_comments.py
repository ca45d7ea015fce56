"""Django's ``{# #}`` comment ends on its own line: one opened and not closed there is shown to the visitor as text
(issue 35: the engine panel's comment on every card and deck page). Multi-line comments use ``{% comment %}``."""
from __future__ import annotations

from pathlib import Path

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


def test_every_short_comment_closes_on_its_own_line():
    open_comments = [f"{path.relative_to(TEMPLATES)}:{n}" for path in sorted(TEMPLATES.rglob("*.html"))
                     for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                     if "{#" in line and "#}" not in line.split("{#", 1)[1]]
    assert not open_comments, f"multi-line {{# #}} comments (use {{% comment %}}): {open_comments}"
