"""Embedding -> card classifier (pure torch): a linear layer mapping a (noisy) card vector to its card index.

Manamorphosis trains ``nn.Linear(128, V)`` with cross-entropy on the card vectors. We train on the
diffusion-space vectors plus gaussian noise (``noise_std`` per dimension), since the denoiser's outputs are
never exactly a card vector.

Initialisation: for vectors ``x = e_i + N(0, s^2 I)`` with a uniform prior over cards, the Bayes classifier is
linear: ``logit_i = <x, e_i> / s^2 - |e_i|^2 / (2 s^2)``. We start from it (``init="gaussian"``) so that a
few epochs of cross-entropy fine-tuning suffice for V = 35k cards on a CPU; ``init="random"`` gives
``nn.Linear``'s default start instead.

Cards with identical token lists (functional reprints) have near-identical vectors: no classifier separates
them, and that is fine (either card is a correct completion).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch


def _gaussian_init(E: torch.Tensor, noise_std: float) -> tuple[torch.Tensor, torch.Tensor]:
    var = max(float(noise_std), 0.1) ** 2
    return E / var, -(E * E).sum(dim=1) / (2 * var)


def train_classifier(E_diff: np.ndarray, epochs: int = 60, noise_std: float = 0.35, batch: int = 1024,
                     lr: float = 1e-3, seed: int = 0, progress: Callable[[int, int], None] | None = None,
                     weight_decay: float = 0.0, init: str = "gaussian") -> tuple[np.ndarray, np.ndarray]:
    """Train a linear classifier card vector -> card index; returns ``(W [V, dim] float32, b [V] float32)``.

    Each epoch shows every card once, as ``E_diff[i] + noise_std * N(0, I)`` (fresh noise each epoch), in
    minibatches of ``batch``; AdamW on the cross-entropy. ``progress(epoch, total)`` after each epoch.
    """
    generator = torch.Generator().manual_seed(int(seed))
    E = torch.as_tensor(np.asarray(E_diff, dtype=np.float32))
    V, dim = E.shape
    layer = torch.nn.Linear(dim, V)
    with torch.no_grad():
        if init == "gaussian":
            W0, b0 = _gaussian_init(E, noise_std)
            layer.weight.copy_(W0)
            layer.bias.copy_(b0)
        elif init == "random":
            bound = 1 / np.sqrt(dim)
            layer.weight.uniform_(-bound, bound, generator=generator)
            layer.bias.uniform_(-bound, bound, generator=generator)
        else:
            raise ValueError(f"init must be 'gaussian' or 'random', not {init!r}")
    optimizer = torch.optim.AdamW(layer.parameters(), lr=lr, weight_decay=weight_decay)
    labels = torch.arange(V)
    for epoch in range(1, epochs + 1):
        order = torch.randperm(V, generator=generator)
        for start in range(0, V, batch):
            idx = labels[order[start:start + batch]]
            x = E[idx] + noise_std * torch.randn(len(idx), dim, generator=generator)
            loss = torch.nn.functional.cross_entropy(layer(x), idx)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if progress is not None:
            progress(epoch, epochs)
    return layer.weight.detach().numpy().copy(), layer.bias.detach().numpy().copy()


def classifier_report(W: np.ndarray, b: np.ndarray, E_diff: np.ndarray, noise_levels=(0.0, 0.35), seed: int = 0,
                      same: np.ndarray | None = None, chunk: int = 2048) -> dict[float, dict[str, float]]:
    """Top-1 accuracy of ``argmax(x W^T + b)`` for ``x = E_diff[i] + noise_std * N(0, I)`` against i, per noise level.

    Returns ``{noise_std: {"top1": .., "top1_same_text": ..}}``; ``same`` (optional, int [V]) is a group id per card
    (e.g. identical token lists): ``top1_same_text`` also counts a prediction in the right group as correct.
    """
    generator = torch.Generator().manual_seed(int(seed))
    W_t, b_t = torch.as_tensor(W, dtype=torch.float32), torch.as_tensor(b, dtype=torch.float32)
    E = torch.as_tensor(np.asarray(E_diff, dtype=np.float32))
    group = torch.as_tensor(np.asarray(same)) if same is not None else None
    report = {}
    with torch.no_grad():
        for noise_std in noise_levels:
            exact = grouped = 0
            for start in range(0, len(E), chunk):
                x = E[start:start + chunk]
                if noise_std:
                    x = x + float(noise_std) * torch.randn(x.shape, generator=generator)
                pred = (x @ W_t.T + b_t).argmax(dim=1)
                target = torch.arange(start, start + len(x))
                hit = pred == target
                exact += int(hit.sum())
                if group is not None:
                    hit |= group[pred] == group[target]
                grouped += int(hit.sum())
            report[float(noise_std)] = {"top1": exact / len(E), "top1_same_text": grouped / len(E)}
    return report


def classifier_accuracy(W: np.ndarray, b: np.ndarray, E_diff: np.ndarray, noise_std: float = 0.0, seed: int = 0) -> float:
    """Top-1 accuracy at one noise level (see ``classifier_report``)."""
    return classifier_report(W, b, E_diff, (noise_std,), seed)[float(noise_std)]["top1"]


class CardClassifier:
    """Inference side: logits, masked argmax, cosine nearest neighbour (all in float32)."""

    def __init__(self, W: torch.Tensor, b: torch.Tensor, E_diff: torch.Tensor):
        self.W = torch.as_tensor(W).float()
        self.b = torch.as_tensor(b).float()
        self.E = torch.as_tensor(E_diff).float()
        self.E_unit = torch.nn.functional.normalize(self.E, dim=1)

    @property
    def embeddings(self) -> torch.Tensor:
        """``E_diff`` [V, dim] (the name ``decks.completion.models.manamorphosis.complete.Completer`` reads)."""
        return self.E

    @property
    def num_cards(self) -> int:
        return self.W.shape[0]

    def to(self, device) -> "CardClassifier":
        for name in ("W", "b", "E", "E_unit"):
            setattr(self, name, getattr(self, name).to(device))
        return self

    def logits(self, vectors: torch.Tensor) -> torch.Tensor:
        """``[n, dim]`` -> ``[n, V]``."""
        return vectors.to(self.W.dtype) @ self.W.T + self.b

    @staticmethod
    def _masked(scores: torch.Tensor, allowed: torch.Tensor | None) -> torch.Tensor:
        if allowed is None:
            return scores
        allowed = allowed.to(scores.device).bool()
        if allowed.dim() == 1:
            allowed = allowed.unsqueeze(0)
        return scores.masked_fill(~allowed, float("-inf"))

    def predict(self, vectors: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
        """Card index per vector (LongTensor [n]), argmax over ``allowed`` cards (BoolTensor [V] or [n, V])."""
        return self._masked(self.logits(vectors), allowed).argmax(dim=1)

    def nearest(self, vectors: torch.Tensor, allowed: torch.Tensor | None = None) -> torch.Tensor:
        """Cosine nearest card per vector (LongTensor [n]), among ``allowed`` cards when given."""
        unit = torch.nn.functional.normalize(vectors.to(self.E.dtype), dim=1)
        return self._masked(unit @ self.E_unit.T, allowed).argmax(dim=1)
