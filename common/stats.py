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


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's log-likelihood-ratio bounds of a sequential probability ratio test: accept H0 at or below the first,
    H1 at or above the second (alpha = beta = 0.05: -2.944 and +2.944)."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError("alpha and beta must lie strictly between 0 and 1")
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def sprt(better: int, worse: int, p0: float = 0.5, p1: float = 0.65, alpha: float = 0.05,
         beta: float = 0.05) -> dict:
    """The SPRT over discordant pairs (ties dropped, as in the sign test): each discordant pair is a Bernoulli trial,
    "better" with probability p. H0: p = ``p0`` against H1: p = ``p1``. Returns the log-likelihood ratio, the bounds
    and the state ("H1 accepted", "H0 accepted" or "running"), as fishtest settles a patch on game pairs.

    The LLR after ``better`` successes and ``worse`` failures is
    better * ln(p1 / p0) + worse * ln((1 - p1) / (1 - p0)); the test stops the first time it leaves (lower, upper).
    Given the counts only (not their order), the state is judged on the totals: a run checks after every pair, so
    the totals it stops at are the ones that first crossed."""
    if not (0 < p0 < 1 and 0 < p1 < 1 and p0 != p1):
        raise ValueError("p0 and p1 must differ and lie strictly between 0 and 1")
    if better < 0 or worse < 0:
        raise ValueError("counts cannot be negative")
    lower, upper = sprt_bounds(alpha, beta)
    llr = better * math.log(p1 / p0) + worse * math.log((1 - p1) / (1 - p0))
    state = "H1 accepted" if llr >= upper else "H0 accepted" if llr <= lower else "running"
    return {"llr": round(llr, 4), "lower": round(lower, 4), "upper": round(upper, 4), "state": state,
            "better": int(better), "worse": int(worse), "discordant": int(better) + int(worse),
            "p0": p0, "p1": p1, "alpha": alpha, "beta": beta}


def sprt_path(outcomes, **kwargs) -> dict:
    """The SPRT run over discordant outcomes in the order they came (True: better, False: worse): it stops at the
    first crossing, so outcomes after it do not count. Returns :func:`sprt`'s dict of the totals at the stop (or at
    the end), with ``stopped_at`` (how many outcomes were read; None while running) and the LLR after each."""
    better = worse = 0
    trace = []
    for i, outcome in enumerate(outcomes, 1):
        better += bool(outcome)
        worse += not outcome
        result = sprt(better, worse, **kwargs)
        trace.append(result["llr"])
        if result["state"] != "running":
            return {**result, "stopped_at": i, "trace": trace}
    return {**sprt(better, worse, **kwargs), "stopped_at": None, "trace": trace}
