"""How far a win probability can be trusted, and the map that makes it trustworthy (pure: numpy only).

- scores of probabilities ``p`` against outcomes ``y`` (1 = the seat won): :func:`brier`, :func:`log_loss`,
  :func:`ece` (expected calibration error: the share-weighted gap between the mean estimate and the share of
  wins in each of ``bins`` equal-width bins) and :func:`reliability` (those bins, for a reliability plot);
- :data:`PHASES` and :func:`phase_of`: the game's phases the scores are split by (turns 1-3, 4-7, 8+);
- :func:`fit_logistic`: a small L2-regularised logistic regression by Newton's method (the plain baseline and
  the calibration maps use it; no torch);
- :class:`Calibrator`: a per-phase Platt map, ``sigmoid(a_phase * logit(p) + b_phase)``, fitted on training
  positions and stored as a few numbers (JSON) beside a model version.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

PHASES = (("turns 1-3", 1, 3), ("turns 4-7", 4, 7), ("turns 8+", 8, 10 ** 6))
EPS = 1e-3


def phase_of(turn: int) -> str:
    for name, lo, hi in PHASES:
        if lo <= turn <= hi:
            return name
    return PHASES[0][0]


def _arrays(p, y) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if p.shape != y.shape or p.size == 0:
        raise ValueError("scores need as many outcomes as estimates, at least one")
    if np.any((p < 0) | (p > 1)) or not np.all(np.isfinite(p)):
        raise ValueError("estimates must be probabilities in [0, 1]")
    return p, y


def brier(p, y) -> float:
    p, y = _arrays(p, y)
    return float(np.mean((p - y) ** 2))


def log_loss(p, y, eps: float = EPS) -> float:
    p, y = _arrays(p, y)
    q = np.clip(p, eps, 1 - eps)
    return float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q)))


def bin_index(p, bins: int = 10) -> np.ndarray:
    """The equal-width bin of each estimate: [0, 1/bins), ..., [(bins-1)/bins, 1] (1.0 in the last bin)."""
    return np.minimum((np.asarray(p, dtype=np.float64) * bins).astype(int), bins - 1)


def reliability(p, y, bins: int = 10) -> list[dict]:
    """Per non-empty bin: its bounds, how many estimates, their mean and the share of them that won."""
    p, y = _arrays(p, y)
    idx = bin_index(p, bins)
    out = []
    for b in range(bins):
        m = idx == b
        if m.any():
            out.append({"lo": round(b / bins, 3), "hi": round((b + 1) / bins, 3), "n": int(m.sum()),
                        "mean_p": round(float(p[m].mean()), 4), "won": round(float(y[m].mean()), 4)})
    return out


def ece(p, y, bins: int = 10) -> float:
    p, y = _arrays(p, y)
    return float(sum(r["n"] * abs(r["mean_p"] - r["won"]) for r in reliability(p, y, bins)) / len(p))


def confident_wrong(p, y, edge: float = 0.1) -> float | None:
    """Of the estimates under ``edge`` or over 1 - ``edge``, the share on the losing side (None: none such)."""
    p, y = _arrays(p, y)
    m = (p < edge) | (p > 1 - edge)
    if not m.any():
        return None
    return float(np.mean((p[m] > 0.5) != (y[m] > 0.5)))


def scores(p, y, bins: int = 10) -> dict:
    p, y = _arrays(p, y)
    wrong = confident_wrong(p, y)
    return {"positions": int(len(p)), "brier": round(brier(p, y), 4), "log_loss": round(log_loss(p, y), 4),
            "ece": round(ece(p, y, bins), 4), "confident_wrong": None if wrong is None else round(wrong, 3),
            "reliability": reliability(p, y, bins)}


def logit(p) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=np.float64), EPS, 1 - EPS)
    return np.log(q / (1 - q))


def sigmoid(z) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(np.asarray(z, dtype=np.float64), -30, 30)))


def fit_logistic(x, y, l2: float = 1e-2, iterations: int = 50) -> tuple[np.ndarray, float]:
    """(weights, bias) of P(y=1) = sigmoid(x @ w + b) by Newton's method, ``l2`` on the weights only."""
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape[0] != y.size or y.size < 2:
        raise ValueError("fit_logistic needs one outcome per row, two rows or more")
    a = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(a.shape[1])
    reg = np.full(a.shape[1], l2 * len(x))
    reg[-1] = 1e-9
    for _ in range(iterations):
        q = sigmoid(a @ w)
        grad = a.T @ (q - y) + reg * w
        hess = (a * (q * (1 - q))[:, None]).T @ a + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w[:-1], float(w[-1])


@dataclass
class Calibrator:
    """``sigmoid(a[phase] * logit(p) + b[phase])`` per phase of :data:`PHASES` (identity: a=1, b=0)."""

    a: dict = field(default_factory=lambda: {name: 1.0 for name, _, _ in PHASES})
    b: dict = field(default_factory=lambda: {name: 0.0 for name, _, _ in PHASES})

    def __call__(self, p, turns) -> np.ndarray:
        z = logit(p)
        turns = np.broadcast_to(np.asarray(turns), z.shape)
        a = np.array([self.a.get(phase_of(int(t)), 1.0) for t in turns.ravel()]).reshape(z.shape)
        b = np.array([self.b.get(phase_of(int(t)), 0.0) for t in turns.ravel()]).reshape(z.shape)
        return sigmoid(a * z + b)

    def one(self, p: float, turn: int) -> float:
        return float(self(np.array([p]), np.array([turn]))[0])

    @classmethod
    def fit(cls, p, y, turns, l2: float | dict = 1e-3) -> "Calibrator":
        """Fitted per phase on (estimate, outcome, turn) of training positions; a phase with fewer than 20
        positions keeps the identity. ``l2`` pulls the slope towards 0 (a large one: the phase's share of wins
        whatever the estimate), one for every phase or ``{phase: l2}``."""
        p, y = _arrays(p, y)
        turns = np.asarray(turns).ravel()
        phases = np.array([phase_of(int(t)) for t in turns])
        out = cls()
        for name, _, _ in PHASES:
            m = phases == name
            if m.sum() >= 20 and 0 < y[m].mean() < 1:
                w, b = fit_logistic(logit(p[m])[:, None], y[m], l2[name] if isinstance(l2, dict) else l2)
                out.a[name], out.b[name] = round(float(w[0]), 5), round(b, 5)
        return out

    def to_dict(self) -> dict:
        return {"a": dict(self.a), "b": dict(self.b)}

    @classmethod
    def from_dict(cls, d: dict | None) -> "Calibrator":
        if not d:
            return cls()
        try:
            a = {str(k): float(v) for k, v in (d.get("a") or {}).items()}
            b = {str(k): float(v) for k, v in (d.get("b") or {}).items()}
        except (TypeError, ValueError, AttributeError):
            raise ValueError("a calibration map is {'a': {phase: slope}, 'b': {phase: offset}}") from None
        if not all(math.isfinite(v) for v in (*a.values(), *b.values())):
            raise ValueError("a calibration map holds non-finite numbers")
        out = cls()
        out.a.update(a)
        out.b.update(b)
        return out
