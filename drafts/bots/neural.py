"""A neural pick bot: pool (+ optionally pack) card counts -> one score per card (pure: torch + numpy).

The net reads the drafter's pool as per-card counts over the set's card list and outputs a logit
per card; the pick distribution is the softmax of those logits *restricted to the cards in the
pack*. That is the shape of the pick models behind the 17Lands-layout proxy logs (an MLP over the
pool whose output is masked by the pack), so the pack is, by default, only a mask and not an input
(``pack_input=True`` adds the pack counts as a second input block).

Design (see ``docs/draft-bots-neural.md`` for the measurements behind it):

* MLP over pool counts (3 x 512, tanh-GELU, dropout 0.5, input dropout 0.2 = random pool cards
  dropped while training) with the output layer *tied* to the input card embeddings
  (``logit_c = <proj(h), E_c> + b_c``, ``E`` = first-layer weights): one card-identity embedding
  shared by the pool input and the pick output.
* Loss: cross-entropy of the logged pick under the softmax over the pack's cards (forced picks,
  a pack of one card, carry no signal and are skipped). AdamW, one-cycle learning rate, early
  stopping on the validation loss (validation = a share of the training pods).
* Inference is a numpy forward pass on cached float32 arrays (well under 1 ms per pick). Scores
  are log-probabilities of each pack card being picked (averaged over ensemble members).
* Weights are stored as float16 (``to_tensors``); a trained bot is rounded to float16 at once,
  so a saved and reloaded bot scores exactly like the one that was evaluated.
"""
from __future__ import annotations

import copy
import json
import math
import time
import zlib
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from torch import nn

from drafts.bots.base import PickContext, Ranking, rank
from drafts.core.evaluate import agreement, ranks_from_scores
from drafts.core.logs import DraftLogs, held_out_mask, pod_keys, read_17lands_csv, read_seats, seats_file_for

FORMAT = "neural-pick-v1"
UNKNOWN_SCORE = -1.0e4  # cards the bot does not know: below every log-probability of a known card
_GELU_C = math.sqrt(2.0 / math.pi)


@dataclass
class NeuralConfig:
    """Sizes, regularisation and training schedule of a :class:`NeuralPickNet`."""

    hidden: tuple[int, ...] = (512, 512, 512)
    dropout: float = 0.5
    input_dropout: float = 0.2
    tie_embeddings: bool = True
    pack_input: bool = False
    # training
    epochs: int = 25
    batch_size: int = 512
    lr: float = 1e-3
    weight_decay: float = 0.1
    warmup: float = 0.1  # share of the one-cycle schedule spent warming up
    patience: int = 5  # epochs without a better validation loss before stopping
    ensemble: int = 1  # members trained with seeds seed, seed+1, ...; scores averaged in log-prob space
    val_share: float = 0.1  # share of training pods carved out for validation (train_and_evaluate)
    refit: bool = True  # after early stopping, retrain on train + validation rows for the best epoch count
    dtype: str = "float16"  # storage precision of the weights

    @classmethod
    def from_dict(cls, data: "NeuralConfig | dict | None") -> "NeuralConfig":
        if data is None:
            return cls()
        if isinstance(data, NeuralConfig):
            return copy.deepcopy(data)
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown neural config keys: {', '.join(sorted(unknown))}")
        out = cls(**{k: v for k, v in data.items() if k in known})
        out.hidden = tuple(int(h) for h in out.hidden)
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        return d


class NeuralPickNet(nn.Module):
    """Pool counts [B, C] (and pack counts, with ``pack_input``) -> pick logits [B, C].

    With ``card_features`` (a [C, F] matrix of card facts, see :func:`card_feature_matrix`) the
    first layer also reads the pool's feature totals (``pool @ features``: cards per colour,
    rarity, mana value, type), so a card's embedding is its own vector plus a shared function of
    its facts. That is a training-time prior only: :meth:`fold_features` folds it into a plain net
    computing the same function.
    """

    def __init__(self, n_cards: int, config: NeuralConfig | dict | None = None,
                 card_features: np.ndarray | torch.Tensor | None = None):
        super().__init__()
        cfg = NeuralConfig.from_dict(config)
        if not cfg.hidden:
            raise ValueError("hidden must name at least one layer size")
        self.n_cards = n_cards
        self.config = cfg
        if card_features is not None:
            feats = torch.as_tensor(np.asarray(card_features, dtype=np.float32))
            if feats.ndim != 2 or feats.shape[0] != n_cards:
                raise ValueError(f"card_features must be [{n_cards}, F], got {tuple(feats.shape)}")
            self.register_buffer("features", feats, persistent=False)
        else:
            self.features = None
        self.n_features = 0 if self.features is None else int(self.features.shape[1])
        width_in = n_cards * (2 if cfg.pack_input else 1) + self.n_features
        sizes = [width_in, *cfg.hidden]
        self.layers = nn.ModuleList(nn.Linear(sizes[i], sizes[i + 1]) for i in range(len(cfg.hidden)))
        self.input_dropout = nn.Dropout(cfg.input_dropout)
        self.dropout = nn.Dropout(cfg.dropout)
        if cfg.tie_embeddings:
            self.proj = nn.Linear(cfg.hidden[-1], cfg.hidden[0])
            self.out_bias = nn.Parameter(torch.zeros(n_cards))
        else:
            self.out = nn.Linear(cfg.hidden[-1], n_cards)

    def card_embeddings(self) -> torch.Tensor:
        """[H0, C]: the first layer's weights on the pool counts (plus the features' share)."""
        w = self.layers[0].weight
        emb = w[:, : self.n_cards]
        if self.n_features:
            emb = emb + w[:, w.shape[1] - self.n_features:] @ self.features.T
        return emb

    def forward(self, pool: torch.Tensor, pack: torch.Tensor | None = None) -> torch.Tensor:
        pool = self.input_dropout(pool)  # drops pool cards (and their features) while training
        parts = [pool]
        if self.config.pack_input:
            parts.append(pack if pack is not None else torch.zeros_like(pool))
        if self.n_features:
            parts.append(pool @ self.features)
        h = torch.cat(parts, dim=1) if len(parts) > 1 else pool
        for layer in self.layers:
            h = self.dropout(F.gelu(layer(h), approximate="tanh"))
        if self.config.tie_embeddings:
            return self.proj(h) @ self.card_embeddings() + self.out_bias
        return self.out(h)

    def fold_features(self) -> "NeuralPickNet":
        """A net without card features computing the same function (features folded in)."""
        plain = NeuralPickNet(self.n_cards, self.config)
        state = {k: v.detach().clone() for k, v in self.state_dict().items()}
        if self.n_features:
            w = state["layers.0.weight"]
            cut = w.shape[1] - self.n_features
            folded = w[:, :cut].clone()
            folded[:, : self.n_cards] += w[:, cut:] @ self.features.T
            state["layers.0.weight"] = folded
        plain.load_state_dict(state)
        return plain.eval()


CARD_FEATURE_NAMES = (["color_" + c for c in "WUBRG"] + ["colorless", "multicolor"]
                      + ["rarity_" + r for r in ("common", "uncommon", "rare", "mythic")]
                      + [f"mv_{k}" for k in range(7)] + ["mv_7plus"]
                      + ["type_" + t.lower() for t in ("Creature", "Instant", "Sorcery", "Enchantment", "Artifact",
                                                         "Land", "Planeswalker", "Legendary")])


def card_feature_matrix(cards: Sequence) -> np.ndarray:
    """[C, F] facts per card (colours, rarity, mana value, types) from :class:`DraftCard` records
    (a plain name counts as a colourless common with no facts)."""
    rows = []
    for card in cards:
        colors = getattr(card, "colors", "") or ""
        rarity = (getattr(card, "rarity", "") or "").lower()
        mv = getattr(card, "mana_value", None)
        types = (getattr(card, "types", "") or "").split()
        n_colors = sum(c in colors for c in "WUBRG")
        row = [float(c in colors) for c in "WUBRG"] + [float(n_colors == 0), float(n_colors >= 2)]
        row += [float(rarity == r) for r in ("common", "uncommon", "rare", "mythic")]
        has_mv = mv is not None and bool(getattr(card, "mana_cost", "") or types)
        row += [float(has_mv and int(mv) == k) for k in range(7)] + [float(has_mv and mv >= 7)]
        row += [float(t in types) for t in ("Creature", "Instant", "Sorcery", "Enchantment", "Artifact", "Land",
                                            "Planeswalker", "Legendary")]
        rows.append(row)
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), len(CARD_FEATURE_NAMES))


# ---------------------------------------------------------------------------------------------
# numpy inference


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(_GELU_C * (x + 0.044715 * x * x * x)))


class _NumpyNet:
    """The forward pass of one member on float32 arrays (eval mode: no dropout)."""

    def __init__(self, state: dict[str, np.ndarray], cfg: NeuralConfig, n_cards: int):
        self.n_cards = n_cards
        self.cfg = cfg
        self.layers = []
        for i in range(len(cfg.hidden)):
            w = np.ascontiguousarray(state[f"layers.{i}.weight"].T, dtype=np.float32)  # [in, out]
            self.layers.append((w, state[f"layers.{i}.bias"].astype(np.float32)))
        if cfg.tie_embeddings:
            self.proj = (np.ascontiguousarray(state["proj.weight"].T, dtype=np.float32), state["proj.bias"].astype(np.float32))
            self.out_w = np.ascontiguousarray(state["layers.0.weight"][:, :n_cards], dtype=np.float32)  # [H0, C]
            self.out_b = state["out_bias"].astype(np.float32)
        else:
            self.proj = None
            self.out_w = np.ascontiguousarray(state["out.weight"].T, dtype=np.float32)
            self.out_b = state["out.bias"].astype(np.float32)

    def logits(self, x: np.ndarray) -> np.ndarray:
        h = x
        for w, b in self.layers:
            h = _gelu(h @ w + b)
        if self.proj is not None:
            h = h @ self.proj[0] + self.proj[1]
        return h @ self.out_w + self.out_b


def _masked_log_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """logit - logsumexp over the masked cards of each row (rows with no card: logits unchanged)."""
    masked = np.where(mask, logits, -np.inf)
    top = masked.max(axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    lse = top + np.log(np.maximum(np.exp(masked - top).sum(axis=1, keepdims=True), 1e-30))
    lse = np.where(mask.any(axis=1, keepdims=True), lse, 0.0)
    return (logits - lse).astype(np.float32)


def _state_arrays(net_or_state, dtype: str) -> dict[str, np.ndarray]:
    state = net_or_state.state_dict() if isinstance(net_or_state, nn.Module) else net_or_state
    out = {}
    for k, v in state.items():
        arr = v.detach().cpu().float().numpy() if isinstance(v, torch.Tensor) else np.asarray(v, dtype=np.float32)
        if dtype == "float16":
            arr = arr.astype(np.float16)
        out[k] = arr.astype(np.float32)
    return out


class NeuralBot:
    """A trained :class:`NeuralPickNet` (or an ensemble of them) behind the DraftBot interface.

    ``net`` is a module, a state dict, or a list of either (ensemble members). Scores are
    log-probabilities of being picked from the pack at hand; cards outside the bot's card list
    score :data:`UNKNOWN_SCORE` (after every known card) and pool cards outside it are ignored.
    """

    def __init__(self, cards: Sequence[str], net, config: NeuralConfig | dict | None = None, name: str = "neural",
                 metrics: dict | None = None):
        members = list(net) if isinstance(net, (list, tuple)) else [net]
        if not members:
            raise ValueError("a NeuralBot needs at least one net")
        if config is None and isinstance(members[0], NeuralPickNet):
            config = members[0].config
        self.cfg = NeuralConfig.from_dict(config)
        self.cfg.ensemble = len(members)
        self.cards = list(cards)
        self.name = name
        self.metrics = dict(metrics or {})
        self._index = {n: i for i, n in enumerate(self.cards)}
        self._states = [_state_arrays(m, self.cfg.dtype) for m in members]
        self._nets = [_NumpyNet(s, self.cfg, len(self.cards)) for s in self._states]

    # -- inference ---------------------------------------------------------------------------
    @property
    def n_cards(self) -> int:
        return len(self.cards)

    def _inputs(self, pool: np.ndarray, pack: np.ndarray) -> np.ndarray:
        pool = pool.astype(np.float32, copy=False)
        if self.cfg.pack_input:
            return np.concatenate([pool, pack.astype(np.float32, copy=False)], axis=1)
        return pool

    def _scores(self, pool: np.ndarray, pack: np.ndarray) -> np.ndarray:
        """Mean over members of the log-softmax over pack cards; pool/pack [B, C] in bot order."""
        x = self._inputs(pool, pack)
        mask = pack > 0
        total = None
        for net in self._nets:
            lp = _masked_log_softmax(net.logits(x), mask)
            total = lp if total is None else total + lp
        return total / len(self._nets)

    def pick(self, pack: Sequence[str], pool: Sequence[str], context: PickContext | None = None) -> Ranking:
        C = self.n_cards
        pool_v = np.zeros((1, C), np.float32)
        pack_v = np.zeros((1, C), np.float32)
        for n in pool:
            j = self._index.get(n)
            if j is not None:
                pool_v[0, j] += 1
        idx = [self._index.get(n, -1) for n in pack]
        for j in idx:
            if j >= 0:
                pack_v[0, j] += 1
        scores = self._scores(pool_v, pack_v)[0] if any(j >= 0 for j in idx) else None
        values = [float(scores[j]) if j >= 0 else UNKNOWN_SCORE for j in idx]
        return rank(list(pack), values)

    def score_logs(self, logs: DraftLogs, chunk: int = 16384) -> np.ndarray:
        """Scores [rows, len(logs.cards)] aligned with ``logs.cards`` (matched by name)."""
        if list(logs.cards) == self.cards:
            cols, known = np.arange(self.n_cards), np.ones(self.n_cards, bool)
        else:
            cols = np.array([self._index.get(n, -1) for n in logs.cards], dtype=np.int64)
            known = cols >= 0
        out = np.full((len(logs), len(logs.cards)), UNKNOWN_SCORE, dtype=np.float32)
        for start in range(0, len(logs), chunk):
            stop = min(start + chunk, len(logs))
            pool = np.zeros((stop - start, self.n_cards), np.float32)
            pack = np.zeros((stop - start, self.n_cards), np.float32)
            pool[:, cols[known]] = logs.pool[start:stop][:, known]
            pack[:, cols[known]] = logs.pack[start:stop][:, known]
            out[start:stop, known] = self._scores(pool, pack)[:, cols[known]]
        return out

    # -- serialization -------------------------------------------------------------------------
    def to_tensors(self) -> dict[str, torch.Tensor]:
        dt = torch.float16 if self.cfg.dtype == "float16" else torch.float32
        return {f"member{k}.{name}": torch.from_numpy(np.ascontiguousarray(arr)).to(dt)
                for k, state in enumerate(self._states) for name, arr in state.items()}

    def config(self) -> dict:
        return {"format": FORMAT, "name": self.name, "cards": list(self.cards), "n_cards": self.n_cards,
                "ensemble": len(self._nets), "net": self.cfg.to_dict(), "parameters": self.parameter_count(),
                "metrics": self.metrics}

    @classmethod
    def from_tensors(cls, tensors: dict[str, torch.Tensor], config: dict) -> "NeuralBot":
        if config.get("format", FORMAT) != FORMAT:
            raise ValueError(f"not a {FORMAT} config: {config.get('format')!r}")
        members: dict[int, dict] = {}
        for key, value in tensors.items():
            head, _, name = key.partition(".")
            if not head.startswith("member"):
                continue
            members.setdefault(int(head[len("member"):]), {})[name] = value
        if not members:
            raise ValueError("no member<k>.<param> tensors")
        states = [members[k] for k in sorted(members)]
        return cls(config["cards"], states, config=config["net"], name=config.get("name", "neural"),
                   metrics=config.get("metrics"))

    def parameter_count(self) -> int:
        return int(sum(a.size for s in self._states for a in s.values()))

    def size_bytes(self) -> int:
        return self.parameter_count() * (2 if self.cfg.dtype == "float16" else 4)

    def to_module(self, member: int = 0) -> NeuralPickNet:
        """A torch module with the stored (rounded) weights of one member."""
        net = NeuralPickNet(self.n_cards, self.cfg)
        net.load_state_dict({k: torch.from_numpy(v) for k, v in self._states[member].items()})
        return net.eval()


# ---------------------------------------------------------------------------------------------
# training


def _evaluate(net: NeuralPickNet, pool: torch.Tensor, pack: torch.Tensor, pick: torch.Tensor,
              forced: torch.Tensor, chunk: int = 8192) -> tuple[float, float]:
    """(mean loss over unforced rows, top-1 over all rows, ties counted against) in eval mode."""
    was = net.training
    net.eval()
    loss_sum, unforced, hits = 0.0, 0, 0
    with torch.inference_mode():
        for s in range(0, len(pick), chunk):
            p, k, y, f = pool[s:s + chunk].float(), pack[s:s + chunk], pick[s:s + chunk], forced[s:s + chunk]
            mask = k > 0
            logits = net(p, k.float()).masked_fill(~mask, -1e9)
            losses = F.cross_entropy(logits, y, reduction="none")
            loss_sum += float(losses[~f].sum())
            unforced += int((~f).sum())
            chosen = logits.gather(1, y[:, None])
            ranks = ((logits >= chosen) & mask).sum(1)
            hits += int((ranks == 1).sum())
    net.train(was)
    return loss_sum / max(unforced, 1), hits / max(len(pick), 1)


def _train_member(n_cards: int, cfg: NeuralConfig, data: dict, seed: int, epochs: int,
                  on_epoch: Callable | None, card_features=None, schedule_epochs: int | None = None
                  ) -> tuple[NeuralPickNet, dict]:
    """One member; the learning-rate schedule spans ``schedule_epochs`` (default ``epochs``)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = NeuralPickNet(n_cards, cfg, card_features=card_features)
        gen = torch.Generator().manual_seed(seed)
        pool, pack, pick = data["pool"], data["pack"], data["pick"]
        n = len(pick)
        steps_per_epoch = max(1, math.ceil(n / cfg.batch_size))
        opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=max(schedule_epochs or epochs, epochs, 1) * steps_per_epoch,
                                                    pct_start=cfg.warmup, anneal_strategy="cos")
        history = {"epoch": [], "train_loss": [], "val_loss": [], "val_top1": [], "seconds": []}
        has_val = data.get("val_pick") is not None and len(data["val_pick"]) > 0
        best_loss, best_state, best_epoch = float("inf"), None, -1
        net.train()
        for epoch in range(epochs):
            t0 = time.perf_counter()
            order = torch.randperm(n, generator=gen)
            total = 0.0
            for s in range(0, n, cfg.batch_size):
                b = order[s:s + cfg.batch_size]
                mask = pack[b] > 0
                logits = net(pool[b].float(), pack[b].float()).masked_fill(~mask, -1e9)
                loss = F.cross_entropy(logits, pick[b])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
                total += loss.item() * len(b)
            train_loss = total / max(n, 1)
            if has_val:
                val_loss, val_top1 = _evaluate(net, data["val_pool"], data["val_pack"], data["val_pick"], data["val_forced"])
            else:
                val_loss, val_top1 = float("nan"), float("nan")
            for key, value in (("epoch", epoch), ("train_loss", train_loss), ("val_loss", val_loss),
                               ("val_top1", val_top1), ("seconds", time.perf_counter() - t0)):
                history[key].append(value)
            if on_epoch:
                on_epoch(epoch, train_loss, val_loss, val_top1)
            if not has_val or val_loss < best_loss:
                best_loss, best_epoch = val_loss, epoch
                best_state = copy.deepcopy(net.state_dict())
            elif epoch - best_epoch >= cfg.patience:
                break
        net.load_state_dict(best_state)
        net.eval()
        net = net.fold_features()
        history["best_epoch"] = best_epoch
        history["best_val_loss"] = best_loss if has_val else None
        history["best_val_top1"] = history["val_top1"][best_epoch] if has_val else None
        return net, history


def train_neural(logs: DraftLogs, train_mask: np.ndarray, val_mask: np.ndarray | None = None,
                 config: NeuralConfig | dict | None = None, epochs: int | None = None, seed: int = 0,
                 on_epoch: Callable[[int, float, float, float], None] | None = None,
                 name: str = "neural", card_features: np.ndarray | None = None,
                 set_list=None) -> tuple[NeuralBot, dict]:
    """Train on the rows of ``train_mask`` (early stopping on the loss over ``val_mask``).

    Deterministic for a seed on CPU (with a fixed thread count). ``on_epoch(epoch, train_loss,
    val_loss, val_top1)`` is called after every epoch of every ensemble member (and of the refit,
    with NaN validation numbers). ``card_features`` ([len(logs.cards), F], see
    :func:`card_feature_matrix`; or ``set_list``, a :class:`SetList` to build it from) adds the
    card-facts prior. With ``config.refit`` each member is
    trained again on train + validation rows for its best epoch count. Returns the bot (weights
    already rounded to the storage dtype) and the training history.
    """
    cfg = NeuralConfig.from_dict(config)
    if epochs is not None:
        cfg.epochs = int(epochs)
    if card_features is None and set_list is not None:
        card_features = card_feature_matrix([set_list.card(n) for n in logs.cards])
    train_mask = np.asarray(train_mask, bool)
    forced = logs.forced
    rows = np.flatnonzero(train_mask & ~forced)  # a forced pick carries no signal
    if not len(rows):
        raise ValueError("no unforced training picks")
    data = {"pool": torch.from_numpy(np.ascontiguousarray(logs.pool[rows])),
            "pack": torch.from_numpy(np.ascontiguousarray(logs.pack[rows])),
            "pick": torch.from_numpy(logs.pick[rows].astype(np.int64))}
    if val_mask is not None and np.asarray(val_mask, bool).any():
        v = np.flatnonzero(np.asarray(val_mask, bool))
        data.update(val_pool=torch.from_numpy(np.ascontiguousarray(logs.pool[v])),
                    val_pack=torch.from_numpy(np.ascontiguousarray(logs.pack[v])),
                    val_pick=torch.from_numpy(logs.pick[v].astype(np.int64)),
                    val_forced=torch.from_numpy(forced[v]))
    t0 = time.perf_counter()
    members, histories = [], []
    for k in range(max(1, cfg.ensemble)):
        net, hist = _train_member(len(logs.cards), cfg, data, seed + k, cfg.epochs, on_epoch, card_features)
        members.append(net)
        histories.append(hist)
    metrics = {"train_picks": int(len(rows)), "seed": seed, "best_epochs": [h["best_epoch"] for h in histories],
               "card_features": card_features is not None}
    val_top1 = None
    if "val_pick" in data:  # the metric of the rounded weights, ensemble averaged
        metrics["val_picks"] = int(len(data["val_pick"]))
        vlogs = logs.select(np.asarray(val_mask, bool))
        early = NeuralBot(logs.cards, members, config=cfg, name=name)
        val_top1 = round(float((ranks_from_scores(vlogs, early.score_logs(vlogs)) == 1).mean()), 4)
        metrics["val_top1"] = val_top1
    refit_histories = []
    if cfg.refit and "val_pick" in data:
        both = np.flatnonzero((train_mask | np.asarray(val_mask, bool)) & ~forced)
        full = {"pool": torch.from_numpy(np.ascontiguousarray(logs.pool[both])),
                "pack": torch.from_numpy(np.ascontiguousarray(logs.pack[both])),
                "pick": torch.from_numpy(logs.pick[both].astype(np.int64))}
        members = []
        for k, hist in enumerate(histories):
            net, rh = _train_member(len(logs.cards), cfg, full, seed + k, hist["best_epoch"] + 1, on_epoch,
                                    card_features, schedule_epochs=cfg.epochs)
            members.append(net)
            refit_histories.append(rh)
        metrics["refit_picks"] = int(len(both))
        metrics["val_top1_note"] = "validation top-1 of the early-stopped nets, before the refit on train + validation"
    seconds = time.perf_counter() - t0
    metrics["train_seconds"] = round(seconds, 1)
    bot = NeuralBot(logs.cards, members, config=cfg, name=name, metrics=metrics)
    history = {"members": histories, "refit": refit_histories, "train_seconds": seconds, "config": cfg.to_dict()}
    return bot, history


def pod_share_mask(keys: np.ndarray, share: float, salt: str = "val") -> np.ndarray:
    """A stable ``share`` of pods (by a hash of salt + pod key), independent of held_out_mask."""
    unique, inverse = np.unique(np.asarray(keys).astype(str), return_inverse=True)
    picked = np.array([(zlib.crc32(f"{salt}:{k}".encode()) % 10000) < share * 10000 for k in unique])
    return picked[inverse] if len(unique) else np.zeros(0, bool)


def _summary(agreement: dict) -> dict:
    return {k: agreement[k] for k in ("all", "unforced")}


def train_and_evaluate(csv_path: str | Path, seats_path: str | Path | None = None,
                       config: NeuralConfig | dict | None = None, seed: int = 0, *,
                       logs: DraftLogs | None = None, on_epoch: Callable | None = None,
                       limit: int | None = None, name: str = "neural",
                       card_features: np.ndarray | None = None, set_list=None) -> tuple[NeuralBot, dict]:
    """Read a 17Lands-layout file, hold out the official 1-in-10 pods, carve a validation share of
    the other pods, train, and report agreement on the held-out pods.

    ``seats_path`` defaults to the seats file beside ``csv_path`` (without one, every draft is its
    own pod). ``logs`` skips reading the file (already read). ``set_list`` (a :class:`SetList`)
    or ``card_features`` adds the card-facts prior (:func:`card_feature_matrix`). The report holds the held-out
    agreement (``held_out``: all / unforced / by_pick), validation metrics, sizes and timings; the
    held-out summary is also stored in ``bot.metrics``.
    """
    cfg = NeuralConfig.from_dict(config)
    t0 = time.perf_counter()
    if logs is None:
        logs = read_17lands_csv(csv_path, limit=limit)
    read_seconds = time.perf_counter() - t0
    if seats_path is None:
        seats_path = seats_file_for(csv_path)
    seats = read_seats(seats_path) if seats_path else None
    keys = pod_keys(logs, seats)
    held = held_out_mask(keys)
    val = ~held & pod_share_mask(keys, cfg.val_share)
    train = ~held & ~val
    bot, history = train_neural(logs, train, val, config=cfg, seed=seed, on_epoch=on_epoch, name=name,
                                card_features=card_features, set_list=set_list)
    t1 = time.perf_counter()
    test_logs = logs.select(held)
    held_agreement = agreement(test_logs, ranks_from_scores(test_logs, bot.score_logs(test_logs)))
    eval_seconds = time.perf_counter() - t1
    bot.metrics.update({"set": logs.set_code, "held_out": _summary(held_agreement),
                        "held_out_pods": int(len(np.unique(keys[held]))), "size_bytes": bot.size_bytes()})
    report = {"set": logs.set_code, "rows": len(logs), "pods": int(len(np.unique(keys))),
              "train_rows": int(train.sum()), "val_rows": int(val.sum()), "held_out_rows": int(held.sum()),
              "held_out": held_agreement, "val_top1": bot.metrics.get("val_top1"),
              "best_epochs": bot.metrics["best_epochs"], "train_seconds": round(history["train_seconds"], 1),
              "read_seconds": round(read_seconds, 1), "eval_seconds": round(eval_seconds, 2),
              "parameters": bot.parameter_count(), "size_bytes": bot.size_bytes(), "config": cfg.to_dict(),
              "history": history}
    return bot, report


def save_bot(bot: NeuralBot, path: str | Path) -> tuple[Path, Path]:
    """Write ``<path>.safetensors`` (config JSON in the metadata) and the ``.json`` sidecar."""
    path = Path(path)
    if path.suffix in (".safetensors", ".json"):
        path = path.with_suffix("")
    path.parent.mkdir(parents=True, exist_ok=True)
    config = bot.config()
    weights, sidecar = path.with_suffix(".safetensors"), path.with_suffix(".json")
    save_file(bot.to_tensors(), str(weights), metadata={"config": json.dumps(config)})
    sidecar.write_text(json.dumps(config, indent=1) + "\n", encoding="utf-8")
    return weights, sidecar


def load_bot(path: str | Path, name: str | None = None) -> NeuralBot:
    """Load a bot written by :func:`save_bot` (the config from the safetensors metadata)."""
    path = Path(path)
    if path.suffix != ".safetensors":
        path = path.with_suffix(".safetensors")
    with safe_open(str(path), framework="pt") as fh:
        meta = fh.metadata() or {}
    if "config" in meta:
        config = json.loads(meta["config"])
    else:
        config = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    bot = NeuralBot.from_tensors(load_file(str(path)), config)
    if name:
        bot.name = name
    return bot


__all__ = ["CARD_FEATURE_NAMES", "FORMAT", "NeuralBot", "NeuralConfig", "NeuralPickNet", "UNKNOWN_SCORE",
           "card_feature_matrix", "load_bot", "pod_share_mask", "save_bot", "train_and_evaluate", "train_neural"]
