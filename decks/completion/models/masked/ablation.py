"""The masked denoiser *without retrieval*: the ablation that shows what the neighbour decks add (pure torch).

Same diffusion (whole card groups hidden, MDLM cross-entropy on the hidden tokens with the ELBO weight 1/t, a
count head), same sampler and legality masks, but no neighbour decks anywhere: no candidate tokens, no vote
features, no vote prior. A set transformer reads [global token; visible (card, count, board) tokens]; the global
token's state ``h`` scores every card of the vocabulary, ``l_c = h . E_c + b_c`` (output tied to the card
embeddings), over the cards the format allows that may take another copy; the count head reads ``h`` and the
card's embedding. The sampler scores the whole allowed vocabulary, then reads counts for its ``shortlist`` best
cards (the count head is the only per-card work).

Training examples need no retrieval: the user's cards are kept by the evaluation's masking rule (as for the full
model) and, for part of the examples, some hidden groups are revealed too (earlier unmasking rounds).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from decks.completion.models.masked.model import MAX_ADD, MAX_COUNT_IN, UNK, MaskedConfig
from decks.completion.models.masked.data import Tables, user_k, visible_batch
from decks.completion.models.masking import batch_masks

__all__ = ["PlainDenoiser", "PlainPlan", "plan_plain_examples", "plain_batch"]


class PlainDenoiser(nn.Module):
    """Set transformer over [global; visible tokens] -> logits over the vocabulary and per-card count logits."""

    retrieval = False

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
        self.kind = nn.Embedding(2, d)  # global / visible
        self.known = nn.Linear(1, d)
        layer = nn.TransformerEncoderLayer(d, c.heads, c.ff, c.dropout, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, c.layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, d)
        self.bias = nn.Parameter(torch.zeros(c.vocab))
        self.cnt_head = nn.Sequential(nn.Linear(2 * d, c.ff), nn.GELU(), nn.Linear(c.ff, MAX_ADD))

    def gate(self) -> torch.Tensor:
        return torch.zeros(())  # no prior to mix in

    def encode(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """[B, d]: the global token's state given the visible tokens."""
        c = self.config
        fmt = batch["fmt"].clamp(max=c.formats)
        glob = (self.fmt(fmt) + self.board(batch["board"]) + self.known(batch["known_frac"][:, None])
                + self.kind.weight[0])[:, None, :]
        vis = (self.card(batch["vis_tok"]) + self.count(batch["vis_cnt"]) + self.segment(batch["vis_seg"])
               + self.kind.weight[1])
        B = vis.shape[0]
        x = torch.cat([glob, vis], dim=1)
        pad = torch.cat([torch.zeros(B, 1, dtype=torch.bool), batch["vis_pad"]], dim=1)
        return self.norm(self.encoder(x, src_key_padding_mask=pad))[:, 0]

    def token_logits(self, h: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
        """[B, vocab] logits; -inf where ``allowed`` [B, vocab] is False (and for the unknown token)."""
        logits = self.out(h) @ self.card.weight.T + self.bias
        allowed = allowed.clone()
        allowed[:, UNK] = False
        return logits.masked_fill(~allowed, float("-inf"))

    def count_logits(self, h: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """[B, T, MAX_ADD] for tokens [B, T]."""
        e = self.card(tokens)
        return self.cnt_head(torch.cat([h[:, None, :].expand_as(e), e], dim=-1))

    def loss(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict]:
        """MDLM cross-entropy of the hidden tokens over the allowed vocabulary (weight 1/t) + count cross-entropy."""
        h = self.encode(batch)
        logp = torch.log_softmax(self.token_logits(h, batch["allowed"]), dim=-1)
        tgt, tpad = batch["tgt_tok"], batch["tgt_pad"]
        hit = torch.gather(logp, 1, tgt).masked_fill(tpad, 0.0)
        n_hidden = (~tpad).sum(dim=1)
        n_visible = ((batch["vis_seg"] == batch["board"][:, None]) & ~batch["vis_pad"]).sum(dim=1)
        t = (1.0 - batch["known_frac"]).clamp(min=0.02)
        tok_loss = -hit.sum(dim=1) / t / (n_hidden + n_visible).clamp(min=1)
        cnt = self.count_logits(h, tgt)
        cls = batch["tgt_cnt"].clamp(min=1, max=MAX_ADD) - 1
        ce = nn.functional.cross_entropy(cnt.reshape(-1, MAX_ADD), cls.reshape(-1), reduction="none").view_as(tgt)
        cnt_loss = ce.masked_fill(tpad, 0.0).sum(dim=1) / n_hidden.clamp(min=1)
        has = (n_hidden > 0).float()
        norm = has.sum().clamp(min=1)
        tok_mean, cnt_mean = (tok_loss * has).sum() / norm, (cnt_loss * has).sum() / norm
        return tok_mean + cnt_mean, {"token": float(tok_mean.detach()), "count": float(cnt_mean.detach())}

    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.parameters())


@dataclass
class PlainPlan:
    """One training example: deck row, board, and which slots of that board are visible."""

    row: int
    board: int
    shown: np.ndarray   # bool [60] or [15]


def plan_plain_examples(main: np.ndarray, side: np.ndarray, rows: np.ndarray, popularity_all: np.ndarray, seed: int,
                        side_share: float = 0.5) -> list[PlainPlan]:
    """Main examples (the user's K cards, plus, 60% of the time, a random share of the hidden groups) and, for
    ``side_share`` of the decks, sideboard examples (whole main deck visible, 0..14 sideboard cards)."""
    rng = np.random.default_rng([int(seed), 0xB1A1])
    rows = np.asarray(rows, dtype=np.int64)
    ks = user_k(rng, rows.size)
    plans = []
    for i, r in enumerate(rows):
        r = int(r)
        frac = rng.random() * 0.9 if rng.random() < 0.6 else 0.0
        k = int(ks[i]) + int(round(frac * (60 - int(ks[i]))))
        shown = batch_masks(main[r][None, :], popularity_all, rng, kind="main", k=min(k, 59))[0]
        plans.append(PlainPlan(r, 0, shown))
        if rng.random() < side_share:
            k = 0 if rng.random() < 0.6 else int(rng.integers(1, 15))
            plans.append(PlainPlan(r, 1, batch_masks(side[r][None, :], popularity_all, rng, kind="side", k=k)[0]))
    return plans


def plain_batch(tables: Tables, plans: list[PlainPlan], main: np.ndarray, side: np.ndarray,
                fmt: np.ndarray) -> dict[str, torch.Tensor]:
    """Training batch: the visible tokens, the allowed vocabulary, and the hidden tokens with their counts.

    A hidden card the format's observed legality does not allow (rare: a deck older than the legality table's
    evidence) is dropped from the targets rather than given an impossible -inf target."""
    V = tables.token.size
    items, targets = [], []
    for p in plans:
        r, f = p.row, int(fmt[p.row])
        board_cards = main[r] if p.board == 0 else side[r]
        vis = np.bincount(board_cards[p.shown], minlength=V)
        truth = np.bincount(board_cards, minlength=V)
        mv, sv = (vis, np.zeros(V, np.int64)) if p.board == 0 else (np.bincount(main[r], minlength=V), vis)
        items.append((f, p.board, mv, sv))
        hidden = np.flatnonzero(truth - vis > 0)   # hidden groups, and the missing copies of shown cards
        hidden = hidden[tables.token[hidden] > 0]
        targets.append((tables.token[hidden], (truth - vis)[hidden]))
    batch = visible_batch(tables, items)
    T = max(1, max(t[0].size for t in targets))
    tgt_tok = np.zeros((len(plans), T), np.int64)
    tgt_cnt = np.ones((len(plans), T), np.int64)
    tgt_pad = np.ones((len(plans), T), bool)
    allowed = batch["allowed"].numpy()
    for i, (tok, cnt) in enumerate(targets):
        keep = allowed[i, tok]
        tok, cnt = tok[keep], cnt[keep]
        tgt_tok[i, :tok.size], tgt_cnt[i, :tok.size], tgt_pad[i, :tok.size] = tok, cnt, False
    batch.update({"tgt_tok": torch.from_numpy(tgt_tok), "tgt_cnt": torch.from_numpy(tgt_cnt),
                  "tgt_pad": torch.from_numpy(tgt_pad)})
    return batch
