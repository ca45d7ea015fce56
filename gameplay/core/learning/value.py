"""A learned value of a position: P(``seat`` wins) from what is on the table, in well under a millisecond.

The engine's own evaluation, squashed by ``EVAL_SCALE``, predicts the winner of a game little
better than a coin late in a game, and a two-turn rollout barely improves on it at 50,000x the cost
(``bench/eval_quality.py``; the squash itself is ``gameplay.core.search.evaluation.win_probability``).
This module holds the learned way to score a leaf (``SearchConfig.leaf == "learned"``):

- ``features(state, seat, evaluation)``: a fixed-length description of the position from ``seat``'s
  side, read from the engine's state JSON: for each side life, cards in hand, library and graveyard,
  lands, creatures and their power and toughness (evasive power apart), other permanents, and what
  is left of its deck (hand + library: share of lands and creatures, creatures' mean power, mean
  mana value); then the turn, who is on the play, whose turn it is, and the engine's evaluation.
  The deck composition lets the model learn the matchup, which decides most games between these
  decks; the rest places the position within it.
- ``ValueModel``: a small multilayer perceptron over those features (numpy at inference, trained
  with torch by ``fit``), stored as safetensors with the feature names and the normalisation in
  its metadata. ``predict`` is antisymmetric by construction: it averages the model's view from
  ``seat`` with one minus its view from the opponent, so both seats' estimates sum to one.

The page shows ``shown_probability``: the source ``bench/game_calibration.py`` found best calibrated (this model,
the engine's squashed evaluation or a plain logistic baseline, ``info["shown"]``) through a per-phase calibration
map fitted on varied training games (``info["calibration"]``, ``gameplay.core.learning.calibration``), over honest
copies with its spread (``position_detail``: "uncertain" when the copies disagree).

Trained on self-play positions (``gameplay.core.matches.selfplay``) by ``manage.py models train game_value``
(``gameplay/training/value.py``); measured against the static evaluation and rollouts by
``bench/eval_quality.py``. Which version is in use the caller says, by its file (``learning.weights``; the shell
asks the registry: ``gameplay.models_in_use``).
Pure: no Django; imports ``gameplay.core.engine``, ``gameplay.core.search.evaluation`` and this package's pure
numpy modules only.
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

from gameplay.core.engine.adapter import EngineError, determinize
from gameplay.core.learning.calibration import Calibrator, logit, phase_of
from gameplay.core.learning.estimate import LogisticEstimate
from gameplay.core.learning.estimate import inputs as estimate_inputs
from gameplay.core.search.evaluation import win_probability

FORMAT = "game-value-v1"
# the shipped model, calibrated on varied held-out-style games (``bench/game_calibration.py``), registered on setup
# as the first game_value version (ml/weights/manifest.json); MTG_GAME_VALUE_WEIGHTS points elsewhere
DEFAULT_WEIGHTS = Path(__file__).resolve().parents[3] / "ml" / "weights" / "game_value.safetensors"
# the first shipped model (sample-deck self-play only, uncalibrated): the bench's reference
V1_WEIGHTS = DEFAULT_WEIGHTS.with_name("game_value_v1.safetensors")
# the copies of a position disagree when their estimates span this much: the page says "uncertain"
UNCERTAIN_SPREAD = 0.25
# what the page says the estimate is made of, per shown source (``ValueModel.shown_label``)
SOURCE_LABELS = {"value": "value model", "engine": "engine evaluation", "engine_both": "engine evaluation",
                 "baseline": "life, hand and board", "blend": "value model and engine evaluation",
                 "logistic": "whole-table regression"}
EVASIVE = frozenset({"Flying", "Menace", "Shadow", "Fear", "Intimidate", "Skulk", "Horsemanship"})

_SIDE = ("life", "poison", "hand", "library", "graveyard", "lands", "creatures", "power", "toughness",
         "evasive_power", "other_permanents", "hand_lands", "deck_land_share", "deck_creature_share",
         "deck_creature_power", "deck_mana_value")
FEATURES = tuple(f"me_{n}" for n in _SIDE) + tuple(f"opp_{n}" for n in _SIDE) + (
    "turn", "on_play", "my_turn", "evaluation")


def read_weights(path: Path, framework: str, error: type[Exception]) -> tuple[dict, dict]:
    """(metadata, tensors) of a safetensors file, tensors only (nothing executed); ``error`` with the reason
    when it cannot be read. Shared by the value model and the policy network (``gameplay.core.learning.network``)."""
    try:
        with safe_open(str(path), framework=framework) as fh:
            return fh.metadata() or {}, {name: fh.get_tensor(name) for name in fh.keys()}
    except (OSError, SafetensorError, ValueError, RuntimeError) as exc:
        raise error(f"{path.name} is not a readable safetensors file: {exc}") from None


class ValueModelError(ValueError):
    """A weights file that is not a value model of this format (corrupt, wrong shapes, wrong features)."""


def _mana_value(obj: dict) -> int:
    cost = obj.get("mana_cost") or {}
    if cost.get("type") != "Cost":
        return 0
    return int(cost.get("generic") or 0) + len(cost.get("shards") or [])


def _types(obj: dict) -> list:
    return (obj.get("card_types") or {}).get("core_types") or []


def _num(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _side(st: dict, player: dict) -> list[float]:
    objects = st.get("objects") or {}
    pid = player.get("id")

    def obj(oid) -> dict:
        return objects.get(str(oid)) or {}

    lands = creatures = others = 0
    power = toughness = evasive = 0.0
    for oid in st.get("battlefield") or []:
        o = obj(oid)
        if o.get("controller") != pid:
            continue
        types = _types(o)
        if "Creature" in types:
            creatures += 1
            p = max(0.0, _num(o.get("power")))
            power += p
            toughness += max(0.0, _num(o.get("toughness")) - _num(o.get("damage_marked")))
            if any(isinstance(k, str) and k in EVASIVE for k in o.get("keywords") or []):
                evasive += p
        elif "Land" in types:
            lands += 1
        else:
            others += 1
    hand = [obj(o) for o in player.get("hand") or []]
    deck = hand + [obj(o) for o in player.get("library") or []]
    deck_creatures = [o for o in deck if "Creature" in _types(o)]
    deck_spells = [o for o in deck if "Land" not in _types(o)]
    n = max(1, len(deck))
    return [
        _num(player.get("life")) / 20, _num(player.get("poison_counters")) / 10, len(hand) / 7,
        len(player.get("library") or []) / 40, len(player.get("graveyard") or []) / 20,
        lands / 10, creatures / 5, power / 10, toughness / 10, evasive / 10, others / 5,
        sum("Land" in _types(o) for o in hand) / 7,
        (len(deck) - len(deck_spells)) / n, len(deck_creatures) / n,
        sum(max(0.0, _num(o.get("power"))) for o in deck_creatures) / max(1, len(deck_creatures)) / 4,
        sum(_mana_value(o) for o in deck_spells) / max(1, len(deck_spells)) / 4,
    ]


def features(state: dict, seat: int, evaluation: float = 0.0) -> list[float]:
    """The position from ``seat``'s side (``FEATURES`` order). ``state`` is the engine's state JSON
    (``Game.state()``, or its inner ``state``); ``evaluation`` is ``Game.evaluate(seat)``."""
    st = state.get("state", state)
    players = {p.get("id"): p for p in st.get("players") or []}
    if seat not in players or len(players) != 2:
        raise ValueError(f"the state has no two-player game with seat {seat}")
    other = next(pid for pid in players if pid != seat)
    return (_side(st, players[seat]) + _side(st, players[other]) + [
        _num(st.get("turn_number")) / 20,
        1.0 if st.get("current_starting_player") == seat else 0.0,
        1.0 if st.get("active_player") == seat else 0.0,
        max(-3.0, min(3.0, _num(evaluation) / 10)),
    ])


def swap_sides(row: list[float], evaluation_other: float | None = None) -> list[float]:
    """The same position's features from the other seat's side (the engine's evaluation is not
    antisymmetric, so the other seat's own evaluation is passed when known)."""
    k = len(_SIDE)
    ev = row[-1] * -1 if evaluation_other is None else max(-3.0, min(3.0, evaluation_other / 10))
    return row[k:2 * k] + row[:k] + [row[2 * k], 1.0 - row[2 * k + 1], 1.0 - row[2 * k + 2], ev]


@dataclass
class ValueModel:
    """An MLP over ``FEATURES`` (standardised by ``mean``/``std``) ending in one logit."""

    layers: list[tuple[np.ndarray, np.ndarray]]  # (weight [out, in], bias [out]) per layer, ReLU between
    mean: np.ndarray
    std: np.ndarray
    info: dict

    def logits(self, rows: np.ndarray) -> np.ndarray:
        x = (np.asarray(rows, dtype=np.float64) - self.mean) / self.std
        for i, (w, b) in enumerate(self.layers):
            x = x @ w.T + b
            if i < len(self.layers) - 1:
                x = np.maximum(x, 0.0)
        return x[:, 0]

    def probability(self, rows) -> np.ndarray:
        z = np.clip(self.logits(np.atleast_2d(rows)), -30, 30)
        return 1.0 / (1.0 + np.exp(-z))

    def predict(self, mine: list[float], theirs: list[float]) -> float:
        """P(win) for the side ``mine`` describes, antisymmetric: the mean of its view and one minus
        the other side's view (``theirs``: the same position from the opponent's seat)."""
        p = self.probability(np.array([mine, theirs]))
        return float(0.5 * (p[0] + 1.0 - p[1]))

    def win_probability(self, state: dict, seat: int, evaluation: float, evaluation_other: float) -> float:
        mine = features(state, seat, evaluation)
        return self.predict(mine, swap_sides(mine, evaluation_other))

    @property
    def calibration(self) -> Calibrator | None:
        """The per-phase map fitted on training positions (``info["calibration"]``), None for an uncalibrated model."""
        found = self.info.get("calibration")
        if not found:
            return None
        try:
            return Calibrator.from_dict(found)
        except ValueError:
            return None

    def calibrated(self, p: float, turn: int) -> float:
        """``p`` through the model's calibration map (``p`` itself when it has none)."""
        cal = self.calibration
        return p if cal is None else cal.one(p, turn)

    @property
    def shown_source(self) -> str:
        """What the page's estimate is made of (``info["shown"]["source"]``, chosen by ``bench/game_calibration.py``
        as the best calibrated on its training games): ``value`` (this model, the default), ``engine`` (the
        engine's evaluation, squashed), ``baseline`` (a logistic regression on life, hand and board power, its
        weights in ``info["shown"]``), ``engine_both`` (the engine's evaluation from both seats, squashed: the mean of
        this seat's and one minus the other seat's), ``blend`` (per phase, a logistic regression over the first two's logits
        and the baseline's inputs) or ``logistic`` (per phase, a regularised logistic regression over every feature
        of both sides, derived ones and the first two's logits: ``gameplay.core.learning.estimate``); each through
        the calibration map."""
        source = (self.info.get("shown") or {}).get("source") or "value"
        return source if source in ("value", "engine", "engine_both", "baseline", "blend", "logistic") else "value"

    @property
    def shown_label(self) -> str:
        """What the page says the estimate is made of: "engine evaluation, calibrated", "value model", ..."""
        return SOURCE_LABELS[self.shown_source] + (", calibrated" if self.calibration is not None else "")

    def raw_shown(self, mine: list[float], theirs: list[float], evaluation: float, turn: int = 1,
                  evaluation_other: float | None = None) -> float:
        """The shown source's P(win) before calibration (``mine``/``theirs``: the position from each side;
        ``evaluation_other``: the other seat's own evaluation, when known)."""
        source = self.shown_source
        if source == "engine":
            return win_probability(evaluation)
        if source == "engine_both":
            other = -evaluation if evaluation_other is None else evaluation_other
            return 0.5 * (win_probability(evaluation) + 1.0 - win_probability(other))
        spec = self.info.get("shown") or {}
        if source == "baseline":
            idx = [FEATURES.index(f) for f in spec["features"]]
            return _sigmoid(sum(w * mine[i] for w, i in zip(spec["weights"], idx)) + spec["bias"])
        if source == "blend":  # per phase: logistic over logit(this model), logit(the engine), the baseline's inputs
            part = spec["blend"][phase_of(turn)]
            idx = [FEATURES.index(f) for f in spec["features"]]
            inputs = [float(logit(self.predict(mine, theirs))), float(logit(win_probability(evaluation)))]
            inputs += [mine[i] for i in idx]
            return _sigmoid(sum(w * v for w, v in zip(part["weights"], inputs)) + part["bias"])
        if source == "logistic":
            est = LogisticEstimate.from_dict(spec["logistic"])
            own = self.predict(mine, theirs)
            x = estimate_inputs([mine, theirs], [own, 1.0 - own],
                                [win_probability(mine[-1] * 10), win_probability(theirs[-1] * 10)])
            return float(est.predict(x[:1], x[1:], [turn])[0])
        return self.predict(mine, theirs)

    def shown_probability(self, state: dict, seat: int, evaluation: float, evaluation_other: float) -> float:
        """P(``seat`` wins) as a person is shown it: the shown source's estimate through the calibration map."""
        turn = int(_num(state.get("state", state).get("turn_number")) or 1)
        mine = features(state, seat, evaluation)
        raw = self.raw_shown(mine, swap_sides(mine, evaluation_other), evaluation, turn, evaluation_other)
        return self.calibrated(raw, turn)

    # -- files -------------------------------------------------------------------------------
    def save(self, path: str | Path):
        tensors = {"mean": self.mean.astype(np.float32), "std": self.std.astype(np.float32)}
        for i, (w, b) in enumerate(self.layers):
            tensors[f"layer{i}.weight"] = w.astype(np.float32)
            tensors[f"layer{i}.bias"] = b.astype(np.float32)
        meta = {"format": FORMAT, "features": json.dumps(list(FEATURES)), "info": json.dumps(self.info)}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        save_file(tensors, str(path), metadata=meta)

    @classmethod
    def load(cls, path: str | Path) -> "ValueModel":
        path = Path(path)
        meta, tensors = read_weights(path, "numpy", ValueModelError)
        if meta.get("format") != FORMAT:
            raise ValueModelError(f"{path.name} is not a {FORMAT} model (format {meta.get('format')!r})")
        try:
            names = json.loads(meta.get("features") or "[]")
            info = json.loads(meta.get("info") or "{}")
        except ValueError:
            raise ValueModelError(f"{path.name} has unreadable metadata") from None
        if names != list(FEATURES):
            raise ValueModelError(f"{path.name} was trained on other features than this code computes")
        layers, i, width = [], 0, len(FEATURES)
        while f"layer{i}.weight" in tensors:
            w, b = tensors[f"layer{i}.weight"].astype(np.float64), tensors.get(f"layer{i}.bias")
            if w.ndim != 2 or w.shape[1] != width or b is None or b.shape != (w.shape[0],):
                raise ValueModelError(f"{path.name}: layer {i} has the wrong shape")
            layers.append((w, b.astype(np.float64)))
            width, i = w.shape[0], i + 1
        if not layers or width != 1:
            raise ValueModelError(f"{path.name} has no layers ending in one output")
        mean, std = tensors.get("mean"), tensors.get("std")
        if mean is None or std is None or mean.shape != (len(FEATURES),) or std.shape != (len(FEATURES),):
            raise ValueModelError(f"{path.name} lacks the feature normalisation")
        finite = all(np.all(np.isfinite(t)) for t in (mean, std, *(t for layer in layers for t in layer)))
        if not (finite and np.all(std > 0)):
            raise ValueModelError(f"{path.name} holds non-finite or zero-scale weights")
        return cls(layers, mean.astype(np.float64), std.astype(np.float64), info)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@functools.lru_cache(maxsize=4)
def _cached(path: str, mtime: float) -> ValueModel:
    return ValueModel.load(path)


def model_at(path: str | Path) -> ValueModel:
    """The value model in ``path``, loaded once per process (again when the file changes)."""
    path = Path(path)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        raise ValueModelError(f"no game value model at {path}") from None
    return _cached(str(path), mtime)


def spread(estimates: list[float]) -> dict:
    """The estimate shown for copies of a position: their mean, lowest and highest, how many, and ``uncertain``
    when they disagree (they span ``UNCERTAIN_SPREAD`` or more)."""
    if not estimates:
        raise ValueError("no estimates")
    low, high = min(estimates), max(estimates)
    return {"estimate": sum(estimates) / len(estimates), "low": low, "high": high, "copies": len(estimates),
            "uncertain": high - low >= UNCERTAIN_SPREAD}


def position_detail(engine, state: dict, seat: int, rng, *, model, determinizations: int = 4) -> dict | None:
    """P(``seat`` wins) of a position by the value model ``model()`` returns (the caller's: e.g.
    ``SearchModels.leaf_model``, ``gameplay.core.learning.weights``), calibrated (``ValueModel.shown_probability``), without peeking:
    over ``determinizations`` copies whose hidden cards (the opponent's hand, both libraries) are re-dealt from
    what ``seat`` cannot see, as :func:`spread` gives it (mean, lowest, highest, ``uncertain``). None when no
    model is installed or the engine cannot load a copy. About 40 ms a copy (the load dominates)."""
    try:
        model = model()
    except ValueModelError:
        return None
    out = []
    try:
        for _ in range(max(1, determinizations)):
            copy = determinize(state, seat, rng)
            game = engine.load(copy)
            out.append(model.shown_probability(copy, seat, game.evaluate(seat), game.evaluate(1 - seat)))
    except (EngineError, ValueError, KeyError, TypeError):
        return None
    return {**spread(out), "calibrated": model.calibration is not None}


def position_estimate(engine, state: dict, seat: int, rng, *, model, determinizations: int = 4) -> float | None:
    """The mean of :func:`position_detail` (None as it)."""
    found = position_detail(engine, state, seat, rng, model=model, determinizations=determinizations)
    return None if found is None else found["estimate"]


def score(model: ValueModel, rows: list[dict]) -> dict:
    """Brier score and log-loss of ``model`` against the winners of labelled rows, beside the engine's
    evaluation squashed the way the search does (``EVAL_SCALE``) on the same rows."""
    if not rows:
        raise ValueError("no positions to score")
    x = np.array([r["x"] for r in rows], dtype=np.float64)
    y = np.array([r["won"] for r in rows], dtype=np.float64)
    ev = x[:, FEATURES.index("evaluation")] * 10  # the feature is the evaluation / 10, clipped to +-3
    ways = {"model": model.probability(x), "engine": np.array([win_probability(v) for v in ev])}
    out = {"positions": int(len(y))}
    for name, p in ways.items():
        q = np.clip(p, 0.02, 0.98)
        out[f"{name}_brier"] = round(float(np.mean((p - y) ** 2)), 4)
        out[f"{name}_log_loss"] = round(float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q))), 4)
    return out


def fit(rows: list[list[float]], wins: list[int], *, hidden: tuple[int, ...] = (32,), epochs: int = 300,
        weight_decay: float = 1e-2, lr: float = 0.003, seed: int = 0, groups: list | None = None,
        valid_share: float = 0.15) -> ValueModel:
    """Train the MLP with torch (full-batch Adam, binary cross-entropy). ``groups`` (one per row, e.g.
    the game it came from) keeps all positions of a game on one side of the validation split; the
    epoch with the best validation loss is kept."""
    import torch  # noqa: PLC0415 - heavy (seconds to import); only training needs it

    x = np.asarray(rows, dtype=np.float64)
    y = np.asarray(wins, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != len(FEATURES) or len(y) != len(x) or len(x) < 10:
        raise ValueError("fit needs at least 10 rows of len(FEATURES) features and one label each")
    rng = np.random.default_rng(seed)
    keys = np.asarray(groups if groups is not None else np.arange(len(x)))
    unique = rng.permutation(np.unique(keys))
    held = set(unique[: max(1, int(len(unique) * valid_share))].tolist())
    valid = np.array([k in held for k in keys.tolist()])
    mean = x[~valid].mean(axis=0)
    std = x[~valid].std(axis=0)
    std[std < 1e-6] = 1.0
    torch.manual_seed(seed)
    sizes = (len(FEATURES), *hidden, 1)
    net = torch.nn.Sequential(*[m for i in range(len(sizes) - 1) for m in
                                ([torch.nn.Linear(sizes[i], sizes[i + 1])] +
                                 ([torch.nn.ReLU()] if i < len(sizes) - 2 else []))])
    xt = torch.tensor((x - mean) / std, dtype=torch.float32)
    yt = torch.tensor(y, dtype=torch.float32)
    tr, va = torch.tensor(~valid), torch.tensor(valid)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    best, best_state, best_epoch = math.inf, None, 0
    for epoch in range(epochs):
        net.train()
        opt.zero_grad()
        loss = loss_fn(net(xt[tr])[:, 0], yt[tr])
        loss.backward()
        opt.step()
        net.eval()
        with torch.no_grad():
            v = loss_fn(net(xt[va])[:, 0], yt[va]).item() if va.any() else loss.item()
        if v < best:
            best, best_epoch = v, epoch
            best_state = {k: t.detach().clone() for k, t in net.state_dict().items()}
    net.load_state_dict(best_state)
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    layers = [(m.weight.detach().double().numpy(), m.bias.detach().double().numpy()) for m in linears]
    info = {"rows": int(len(x)), "valid_rows": int(valid.sum()), "valid_log_loss": round(best, 4),
            "best_epoch": best_epoch, "hidden": list(hidden), "epochs": epochs, "weight_decay": weight_decay}
    return ValueModel(layers, mean, std, info)

