"""Tests of decks.completion.models.manamorphosis (pure torch/numpy; no Django). Shared tiny fixtures live here.

The synthetic corpus: V=40 cards, D=16. Cards 0-2 are basic lands (any number), card 3+12a .. 14+12a the pool
of archetype a (a = 0, 1, 2), card 39 a lone extra. A deck of archetype a plays 24 of basic a and 9 of its 12
pool cards x4; its sideboard the other 3 pool cards x4 and 3 basics.
"""
from __future__ import annotations

import functools

import numpy as np
import torch

from decks.completion.models.deck_arrays import DeckArrays
from decks.completion.models.manamorphosis.model import DeckDenoiser, DenoiserConfig
from decks.completion.models.manamorphosis.schedule import cosine_schedule

# one thread: the tiny models gain nothing from more, and the machine is shared
torch.set_num_threads(1)

V, D = 40, 16
FORMATS = ["standard", "modern", "vintage"]
BASICS = (0, 1, 2)
EXTRA = 39


def pool(a: int) -> list[int]:
    return list(range(3 + 12 * a, 15 + 12 * a))


def make_corpus(n: int = 240, seed: int = 0) -> DeckArrays:
    rng = np.random.default_rng(seed)
    decks = []
    for i in range(n):
        a = i % 3
        cards = rng.permutation(pool(a))
        main = [a] * 24 + [c for c in cards[:9] for _ in range(4)]
        side = [c for c in cards[9:] for _ in range(4)] + [a] * 3
        decks.append((main, side, int(rng.integers(0, 3)), 19000 + i, float(rng.integers(1, 4))))
    return DeckArrays.from_decks(decks)


def make_embeddings(seed: int = 0) -> np.ndarray:
    E = np.random.default_rng(seed).standard_normal((V, D))
    return (E / np.linalg.norm(E, axis=1, keepdims=True) * np.sqrt(D)).astype(np.float32)


class DotClassifier:
    """Stand-in for decks.embeddings.classifier.CardClassifier: logits = v . E."""

    def __init__(self, E):
        self.embeddings = torch.as_tensor(E)

    def logits(self, vectors):
        return torch.as_tensor(vectors).float() @ self.embeddings.T


def rules():
    """(legal [F,V], restricted [F,V], copy_limit [V]) for the tiny world."""
    legal = np.ones((len(FORMATS), V), dtype=bool)
    legal[0, 27:39] = False  # archetype 2's pool is not legal in standard
    legal[0, EXTRA] = False
    legal[1, EXTRA] = False  # banned in modern
    restricted = np.zeros((len(FORMATS), V), dtype=bool)
    restricted[2, EXTRA] = True
    restricted[2, 3] = True  # restricted in vintage
    copy_limit = np.full(V, 4)
    copy_limit[list(BASICS)] = 0
    return legal, restricted, copy_limit


def tiny_config(**kw) -> DenoiserConfig:
    base = dict(dim=D, d_model=32, heads=4, layers=2, ff=64, side_layers=1, context_layers=1, dropout=0.0,
                formats=len(FORMATS))
    base.update(kw)
    return DenoiserConfig(**base)


@functools.lru_cache(maxsize=1)
def trained_tiny(steps: int = 300):
    """(model, schedule, E, arrays, metrics) after training the tiny model once per test session.

    v-prediction and a high learning rate: with eps-prediction the tiny model needs several times more steps
    before it uses the known cards (see decks/completion/models/manamorphosis/model.py)."""
    from decks.completion.models.deck_arrays import split_by_date
    from decks.completion.models.manamorphosis.trainer import TrainConfig, train

    arrays = make_corpus()
    E = make_embeddings()
    tr, te = split_by_date(arrays, 19000 + 200)
    tc = TrainConfig(batch=32, lr=2e-2, steps=steps, warmup=20, eval_every=100, ema=None, seed=0, val_decks=64)
    cfg = tiny_config(prediction="v")
    state, metrics = train(tr, te, E, cfg, tc)
    model = DeckDenoiser.from_tensors(cfg, state)
    return model, cosine_schedule(), E, arrays, metrics
