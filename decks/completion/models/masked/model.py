"""Masked (absorbing-state) diffusion over card tokens, conditioned on retrieved neighbour decks (pure torch).

A deck board is a set of (card, count) tokens, no positions. Diffusion hides whole tokens (all copies of a
card together, as Manamorphosis does); the denoiser sees the visible tokens and, as extra tokens, the
**candidates**: the cards the retrieved neighbour decks play (``decks.completion.models.retrieval``), each carrying its
neighbour-vote features. Two output heads (``MaskedConfig.head``):

- **slot** (the default since version 2): the board is a vector of copy counts over the cards, and every card
  that is not visible is a masked position whose clean value is its hidden count (0 for a card the deck does
  not play): the x0-prediction of masked diffusion over that vector (MDLM, Sahoo et al. 2024; MD4, Shi et al.
  2024). For each candidate ``c`` with ``v`` visible copies, logits over k = 0..MAX_ADD more copies:

      s_c(k) = log P_vote(exactly k more)  + (1 - g) * delta_c(k)

  ``P(at least j more)`` is then a calibrated probability that the deck holds copy ``v + j``: the sampler ranks
  slots by it, and the page shows it as the confidence.
- **token** (version 1): a token logit ``l_c``, p(a hidden token is card c) = softmax over the candidates
  (MDLM's cross-entropy on hidden tokens, ELBO weight 1/t for mask rate t), and count logits ``k_c(j)``,
  j = 1..MAX_ADD, for how many copies a hidden token holds:

      l_c    = log vote(c, v+1)                              + (1 - g) * delta_c
      k_c(j) = log P_vote(exactly j more | at least 1 more)  + (1 - g) * delta_c(j)

The neighbour votes are the prior, mixed in by a learned gate ``g`` (kNN-LM style): at ``g = 1`` the slot
probabilities are the votes (``vote(c, n)`` for copy n) and the sampler fills the deck exactly as the
neighbour-vote baseline. The network's last layers start at zero, so training starts from the baseline and
learns corrections.

The main board and the sideboard use the same network (a board embedding says which one is predicted);
for the sideboard the whole main deck is visible and the candidates come from the neighbours' sideboards.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from decks.completion.models.retrieval import MAX_COPIES, Votes

__all__ = ["MaskedConfig", "MaskedDenoiser", "Example", "candidate_features", "N_FEATURES", "MAX_ADD",
           "MAX_COUNT_IN", "EPS", "collate", "prior_logits", "slot_scores", "slot_prior", "at_least"]

MAX_ADD = 30        # count classes: 1..MAX_ADD more copies (more is clipped)
MAX_COUNT_IN = 30   # visible-count embedding size
EPS = 1e-4          # vote floor inside the logs
N_FEATURES = 17
UNK = 0             # token 0 = a card outside the model's vocabulary


@dataclass
class MaskedConfig:
    vocab: int = 2           # tokens (index 0 = unknown card)
    d_model: int = 64
    heads: int = 4
    layers: int = 2
    ff: int = 128
    dropout: float = 0.0
    formats: int = 7
    candidates: int = 96     # at most this many candidate tokens per board (by vote; the no-retrieval model's shortlist)
    retrieval: bool = True   # False: the no-retrieval ablation (decks.completion.models.masked.ablation.PlainDenoiser)
    head: str = "slot"       # "slot": per-candidate count distribution (0 = absent); "token": MDLM softmax (v1)
    main_given: bool = True  # the global token sees the share of the main deck the user gave (v1: no such input)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "MaskedConfig":
        d = dict(d)
        d.setdefault("head", "token")  # versions stored before the slot head had only the token head
        d.setdefault("main_given", False)  # ... and no input for the share of the main deck the user gave
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


@dataclass
class Example:
    """One board to denoise, as arrays (built by ``decks.completion.models.masked.data`` or the sampler)."""

    vis_tok: np.ndarray    # int64 [L]: visible tokens (both boards)
    vis_cnt: np.ndarray    # int64 [L]: their visible counts
    vis_seg: np.ndarray    # int64 [L]: 0 main, 1 side
    cand_card: np.ndarray  # int64 [C]: candidate card indices (catalogue space)
    cand_tok: np.ndarray   # int64 [C]: their tokens
    feats: np.ndarray      # float32 [C, N_FEATURES]
    prior_tok: np.ndarray  # float32 [C]: log vote(c, v+1)
    prior_cnt: np.ndarray  # float32 [C, MAX_ADD]: log P_vote(exactly j more | >= 1 more)
    board: int             # 0 main, 1 side
    fmt: int
    known_frac: float      # share of this board's slots that are visible
    target: np.ndarray | None = None   # int64 [C]: hidden copies of each candidate (0 = not hidden)
    main_given: float = 1.0            # share of the main deck the user gave (the rest was generated)


def _count_prior(table_rows: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From vote rows ``table_rows`` [C, MAX_COPIES+1] and visible copies ``v`` [C]: the token prior
    log vote(c, v+1) and the count prior log P(exactly j more | >= 1 more), j = 1..MAX_ADD."""
    C = table_rows.shape[0]
    cols = np.minimum(v[:, None] + np.arange(1, MAX_ADD + 2)[None, :], MAX_COPIES)  # copies v+1 .. v+MAX_ADD+1
    at_least = np.take_along_axis(table_rows, cols, axis=1)  # [C, MAX_ADD+1]
    at_least[cols >= MAX_COPIES] = 0.0
    first = at_least[:, 0]
    exact = at_least[:, :-1] - at_least[:, 1:]
    exact[:, -1] = at_least[:, MAX_ADD - 1]  # the last class holds "MAX_ADD or more"
    safe = np.maximum(first, EPS)[:, None]
    prior_cnt = np.log(np.maximum(exact / safe, EPS))
    prior_tok = np.log(np.maximum(first, EPS))
    return prior_tok.astype(np.float32), prior_cnt.astype(np.float32).reshape(C, MAX_ADD)


def _next_vote(votes: Votes, cards: np.ndarray, v: np.ndarray) -> np.ndarray:
    """vote(c, v_c + 1) of ``votes`` for each card (0 where no neighbour of that set plays it)."""
    out = np.zeros(cards.size)
    if votes.cards.size == 0 or cards.size == 0:
        return out
    pos = np.minimum(np.searchsorted(votes.cards, cards), votes.cards.size - 1)
    hit = votes.cards[pos] == cards
    out[hit] = votes.table[pos[hit], np.minimum(v[hit] + 1, MAX_COPIES)]
    return out


def candidate_features(votes: Votes, other: Votes, vis_board: np.ndarray, vis_other: np.ndarray,
                       popularity: np.ndarray, blocked: np.ndarray | None, limit: int,
                       wide: Votes | None = None, narrow: Votes | None = None, slots_left: int = 0):
    """Pick the candidates of one board and compute their features.

    ``votes``: this board's neighbour votes; ``other``: the other board's; ``vis_board`` / ``vis_other``:
    visible copies per card [V] on this / the other board; ``popularity``: the format's share of decks
    playing each card [V]; ``blocked``: bool [V] cards that may not take another copy (or None).
    Candidates: cards some neighbour plays on this board with a vote for one more copy than is visible,
    not blocked, best ``limit`` by that vote (ties by card index).
    Returns (cards [C], feats [C, N_FEATURES], prior_tok [C], prior_cnt [C, MAX_ADD]).
    """
    cards = votes.cards
    if cards.size == 0:
        return (np.zeros(0, np.int64), np.zeros((0, N_FEATURES), np.float32), np.zeros(0, np.float32),
                np.zeros((0, MAX_ADD), np.float32))
    v = np.minimum(vis_board[cards], MAX_COPIES - 1).astype(np.int64)
    nxt = votes.table[np.arange(cards.size), v + 1]
    ok = nxt > 0
    if blocked is not None:
        ok &= ~blocked[cards]
    idx = np.flatnonzero(ok)
    idx = idx[np.lexsort((cards[idx], -nxt[idx]))][:limit]
    cards, table, v = cards[idx], votes.table[idx], v[idx]
    prior_tok, prior_cnt = _count_prior(table, v)
    ov = np.zeros(cards.size)
    if other.cards.size:
        pos = np.searchsorted(other.cards, cards)
        pos_c = np.minimum(pos, other.cards.size - 1)
        hit = other.cards[pos_c] == cards
        ov[hit] = other.table[pos_c[hit], 1]
    held = np.maximum(table[:, 1], 1e-9)
    mean_count = table[:, 1:].sum(axis=1) / held
    nxt = table[np.arange(cards.size), np.minimum(v + 1, MAX_COPIES)]
    top = max(float(nxt.max()), 1e-9) if nxt.size else 1.0
    feats = np.stack([
        _next_vote(wide if wide is not None else votes, cards, v),
        _next_vote(narrow if narrow is not None else votes, cards, v),
        nxt / top,
        np.arange(cards.size) / max(1, limit),
        np.full(cards.size, slots_left / 60.0),
        table[:, 1], table[:, 2], table[:, 3], table[:, 4],
        table[np.arange(cards.size), np.minimum(v + 1, MAX_COPIES)],
        np.log(np.maximum(table[np.arange(cards.size), np.minimum(v + 1, MAX_COPIES)], EPS)) / 10.0,
        np.minimum(mean_count, 30) / 10.0,
        ov,
        np.minimum(vis_board[cards], 30) / 4.0,
        np.minimum(vis_other[cards], 30) / 4.0,
        np.log(np.maximum(popularity[cards], 1e-6)) / 10.0,
        (vis_board[cards] > 0).astype(np.float64),
    ], axis=1).astype(np.float32)
    return cards.astype(np.int64), feats, prior_tok, prior_cnt


def collate(examples: list[Example]) -> dict[str, torch.Tensor]:
    """Pad a list of examples into batch tensors (masks: True = padding)."""
    B = len(examples)
    L = max(1, max(e.vis_tok.size for e in examples))
    C = max(1, max(e.cand_tok.size for e in examples))
    vis_tok = np.zeros((B, L), np.int64)
    vis_cnt = np.zeros((B, L), np.int64)
    vis_seg = np.zeros((B, L), np.int64)
    vis_pad = np.ones((B, L), bool)
    cand_tok = np.zeros((B, C), np.int64)
    feats = np.zeros((B, C, N_FEATURES), np.float32)
    prior_tok = np.full((B, C), math.log(EPS), np.float32)
    prior_cnt = np.full((B, C, MAX_ADD), math.log(EPS), np.float32)
    cand_pad = np.ones((B, C), bool)
    target = np.zeros((B, C), np.int64)
    for i, e in enumerate(examples):
        n, c = e.vis_tok.size, e.cand_tok.size
        vis_tok[i, :n], vis_cnt[i, :n], vis_seg[i, :n], vis_pad[i, :n] = e.vis_tok, e.vis_cnt, e.vis_seg, False
        cand_tok[i, :c], feats[i, :c], prior_tok[i, :c], prior_cnt[i, :c] = e.cand_tok, e.feats, e.prior_tok, e.prior_cnt
        cand_pad[i, :c] = False
        if e.target is not None:
            target[i, :c] = e.target
    t = torch.from_numpy
    return {"vis_tok": t(vis_tok), "vis_cnt": t(np.minimum(vis_cnt, MAX_COUNT_IN)), "vis_seg": t(vis_seg),
            "vis_pad": t(vis_pad), "cand_tok": t(cand_tok), "feats": t(feats), "prior_tok": t(prior_tok),
            "prior_cnt": t(prior_cnt), "cand_pad": t(cand_pad), "target": t(target),
            "board": torch.tensor([e.board for e in examples]), "fmt": torch.tensor([e.fmt for e in examples]),
            "known_frac": torch.tensor([e.known_frac for e in examples], dtype=torch.float32),
            "main_given": torch.tensor([e.main_given for e in examples], dtype=torch.float32)}


class MaskedDenoiser(nn.Module):
    """Set transformer over [global token; visible tokens; candidate tokens] -> token and count logits."""

    def __init__(self, config: MaskedConfig):
        super().__init__()
        self.config = c = config
        d = c.d_model
        self.card = nn.Embedding(c.vocab, d)
        nn.init.normal_(self.card.weight, std=0.02)
        self.count = nn.Embedding(MAX_COUNT_IN + 1, d)
        self.segment = nn.Embedding(2, d)
        self.board = nn.Embedding(2, d)
        self.fmt = nn.Embedding(c.formats + 1, d)
        self.kind = nn.Embedding(3, d)  # global / visible / candidate
        self.feat = nn.Sequential(nn.Linear(N_FEATURES, d), nn.GELU(), nn.Linear(d, d))
        self.known = nn.Linear(1, d)
        if c.main_given:
            self.given = nn.Linear(1, d)
        layer = nn.TransformerEncoderLayer(d, c.heads, c.ff, c.dropout, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, c.layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        if c.head == "slot":
            heads = [nn.Linear(d, MAX_ADD + 1)]
            self.slot_head = heads[0]
        elif c.head == "token":
            self.tok_head = nn.Linear(d, 1)
            self.cnt_head = nn.Linear(d, MAX_ADD)
            heads = [self.tok_head, self.cnt_head]
        else:
            raise ValueError(f"unknown head {c.head!r}: 'slot' or 'token'")
        for head in heads:  # start exactly at the neighbour-vote prior
            nn.init.zeros_(head.weight)
            nn.init.zeros_(head.bias)
        self.gate_logit = nn.Parameter(torch.zeros(()))

    def gate(self) -> torch.Tensor:
        return torch.sigmoid(self.gate_logit)

    def _states(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """[B, C, d]: the candidates' states after the set transformer."""
        c = self.config
        B = batch["cand_tok"].shape[0]
        fmt = batch["fmt"].clamp(max=c.formats)
        glob = self.fmt(fmt) + self.board(batch["board"]) + self.known(batch["known_frac"][:, None]) + self.kind.weight[0]
        if c.main_given:
            glob = glob + self.given(batch["main_given"][:, None])
        glob = glob[:, None, :]
        vis = (self.card(batch["vis_tok"]) + self.count(batch["vis_cnt"]) + self.segment(batch["vis_seg"])
               + self.kind.weight[1])
        cand = self.card(batch["cand_tok"]) + self.feat(batch["feats"]) + self.kind.weight[2]
        x = torch.cat([glob, vis, cand], dim=1)
        pad = torch.cat([torch.zeros(B, 1, dtype=torch.bool, device=batch["vis_pad"].device), batch["vis_pad"], batch["cand_pad"]], dim=1)
        return self.norm(self.encoder(x, src_key_padding_mask=pad))[:, 1 + vis.shape[1]:]

    def forward(self, batch: dict[str, torch.Tensor], gate: float | None = None):
        """Token head: (token logits [B, C], count logits [B, C, MAX_ADD]), padding candidates' token logits -inf.
        Slot head: count logits [B, C, MAX_ADD + 1] over 0..MAX_ADD more copies (0 = the card is not hidden)."""
        h = self._states(batch)
        g = self.gate() if gate is None else torch.as_tensor(float(gate))
        if self.config.head == "slot":
            return slot_prior(batch) + (1 - g) * self.slot_head(h)
        tok = batch["prior_tok"] + (1 - g) * self.tok_head(h).squeeze(-1)
        cnt = batch["prior_cnt"] + (1 - g) * self.cnt_head(h)
        tok = tok.masked_fill(batch["cand_pad"], float("-inf"))
        return tok, cnt

    def scores(self, batch: dict[str, torch.Tensor], gate: float | None = None) -> tuple[torch.Tensor, bool]:
        """(slot scores [B, C, MAX_ADD]: the score of adding j = 1..MAX_ADD more copies of each candidate, and
        whether they are calibrated log-probabilities log P(at least j more copies are hidden) (slot head) or
        only a ranking (token head: log p(token) + log P(at least j more | token))."""
        if self.config.head == "slot":
            return at_least(self(batch, gate))[..., 1:], True
        tok, cnt = self(batch, gate)
        return slot_scores(tok, cnt), False

    def loss(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict]:
        """Slot head: the cross-entropy of every candidate's hidden copy count (0 = not hidden), weight 1/t.
        Token head: MDLM loss on the hidden tokens (ELBO weight 1/t, t = hidden share) + the count cross-entropy."""
        if self.config.head == "slot":
            return self._slot_loss(batch)
        tok, cnt = self(batch)
        target = batch["target"]
        hidden = target > 0
        logp = torch.log_softmax(tok, dim=-1).masked_fill(batch["cand_pad"], 0.0)
        n_hidden = hidden.sum(dim=1).clamp(min=1)
        n_visible = ((batch["vis_seg"] == batch["board"][:, None]) & ~batch["vis_pad"]).sum(dim=1)
        t = (1.0 - batch["known_frac"]).clamp(min=0.02)
        # MDLM: sum of the hidden tokens' cross-entropies with weight 1/t, over the board's token count
        tok_loss = -(logp * hidden).sum(dim=1) / t / (hidden.sum(dim=1) + n_visible).clamp(min=1)
        cls = (target.clamp(min=1, max=MAX_ADD) - 1)
        ce = nn.functional.cross_entropy(cnt.reshape(-1, MAX_ADD), cls.reshape(-1), reduction="none").view_as(target)
        cnt_loss = (ce * hidden).sum(dim=1) / n_hidden
        has = (hidden.sum(dim=1) > 0).float()
        norm = has.sum().clamp(min=1)
        tok_mean, cnt_mean = (tok_loss * has).sum() / norm, (cnt_loss * has).sum() / norm
        return tok_mean + cnt_mean, {"token": float(tok_mean.detach()), "count": float(cnt_mean.detach())}

    def _slot_loss(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict]:
        """Masked diffusion over the board's count vector: every card not visible is a masked position whose clean
        value is its hidden copy count (0 for the cards the deck does not play); the candidates are the positions
        scored (the rest are taken as 0). Loss = the mean cross-entropy of the candidates' counts per board.

        MDLM's 1/t weight is dropped on purpose: it balances mask rates when the masked positions are the hidden
        tokens (their number grows with t); here every non-visible card is a position at every mask rate, and the
        boards' K already follow what users send, so each board counts once."""
        logits = self(batch)
        target = batch["target"].clamp(max=MAX_ADD)
        pad = batch["cand_pad"]
        ce = nn.functional.cross_entropy(logits.reshape(-1, MAX_ADD + 1), target.reshape(-1),
                                         reduction="none").view_as(target).masked_fill(pad, 0.0)
        n = (~pad).sum(dim=1)
        has = (n > 0).float()
        per = ce.sum(dim=1) / n.clamp(min=1)
        mean = (per * has).sum() / has.sum().clamp(min=1)
        return mean, {"slot": float(mean.detach())}

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())


def slot_prior(batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """[B, C, MAX_ADD + 1]: the neighbour vote's log P(exactly k more copies), k = 0..MAX_ADD, from the token
    prior (log vote(c, v+1) = log P(at least one more)) and the count prior (log P(exactly j | at least 1))."""
    p_more = torch.exp(batch["prior_tok"]).clamp(max=1.0)
    none = torch.log((1.0 - p_more).clamp(min=EPS))
    # count classes no neighbour holds sit at the floor EPS: lower them to EPS^2, so that the thirty empty classes
    # do not take ~3% of the mass from the voted ones
    floor = math.log(EPS)
    cnt = torch.where(batch["prior_cnt"] <= floor + 1e-4, torch.full_like(batch["prior_cnt"], 2 * floor),
                      batch["prior_cnt"])
    return torch.cat([none[..., None], batch["prior_tok"][..., None] + cnt], dim=-1)


def at_least(logits: torch.Tensor) -> torch.Tensor:
    """log P(count >= k), k = 0..K-1, from count logits [..., K] (normalised here)."""
    logp = torch.log_softmax(logits, dim=-1)
    return torch.logcumsumexp(logp.flip(-1), dim=-1).flip(-1)


def prior_logits(batch: dict[str, torch.Tensor]):
    """The gate-1 logits (pure neighbour vote), for baselines and tests."""
    return batch["prior_tok"].masked_fill(batch["cand_pad"], float("-inf")), batch["prior_cnt"]


def slot_scores(tok: torch.Tensor, cnt: torch.Tensor) -> torch.Tensor:
    """Score of (candidate, j more copies) = log p(token) + log P(at least j more | token): [.., C, MAX_ADD].

    Adding copies of one card one at a time in decreasing score keeps copy order (the score falls with j).
    """
    return tok.unsqueeze(-1) + at_least(cnt)  # log P(>= j)
