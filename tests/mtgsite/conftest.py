"""Fixtures of the site-wide tests (the authorization matrix, the fuzzing)."""
from __future__ import annotations

import pytest


@pytest.fixture
def unthrottled(settings):
    """Requests as fast as a test sends them. The matrix and the fuzz send hundreds; when the site gets rate
    limits (issue 18, mtgsite/limits.py), they are lifted here, in one line (their setting)."""
    return settings
