"""The deck-level slot ranker's network (pure torch): the slot scorer with set attention, its training on
examples, and filling a board in score order (``rank_fill``). Features: ``rank_features``; ``deckrank`` says the
whole and trains it on the corpus."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from decks.completion.models.baselines import DeckBuilder
from decks.completion.models.rank_features import (CARD_COLUMNS, GROUP_COLUMNS, SLOT_FEATURES, BoardSlots, SlotIndex,
                                                   board_slots)

# ----------------------------------------------------------------------------------------- the network

@dataclass(frozen=True)
class RankerConfig:
    slot_features: int = SLOT_FEATURES
    context: int = 25
    width: int = 96
    layers: int = 2           # set-attention layers (0: each slot scored on its own, the ablation)
    heads: int = 4
    card_features: bool = True
    archetype_groups: bool = True  # False: the archetype groups' columns zeroed (the ablation)

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict) -> "RankerConfig":
        return cls(**{k: type(getattr(cls, k))(v) for k, v in d.items() if k in cls.__dataclass_fields__})


class SlotRanker(nn.Module):
    """Slot tokens (evidence + card features + deck context) -> one score per slot, the slots attending to each
    other and to a deck-context token."""

    def __init__(self, config: RankerConfig):
        super().__init__()
        self.config = config
        d = config.width
        self.slot_in = nn.Sequential(nn.Linear(config.slot_features + config.context, d), nn.GELU(), nn.Linear(d, d))
        self.ctx_in = nn.Sequential(nn.Linear(config.context, d), nn.GELU(), nn.Linear(d, d))
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(d, config.heads, 2 * d, dropout=0.0, batch_first=True, norm_first=True)
            for _ in range(config.layers)])
        self.out = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d), nn.GELU(), nn.Linear(d, 1))

    def forward(self, x: torch.Tensor, ctx: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x [B, S, D], ctx [B, C], mask bool [B, S] (True = a real slot) -> logits [B, S]."""
        if x.shape[-1] > self.config.slot_features:  # a version trained before the groups: their columns last
            x = x[..., :self.config.slot_features]
        if not self.config.card_features or not self.config.archetype_groups:
            x = x.clone()
            if not self.config.card_features:
                x[..., CARD_COLUMNS] = 0.0
            if not self.config.archetype_groups:
                x[..., GROUP_COLUMNS] = 0.0
        S = x.shape[1]
        h = self.slot_in(torch.cat([x, ctx[:, None, :].expand(-1, S, -1)], dim=-1))
        if self.layers:
            c = self.ctx_in(ctx)[:, None, :]
            h = torch.cat([c, h], dim=1)
            pad = torch.cat([torch.zeros_like(mask[:, :1]), ~mask], dim=1)
            for layer in self.layers:
                h = layer(h, src_key_padding_mask=pad)
            h = h[:, 1:]
        return self.out(h).squeeze(-1)


def train_ranker(X: np.ndarray, C: np.ndarray, Y: np.ndarray, M: np.ndarray, config: RankerConfig, *,
                 epochs: int = 6, batch: int = 64, lr: float = 2e-3, seed: int = 0, listwise: float = 1.0,
                 log=None, valid=None, model_class: type | None = None) -> SlotRanker:
    """Fit a ``SlotRanker`` on padded examples: X float32 [E, S, D], C [E, CTX], Y float32 [E, S] (targets), M bool
    [E, S]. Loss: mean binary cross-entropy over real slots + ``listwise`` x the softmax cross-entropy of the
    targets spread evenly over the true slots (ListNet). ``valid(model) -> float`` is called after each epoch
    (higher is better) and the best epoch's weights are kept. ``model_class``: a ``SlotRanker`` subclass to fit."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = (model_class or SlotRanker)(config)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    E = X.shape[0]
    steps = epochs * math.ceil(E / batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    Xt, Ct, Yt, Mt = (torch.from_numpy(np.ascontiguousarray(a)) for a in (X, C, Y, M))
    best, best_state = -math.inf, None
    for epoch in range(epochs):
        model.train()
        perm = rng.permutation(E)
        total = 0.0
        for i in range(0, E, batch):
            idx = torch.from_numpy(perm[i:i + batch])
            x, c, y, m = Xt[idx], Ct[idx], Yt[idx], Mt[idx]
            logits = model(x, c, m)
            mf = m.float()
            bce = (nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="none") * mf).sum() / mf.sum()
            loss = bce
            if listwise:
                logp = torch.log_softmax(logits.masked_fill(~m, -1e9), dim=-1)
                tgt = y * mf / (y * mf).sum(-1, keepdim=True).clamp_min(1.0)
                loss = loss + listwise * -(tgt * logp).sum(-1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * idx.numel()
        model.eval()
        score = valid(model) if valid is not None else -total
        if log:
            log(f"epoch {epoch + 1}/{epochs}: loss {total / E:.4f}, validation {score:.4f}")
        if score > best:
            best, best_state = score, {k: v.clone() for k, v in model.state_dict().items()}
    if best_state is not None:
        model.load_state_dict(best_state)
    return model.eval()


def score_slots(model: SlotRanker | None, slots: BoardSlots) -> np.ndarray:
    """float64 [S]: the model's logits for one board's slots (no model: the base vote)."""
    if model is None or slots.card.size == 0:
        return slots.base.astype(np.float64)
    with torch.no_grad():
        x = torch.from_numpy(slots.x)[None]
        c = torch.from_numpy(slots.ctx)[None]
        m = torch.ones(1, slots.card.size, dtype=torch.bool)
        return model(x, c, m)[0].double().numpy()


def rank_fill(model: SlotRanker | None, index: SlotIndex, b: DeckBuilder, board: int,
              query: np.ndarray | None = None) -> BoardSlots:
    """Fill one board of the builder ``b`` by the ranker's scores (copy n only after copy n - 1; a copy's score is
    at most its previous copy's), the builder's limits as hard masks. ``query``: the retrieval query (default:
    the main deck as it stands). Returns the slots (for the confidence and the sources)."""
    main_count = np.asarray(b.main_count, dtype=np.int64)
    side_count = np.asarray(b.side_count, dtype=np.int64)
    q = main_count if query is None else np.asarray(query, dtype=np.int64)
    count, other = (main_count, side_count) if board == 0 else (side_count, main_count)
    slots = board_slots(index, b.fmt, board, q, count, other, b.blocked(), b.limit,
                        known=np.asarray(b.main_known_count, dtype=np.int64))
    if slots.card.size == 0:
        return slots
    return fill_scored(b, board, slots, score_slots(model, slots))


def fill_scored(b: DeckBuilder, board: int, slots: BoardSlots, s: np.ndarray) -> BoardSlots:
    """Fill one board of ``b`` with ``slots`` in the order of their scores ``s`` (copy n only after copy n - 1; a
    copy's score is capped at its previous copy's), the builder's limits as hard masks; ``slots.score`` = the
    scores used."""
    s = np.asarray(s, dtype=np.float64).copy()
    # a copy may not outrank the copy before it: cumulative minimum over each card's copies in copy order
    order = np.lexsort((slots.copy, slots.card))
    cards_sorted = slots.card[order]
    s_sorted = s[order].copy()
    for i in range(1, s_sorted.size):
        if cards_sorted[i] == cards_sorted[i - 1]:
            s_sorted[i] = min(s_sorted[i], s_sorted[i - 1])
    s[order] = s_sorted
    add, left = (b.add_main, lambda: b.main_left) if board == 0 else (b.add_side, lambda: b.side_left)
    cnt = b.main_count if board == 0 else b.side_count
    pending = list(np.lexsort((slots.card, slots.copy, -s)))
    progress = True
    while pending and left() > 0 and progress:  # a slot whose previous copy comes later waits for it
        progress, rest = False, []
        for k in pending:
            if left() <= 0:
                break
            c, j = int(slots.card[k]), int(slots.copy[k])
            if cnt[c] >= j:
                progress = True
                continue
            if cnt[c] == j - 1:
                if add(c, 1):
                    progress = True
                continue
            rest.append(k)
        pending = rest
    slots.score = s
    return slots
