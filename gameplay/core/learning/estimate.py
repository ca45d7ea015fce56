"""A win estimate from the whole table: per phase of the game, a regularised logistic regression over the value
model's features of both sides, a few derived ones (each side's clock, card advantage) and the logits of the value
model and of the engine's evaluation (pure: numpy only).

``bench/game_calibration.py`` fits it on its training games (:func:`fit`) and, when it is the best calibrated
source out of fold, ships it in the value model's metadata (``info["shown"]["logistic"]``, :meth:`to_dict`);
``ValueModel.raw_shown`` then computes it for the page (source ``logistic``) with :meth:`LogisticEstimate.predict`.
Antisymmetric as the value model: the estimate for a seat is the mean of its view and one minus the opponent's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gameplay.core.learning.calibration import PHASES, fit_logistic, logit, phase_of, sigmoid

_SIDE_LEN = 16  # value._SIDE: the features of one side
# offsets within a side's block (value._SIDE's order)
_LIFE, _POISON, _HAND, _LIBRARY, _GRAVE, _LANDS, _CREATURES, _POWER, _TOUGH, _EVASIVE, _OTHERS = range(11)
DERIVED = ("me_clock", "opp_clock", "me_cards", "opp_cards", "me_blockers_vs_power", "opp_blockers_vs_power")


def derived(rows) -> np.ndarray:
    """Derived features of rows in ``value.FEATURES`` order: each side's clock (the share of the other side's life
    its board deals in a turn, evasive power counted twice; capped at 2), its cards (hand, creatures, other
    permanents, lands, in units of 10) and its toughness against the other side's power (capped at 3)."""
    x = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    me, opp = x[:, :_SIDE_LEN], x[:, _SIDE_LEN:2 * _SIDE_LEN]

    def clock(a, b):  # power is /10, life /20: damage a turn over life
        dmg = (a[:, _POWER] + a[:, _EVASIVE]) * 10
        return np.minimum(2.0, dmg / np.maximum(1.0, b[:, _LIFE] * 20))

    def cards(a):
        return (a[:, _HAND] * 7 + a[:, _CREATURES] * 5 + a[:, _OTHERS] * 5 + a[:, _LANDS] * 10) / 10

    def wall(a, b):
        return np.minimum(3.0, a[:, _TOUGH] * 10 / np.maximum(1.0, b[:, _POWER] * 10))

    return np.column_stack([clock(me, opp), clock(opp, me), cards(me), cards(opp), wall(me, opp), wall(opp, me)])


def inputs(rows, value_p, engine_p) -> np.ndarray:
    """The regression's inputs: the rows (``value.FEATURES``), :func:`derived`, logit(value model), logit(engine)."""
    x = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    return np.column_stack([x, derived(x), logit(np.asarray(value_p, dtype=np.float64).reshape(-1)),
                            logit(np.asarray(engine_p, dtype=np.float64).reshape(-1))])


@dataclass
class LogisticEstimate:
    """Per phase of :data:`calibration.PHASES`: ``sigmoid(((inputs - mean) / std) @ w + b)``."""

    mean: np.ndarray
    std: np.ndarray
    phases: dict  # phase name -> (weights, bias)

    def probability(self, x, turns) -> np.ndarray:
        """P(win) of each input row (:func:`inputs`) from its side, at its turn."""
        z = (np.atleast_2d(np.asarray(x, dtype=np.float64)) - self.mean) / self.std
        turns = np.broadcast_to(np.asarray(turns).reshape(-1), (len(z),))
        out = np.full(len(z), 0.5)
        names = np.array([phase_of(int(t)) for t in turns])
        for name, (w, b) in self.phases.items():
            m = names == name
            if m.any():
                out[m] = sigmoid(z[m] @ w + b)
        return out

    def predict(self, mine, theirs, turns) -> np.ndarray:
        """Antisymmetric: the mean of the view from ``mine`` (input rows) and one minus the view from ``theirs``."""
        return 0.5 * (self.probability(mine, turns) + 1.0 - self.probability(theirs, turns))

    def to_dict(self) -> dict:
        return {"mean": [round(float(v), 6) for v in self.mean], "std": [round(float(v), 6) for v in self.std],
                "phases": {ph: {"weights": [round(float(v), 6) for v in w], "bias": round(float(b), 6)}
                           for ph, (w, b) in self.phases.items()}}

    @classmethod
    def from_dict(cls, d: dict) -> "LogisticEstimate":
        try:
            mean, std = np.array(d["mean"], dtype=np.float64), np.array(d["std"], dtype=np.float64)
            phases = {str(ph): (np.array(p["weights"], dtype=np.float64), float(p["bias"]))
                      for ph, p in d["phases"].items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ValueError("a logistic estimate is {'mean': [...], 'std': [...], 'phases': {phase: "
                             "{'weights': [...], 'bias': b}}}") from None
        if mean.shape != std.shape or np.any(std <= 0) or any(w.shape != mean.shape for w, _ in phases.values()):
            raise ValueError("a logistic estimate's weights do not match its inputs")
        if not all(np.all(np.isfinite(a)) for a in (mean, std, *(w for w, _ in phases.values()))) or \
                not all(math.isfinite(b) for _, b in phases.values()):
            raise ValueError("a logistic estimate holds non-finite numbers")
        return cls(mean, std, phases)


def fit(x_mine, x_theirs, won, turns, l2: float = 0.05) -> LogisticEstimate:
    """Fitted on positions from both sides (``x_mine`` wins ``won``, ``x_theirs`` the opposite), per phase; a phase
    with fewer than 40 positions borrows the fit over all phases."""
    x = np.vstack([np.atleast_2d(x_mine), np.atleast_2d(x_theirs)]).astype(np.float64)
    y = np.concatenate([np.asarray(won, dtype=np.float64), 1.0 - np.asarray(won, dtype=np.float64)])
    t = np.concatenate([np.asarray(turns).reshape(-1)] * 2)
    mean, std = x.mean(axis=0), x.std(axis=0)
    std[std < 1e-6] = 1.0
    z = (x - mean) / std
    every = fit_logistic(z, y, l2=l2)
    names = np.array([phase_of(int(v)) for v in t])
    phases = {}
    for name, _, _ in PHASES:
        m = names == name
        phases[name] = fit_logistic(z[m], y[m], l2=l2) if m.sum() >= 40 and 0 < y[m].mean() < 1 else every
    return LogisticEstimate(mean, std, phases)
