"""Scan what a seat or player received (socket messages, API bodies, pages) for card names it may not see.

``assert_no_leak(payload, forbidden)`` walks any payload, a JSON value (dicts' keys and values, lists),
JSON or HTML text, or bytes, and fails on any forbidden name found in it: case-insensitive, as a whole
name (not inside a longer word: "Shock" is not found in "Shockwave"). Text that parses as JSON is
walked as JSON, so escaped characters are compared unescaped; HTML is compared with its entities
decoded and the JSON of its ``<script type="application/json">`` blocks walked as well.

What is forbidden is worked out by each test from the server's own state (the pod's packs and pools,
the game's hidden zones); the helpers here only find names.
"""
from __future__ import annotations

import contextlib
import html
import json
import re
from collections.abc import Iterable, Iterator

import pytest

_JSON_SCRIPT = re.compile(r"<script[^>]*type=[\"']application/json[\"'][^>]*>(.*?)</script>", re.S | re.I)


def texts(payload) -> Iterator[str]:
    """Every string in ``payload`` (JSON values, JSON or HTML text, bytes), decoded for comparison."""
    if isinstance(payload, bytes):
        payload = payload.decode("utf-8", errors="replace")
    if isinstance(payload, str):
        try:
            decoded = json.loads(payload)
        except ValueError:
            decoded = payload
        if not isinstance(decoded, str):
            yield from texts(decoded)
            return
        yield payload
        yield html.unescape(payload)
        for block in _JSON_SCRIPT.findall(payload):
            try:
                yield from texts(json.loads(html.unescape(block)))
            except ValueError:
                yield block
    elif isinstance(payload, dict):
        for key, value in payload.items():
            yield from texts(str(key))
            yield from texts(value)
    elif isinstance(payload, (list, tuple, set, frozenset)):
        for value in payload:
            yield from texts(value)
    elif payload is not None and not isinstance(payload, (bool, int, float)):
        yield str(payload)


def _pattern(names: Iterable[str]) -> re.Pattern | None:
    names = sorted({n for n in names if n and n.strip()}, key=len, reverse=True)
    if not names:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in names) + r")(?!\w)", re.IGNORECASE)


def find_leaks(payload, forbidden: Iterable[str]) -> set[str]:
    """The forbidden names found in ``payload`` (as given in ``forbidden``)."""
    forbidden = set(forbidden)
    pattern = _pattern(forbidden)
    if pattern is None:
        return set()
    by_lower = {n.lower(): n for n in forbidden}
    return {by_lower[m.group(0).lower()] for text in texts(payload) for m in pattern.finditer(text)}


def assert_no_leak(payload, forbidden: Iterable[str], what: str = "a message") -> None:
    """Fail when ``payload`` names any card of ``forbidden``."""
    found = find_leaks(payload, forbidden)
    assert not found, f"{what} names cards it may not see: {sorted(found)}"


def expect_leak(planted: bool):
    """Where a test planted a leak, the scan inside must fail (``pytest.raises``); else it must pass."""
    return pytest.raises(AssertionError, match="may not see") if planted else contextlib.nullcontext()
