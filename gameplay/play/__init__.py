"""Playing against the AI, and the advisor: the shell around the rules engine and the search of gameplay.core.

- :mod:`gameplay.play.choice`: the decks and opponents a person may choose, checked against what the
  rules engine supports.
- :mod:`gameplay.play.session`: a game, written under a short row lock, and what the person may see of it.
- :mod:`gameplay.play.advice`: the advisor, a search of the person's decision on a determinized copy.

Each imports only those above it (and this module: the error every part raises, the version of the
protocol they speak). Queueing the advisor's task is ``gameplay.tasks``'s (``enqueue_advice``).
"""
from __future__ import annotations

PROTOCOL_VERSION = 1


class PlayError(Exception):
    """A refused request. ``code``: 400 bad input, 403 not yours, 404 no such game, 409 not now
    (illegal, stale, game over), 500 the engine failed (nothing was written)."""

    def __init__(self, message: str, code: int = 400, **details):
        super().__init__(message)
        self.code = code
        self.details = details

    def to_dict(self) -> dict:
        return {"message": str(self), "code": self.code, **self.details}
