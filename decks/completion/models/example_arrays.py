"""Training examples kept as named numpy arrays, one row per example (pure numpy).

``FieldArrays`` is the base of the rankers' example tables (``deckrank.Examples``, ``mainrank.MainExamples``): a
dataclass whose ``FIELDS`` name its arrays, all sharing the first axis. It stacks parts, takes rows, and writes /
reads them by name for ``np.savez`` caches."""
from __future__ import annotations

import numpy as np


class FieldArrays:
    FIELDS: tuple[str, ...] = ()

    def __len__(self) -> int:
        return getattr(self, self.FIELDS[0]).shape[0]

    @classmethod
    def stack(cls, parts: list) -> "FieldArrays":
        return cls(*(np.concatenate([getattr(p, k) for p in parts]) for k in cls.FIELDS))

    def subset(self, idx) -> "FieldArrays":
        return type(self)(*(getattr(self, k)[idx] for k in self.FIELDS))

    def arrays(self, prefix: str = "") -> dict:
        """The arrays by name (``prefix`` + field), for ``np.savez``."""
        return {f"{prefix}{k}": getattr(self, k) for k in self.FIELDS}

    @classmethod
    def from_arrays(cls, z, prefix: str = "") -> "FieldArrays":
        """The examples ``arrays(prefix)`` wrote (``z``: an opened ``np.load`` file or a dict)."""
        return cls(*(z[f"{prefix}{k}"] for k in cls.FIELDS))
