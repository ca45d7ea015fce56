"""The leak scan itself (tests/leaks.py): it finds a forbidden card name wherever a payload carries it."""
from __future__ import annotations

import json

import pytest

from tests.leaks import assert_no_leak, find_leaks

FORBIDDEN = {"Lightning Bolt", "Shock", "Lim-Dûl's Vault"}


@pytest.mark.parametrize("payload", [
    {"type": "seat", "pack": [{"name": "Island"}], "next": {"pool": [{"name": "Lightning Bolt"}]}},
    {"lightning bolt": 1},  # in a key, and in another case
    ["Island", ["Cast Shock on you"]],
    json.dumps({"pool": ["Lim-Dûl's Vault"]}),  # JSON text: \u00fb escaped
    json.dumps({"pool": ["Lim-Dûl's Vault"]}).encode(),
    "<p>Lim-D&#251;l&#x27;s Vault</p>",  # HTML entities
    '<script id="x" type="application/json">{"pack": ["Lim-D\\u00fbl\'s Vault"]}</script>',  # json_script
])
def test_the_scan_finds_a_forbidden_name_anywhere(payload):
    assert find_leaks(payload, FORBIDDEN)
    with pytest.raises(AssertionError, match="may not see"):
        assert_no_leak(payload, FORBIDDEN, what="the planted payload")


@pytest.mark.parametrize("payload", [
    {"type": "status", "seats": [{"seat": 0, "picks": 3}], "set": "TST"},
    "Shockwave and Bolt the Lightning",  # a longer word, the words apart
    {"pack": None, "pool": [], "deadline": 1.5, "complete": False},
    "",
])
def test_the_scan_passes_what_names_no_forbidden_card(payload):
    assert find_leaks(payload, FORBIDDEN) == set()
    assert_no_leak(payload, FORBIDDEN)


def test_nothing_forbidden_finds_nothing():
    assert find_leaks({"name": "Lightning Bolt"}, set()) == set()
