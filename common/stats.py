"""Statistics the apps and benches share (pure): the Wilson score interval of a rate and the exact sign test."""
from __future__ import annotations

import math

Z95 = 1.959963984540054  # the two-sided 95% normal quantile


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float | None, float, float]:
    """Rate and Wilson score interval of ``successes`` out of ``n`` (half successes allowed).

    With ``n == 0`` the rate is None and the interval is the whole [0, 1].
    """
    if n <= 0:
        return None, 0.0, 1.0
    p = min(max(successes / n, 0.0), 1.0)
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return p, max(0.0, centre - half), min(1.0, centre + half)


def sign_test(better: int, worse: int) -> float:
    """Two-sided exact p-value (binomial, p = 1/2) that ``better`` against ``worse`` differ only by chance; ties
    are dropped before. Compared game by game on the same seeds (the flips each way), it is McNemar's exact test;
    compared deck by deck (wins and losses of one model against another), the paired sign test."""
    n = int(better) + int(worse)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(int(better), int(worse)) + 1)) / 2 ** n
    return float(min(1.0, 2 * tail))
