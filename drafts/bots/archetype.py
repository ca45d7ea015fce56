"""Archetype bot after madrury/mtg-draftbot (pure: numpy, with PyTorch only for training).

Every card has a weight for each draft archetype: ``W`` (``[n_cards, n_archetypes]``, one row per
card of ``cards``). A drafter's archetype *preferences* are ``prior + pool_counts @ W`` (the prior is
madrury's constant 1 per archetype; here a learned vector), and a card's score is
``W[card] . preferences + bias[card]``. ``pick`` ranks the pack by score and reports the softmax of
the scores over the pack (the pick probabilities, monotone with the score).

The per-card ``bias`` is an addition to madrury's model: a pool-independent card strength that lets
``W`` describe archetype fit rather than also carry raw power. It is learned (zero in the default
weights; ``use_bias=False`` leaves it out). On the proxy logs it adds only 0.1-0.2 points of held-out
top-1 (with a constant learning rate it added 0.5: see ``NOTES_bots_heuristic.md``); it is kept
because it costs one number per card and lowers the validation loss (BLB, constant learning rate:
best 1.187 with it, 1.217 without).

Default (untrained) weights: :func:`default_weights` (10 colour-pair archetypes WU..RG from colour
and rarity) and :func:`load_madrury_default_weights` (madrury's hand-set M20 weights). Learned
weights: :func:`train_archetype` fits ``W``, the prior and the bias by maximum likelihood of the
logged picks (softmax over the cards in the pack) with Adam on mini-batches, starting from the
default weights. ``W`` and the prior are kept non-negative (projected after every step), as in
madrury's model, so a pool card can only pull preferences towards its archetypes and the
archetype columns stay readable; the bias is unconstrained.
"""
from __future__ import annotations

import json
import lzma
import time
import zlib
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from drafts.bots.base import PickContext, Ranking
from drafts.core.cards import SetList
from drafts.core.logs import DraftLogs

COLOR_PAIRS = ("WU", "WB", "WR", "WG", "UB", "UR", "UG", "BR", "BG", "RG")
RARITY_WEIGHT = {"mythic": 1.6, "rare": 1.4, "uncommon": 1.15, "common": 1.0, "special": 1.0, "basic": 0.5}
FORMAT = "archetype-v1"


def _softmax(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if not len(x):
        return x
    e = np.exp(x - x.max())
    return e / e.sum()


class ArchetypeBot:
    """A card x archetype weight matrix over a card list, plus a prior and a per-card bias."""

    def __init__(self, cards: Sequence[str], weights: np.ndarray, prior: np.ndarray | float = 1.0,
                 bias: np.ndarray | None = None, archetypes: Sequence[str] | None = None, name: str = "archetype",
                 hyperparameters: dict | None = None):
        self.cards = [str(c) for c in cards]
        self.weights = np.asarray(weights, dtype=np.float32)
        if self.weights.ndim != 2 or self.weights.shape[0] != len(self.cards):
            raise ValueError(f"weights must be [n_cards={len(self.cards)}, n_archetypes], got {self.weights.shape}")
        k = self.weights.shape[1]
        self.prior = np.broadcast_to(np.asarray(prior, dtype=np.float32), (k,)).copy()
        self.bias = np.zeros(len(self.cards), np.float32) if bias is None else np.asarray(bias, np.float32).copy()
        if self.bias.shape != (len(self.cards),):
            raise ValueError("bias must have one entry per card")
        self.archetypes = list(archetypes) if archetypes is not None else default_archetype_names(k)
        if len(self.archetypes) != k:
            raise ValueError("one archetype name per weight column")
        self.name = name
        self.hyperparameters = dict(hyperparameters or {})
        self.index = {c: i for i, c in enumerate(self.cards)}

    @property
    def n_archetypes(self) -> int:
        return self.weights.shape[1]

    # --- the model ------------------------------------------------------------------------------
    def preferences(self, pool: Sequence[str]) -> np.ndarray:
        """``prior + pool_counts @ W`` (cards the bot does not know count for nothing)."""
        prefs = self.prior.astype(np.float64).copy()
        for name in pool:
            i = self.index.get(name)
            if i is not None:
                prefs += self.weights[i]
        return prefs

    def card_scores(self, names: Sequence[str], pool: Sequence[str]) -> np.ndarray:
        """Raw scores ``W[card] . preferences + bias[card]``; an unknown card scores 0."""
        prefs = self.preferences(pool)
        out = np.zeros(len(names))
        for j, name in enumerate(names):
            i = self.index.get(name)
            if i is not None:
                out[j] = float(self.weights[i].astype(np.float64) @ prefs + self.bias[i])
        return out

    def pick(self, pack: Sequence[str], pool: Sequence[str], context: PickContext | None = None) -> Ranking:
        """The pack best first, each with its softmax pick probability over the pack."""
        pack = list(pack)
        if not pack:
            return []
        raw = self.card_scores(pack, pool)
        probs = _softmax(raw)
        order = sorted(range(len(pack)), key=lambda i: (-raw[i], i))
        return [(pack[i], float(probs[i])) for i in order]

    def _columns(self, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Rows of W and bias aligned with ``names`` (zeros for names the bot lacks)."""
        w = np.zeros((len(names), self.n_archetypes), np.float32)
        b = np.zeros(len(names), np.float32)
        for j, name in enumerate(names):
            i = self.index.get(name)
            if i is not None:
                w[j], b[j] = self.weights[i], self.bias[i]
        return w, b

    def score_logs(self, logs: DraftLogs, chunk: int = 50000) -> np.ndarray:
        """``[rows, cards]`` raw scores for every card of every logged pick (logs' column order)."""
        w, b = self._columns(logs.cards)
        out = np.empty((len(logs), len(logs.cards)), np.float32)
        for start in range(0, len(logs), chunk):
            stop = min(start + chunk, len(logs))
            prefs = self.prior[None, :] + logs.pool[start:stop].astype(np.float32) @ w
            out[start:stop] = prefs @ w.T + b[None, :]
        return out

    # --- serialization ---------------------------------------------------------------------------
    def to_tensors(self) -> dict:
        import torch  # noqa: PLC0415 - heavy (seconds to import): the bot picks with numpy alone

        return {"weights": torch.from_numpy(self.weights.astype(np.float32).copy()),
                "prior": torch.from_numpy(self.prior.astype(np.float32).copy()),
                "bias": torch.from_numpy(self.bias.astype(np.float32).copy())}

    def config(self) -> dict:
        return {"format": FORMAT, "name": self.name, "cards": list(self.cards), "archetypes": list(self.archetypes),
                "hyperparameters": dict(self.hyperparameters)}

    @classmethod
    def from_tensors(cls, tensors: dict, config: dict) -> "ArchetypeBot":
        if config.get("format", FORMAT) != FORMAT:
            raise ValueError(f"not an archetype bot config: format {config.get('format')!r}")

        def arr(key):
            value = tensors[key]
            return value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)

        return cls(config["cards"], arr("weights"), prior=arr("prior"),
                   bias=arr("bias") if "bias" in tensors else None, archetypes=config.get("archetypes"),
                   name=config.get("name", "archetype"), hyperparameters=config.get("hyperparameters"))


def default_archetype_names(k: int) -> list[str]:
    return list(COLOR_PAIRS[:k]) + [f"A{i}" for i in range(len(COLOR_PAIRS), k)]


def default_weights(set_list: SetList) -> np.ndarray:
    """``[n_cards, 10]`` colour-pair weights (columns WU, WB, WR, WG, UB, UR, UG, BR, BG, RG), set order.

    A card fits the pairs that contain all its colours (a colourless card fits all ten, a
    one-colour card four, a two-colour card one); a card of three or more colours fits the pairs
    made of its colours. The fit is spread over the pairs (each gets ``1 / n_fits``), so every card
    starts with the same total weight, then scaled by rarity (mythic 1.6, rare 1.4, uncommon 1.15,
    common 1.0): with an empty pool the score is the rarity weight, and a pool card pulls
    preferences towards its pairs.
    """
    out = np.zeros((len(set_list.cards), len(COLOR_PAIRS)), np.float32)
    for i, card in enumerate(set_list.cards):
        colors = set(card.colors)
        if len(colors) <= 2:
            fits = [j for j, pair in enumerate(COLOR_PAIRS) if colors <= set(pair)]
        else:
            fits = [j for j, pair in enumerate(COLOR_PAIRS) if set(pair) <= colors]
        if fits:
            out[i, fits] = RARITY_WEIGHT.get(card.rarity, 1.0) / len(fits)
    return out


def default_bot(set_list: SetList, name: str = "archetype-default") -> ArchetypeBot:
    return ArchetypeBot(set_list.names, default_weights(set_list), prior=1.0, archetypes=COLOR_PAIRS, name=name,
                        hyperparameters={"source": "default_weights"})


def load_madrury_default_weights(path: Path | str, name: str = "archetype-madrury") -> ArchetypeBot:
    """madrury's hand-set weights (``m20-default-weights.json``: ``{card: {"WU": w, ...}}``), prior 1."""
    path = Path(path)
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    cards = list(data)
    archetypes = list(next(iter(data.values())).keys()) if data else list(COLOR_PAIRS)
    weights = np.array([[float(data[c].get(a, 0.0)) for a in archetypes] for c in cards], np.float32).reshape(
        len(cards), len(archetypes))
    return ArchetypeBot(cards, weights, prior=1.0, archetypes=archetypes, name=name,
                        hyperparameters={"source": str(path.name)})


def validation_mask(keys: np.ndarray, share: float = 0.1, salt: str = "archetype-validation") -> np.ndarray:
    """A stable split by key (pod): about ``share`` of the keys go to validation.

    Salted, so it is independent of :func:`drafts.core.logs.held_out_mask` (train on the logs
    outside the held-out pods and this still finds validation pods among them).
    """
    unique, inverse = np.unique(np.asarray(keys).astype(str), return_inverse=True)
    cut = int(round(share * 1000))
    chosen = np.array([zlib.crc32(f"{salt}:{k}".encode()) % 1000 < cut for k in unique], dtype=bool)
    return chosen[inverse]


def train_archetype(logs: DraftLogs, n_archetypes: int = 10, epochs: int = 20, lr: float = 0.01, seed: int = 0,
                    on_epoch: Callable[[dict], None] | None = None, *, set_list: SetList | None = None,
                    init: ArchetypeBot | None = None, keys: np.ndarray | None = None,
                    val_mask: np.ndarray | None = None, val_share: float = 0.1, batch_size: int = 1024,
                    use_bias: bool = True, nonnegative: bool = True, weight_decay: float = 0.0,
                    final_lr_fraction: float = 0.05,
                    max_seconds: float | None = None, name: str = "archetype") -> tuple[ArchetypeBot, dict]:
    """Fit an :class:`ArchetypeBot` to logged picks by maximum likelihood (PyTorch, Adam, mini-batches).

    The loss is the cross-entropy of the logged pick under the softmax of the scores over the cards
    in the pack. ``val_mask`` (True = validation row) holds rows out; without it, ``val_share`` of
    the pods in ``keys`` (pod keys, e.g. :func:`drafts.core.logs.pod_keys`; ``logs.draft_id`` when
    absent) are held out with :func:`validation_mask`. Initial weights: ``init``'s, else
    :func:`default_weights` of ``set_list`` (extra archetype columns beyond 10 start as small noise),
    else uniform noise. The returned bot has the weights of the epoch with the lowest validation loss.

    ``history``: ``{"train_loss": [...], "val_loss": [...], "val_top1": [...], "seconds": [...],
    "best_epoch": int, "train_rows": int, "val_rows": int}``; ``on_epoch`` gets each epoch's record
    ``{"epoch", "train_loss", "val_loss", "val_top1", "seconds"}`` as it finishes. Training stops early
    after ``max_seconds``.
    """
    import torch  # noqa: PLC0415 - heavy (seconds to import): only training needs it

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    cards = list(logs.cards)
    n_cards = len(cards)
    archetypes = default_archetype_names(n_archetypes)

    # --- initial parameters
    w0 = rng.uniform(0.0, 0.1, (n_cards, n_archetypes)).astype(np.float32)
    prior0 = np.ones(n_archetypes, np.float32)
    bias0 = np.zeros(n_cards, np.float32)
    if init is not None:
        w_init, b_init = init._columns(cards)
        k = min(n_archetypes, init.n_archetypes)
        w0[:, :k] = w_init[:, :k]
        prior0[:k] = init.prior[:k]
        bias0 = b_init.copy()
        archetypes[:k] = init.archetypes[:k]
    elif set_list is not None:
        by_name = {c.name: i for i, c in enumerate(set_list.cards)}
        dw = default_weights(set_list)
        k = min(n_archetypes, dw.shape[1])
        for j, c in enumerate(cards):
            if c in by_name:
                w0[j, :k] = dw[by_name[c], :k]
            else:
                w0[j, :k] = 0.0
        archetypes[:k] = COLOR_PAIRS[:k]

    # --- split
    if val_mask is None:
        val_mask = validation_mask(logs.draft_id if keys is None else keys, val_share)
    val_mask = np.asarray(val_mask, dtype=bool)
    rows = ~logs.forced  # a pack of one card carries no information
    train_idx = np.flatnonzero(rows & ~val_mask)
    val_idx = np.flatnonzero(rows & val_mask)
    pack = torch.from_numpy(np.ascontiguousarray(logs.pack))
    pool = torch.from_numpy(np.ascontiguousarray(logs.pool))
    pick = torch.from_numpy(logs.pick.astype(np.int64))

    W = torch.nn.Parameter(torch.from_numpy(w0))
    prior = torch.nn.Parameter(torch.from_numpy(prior0))
    bias = torch.nn.Parameter(torch.from_numpy(bias0))
    params = [W, prior] + ([bias] if use_bias else [])
    opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    # cosine decay of the learning rate over the epochs, down to lr * final_lr_fraction
    def lr_factor(epoch: int) -> float:
        progress = min(epoch, epochs) / max(epochs, 1)
        return final_lr_fraction + (1 - final_lr_fraction) * 0.5 * (1 + np.cos(np.pi * progress))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor)

    def forward(idx):
        pk = pack[idx].float()
        prefs = prior[None, :] + pool[idx].float() @ W
        logits = prefs @ W.T + (bias[None, :] if use_bias else 0.0)
        logits = logits.masked_fill(pk <= 0, float("-inf"))
        return logits

    def evaluate(idx):
        if not len(idx):
            return float("nan"), float("nan")
        total, hits = 0.0, 0
        with torch.no_grad():
            for s in range(0, len(idx), 8192):
                b = torch.from_numpy(idx[s:s + 8192])
                logits = forward(b)
                total += float(torch.nn.functional.cross_entropy(logits, pick[b], reduction="sum"))
                hits += int((logits.argmax(dim=1) == pick[b]).sum())
        return total / len(idx), hits / len(idx)

    history = {"train_loss": [], "val_loss": [], "val_top1": [], "seconds": [], "best_epoch": -1,
               "train_rows": int(len(train_idx)), "val_rows": int(len(val_idx))}
    best = (float("inf"), w0.copy(), prior0.copy(), bias0.copy())
    started = time.monotonic()
    for epoch in range(epochs):
        t0 = time.monotonic()
        order = rng.permutation(train_idx)
        total = 0.0
        for s in range(0, len(order), batch_size):
            b = torch.from_numpy(order[s:s + batch_size])
            loss = torch.nn.functional.cross_entropy(forward(b), pick[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if nonnegative:
                with torch.no_grad():
                    W.clamp_(min=0.0)
                    prior.clamp_(min=0.0)
            total += float(loss.detach()) * len(b)
        sched.step()
        train_loss = total / max(len(order), 1)
        val_loss, val_top1 = evaluate(val_idx)
        record = {"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss, "val_top1": val_top1,
                  "seconds": time.monotonic() - t0}
        for key in ("train_loss", "val_loss", "val_top1", "seconds"):
            history[key].append(record[key])
        score = val_loss if len(val_idx) else train_loss
        if score < best[0]:
            best = (score, W.detach().numpy().copy(), prior.detach().numpy().copy(), bias.detach().numpy().copy())
            history["best_epoch"] = epoch
        if on_epoch:
            on_epoch(record)
        if max_seconds is not None and time.monotonic() - started > max_seconds:
            break

    hyper = {"n_archetypes": n_archetypes, "epochs": epochs, "epochs_run": len(history["train_loss"]), "lr": lr,
             "seed": seed, "batch_size": batch_size, "use_bias": use_bias, "nonnegative": nonnegative,
             "weight_decay": weight_decay, "final_lr_fraction": final_lr_fraction, "best_epoch": history["best_epoch"],
             "train_rows": history["train_rows"], "val_rows": history["val_rows"], "set_code": logs.set_code}
    bot = ArchetypeBot(cards, best[1], prior=best[2], bias=best[3] if use_bias else None, archetypes=archetypes,
                       name=name, hyperparameters=hyper)
    return bot, history


__all__ = ["COLOR_PAIRS", "ArchetypeBot", "default_bot", "default_weights", "load_madrury_default_weights",
           "train_archetype", "validation_mask"]
