"""Django shell around the card embeddings: the active version, loaded once per process, and similar cards.

``similar_cards`` never raises: with no active version (or no ml tables yet) it returns ``[]`` so pages and
the API can always call it.
"""
from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field

import torch
from django.db import DatabaseError

from decks.core.names import CardIndex
from decks.embeddings.classifier import CardClassifier
from ml.registry import NoActiveModel, load_active

logger = logging.getLogger(__name__)
KIND = "card_embeddings"

_lock = threading.Lock()
_cached: "Embeddings | None" = None


@dataclass
class Embeddings:
    version_id: int
    weights_sha256: str
    names: list[str]
    index: dict[str, int]
    E: torch.Tensor  # [V, dim] float32, diffusion space (rows of norm sqrt(dim))
    classifier: CardClassifier
    config: dict = field(default_factory=dict)
    _card_index: CardIndex | None = field(default=None, repr=False)

    def find(self, name: str) -> int | None:
        """Card index by the site's resolver (``decks.core.names.CardIndex``: exact name, then face name, then
        the loose key only when one card has it)."""
        if name in self.index:
            return self.index[name]
        if self._card_index is None:
            self._card_index = CardIndex(self.names)
        return self._card_index.position(name)

    def similar(self, name: str, k: int = 10) -> list[tuple[str, float]]:
        i = self.find(name)
        if i is None or k <= 0:
            return []
        sims = self.classifier.E_unit @ self.classifier.E_unit[i]
        sims[i] = float("-inf")
        values, idx = torch.topk(sims, min(k, len(self.names) - 1))
        return [(self.names[j], round(float(v), 4)) for v, j in zip(values.tolist(), idx.tolist())]


def active_embeddings() -> Embeddings:
    """The active ``card_embeddings`` version (raises ``ml.registry.NoActiveModel`` when there is none)."""
    global _cached
    loaded = load_active(KIND)
    with _lock:
        if _cached is not None and _cached.version_id == loaded.version.pk \
                and _cached.weights_sha256 == loaded.version.weights_sha256:
            return _cached
    names = json.loads(loaded.metadata["names"])
    E = loaded.tensors["embeddings"].float()
    classifier = CardClassifier(loaded.tensors["classifier.weight"].float(), loaded.tensors["classifier.bias"].float(), E)
    embeddings = Embeddings(loaded.version.pk, loaded.version.weights_sha256, names,
                            {n: i for i, n in enumerate(names)}, E, classifier, dict(loaded.config or {}))
    with _lock:
        _cached = embeddings
    return embeddings


def similar_cards(name: str, k: int = 10) -> list[tuple[str, float]]:
    """The k cards whose embeddings are closest (cosine) to ``name``'s, best first, as (name, cosine).

    ``[]`` when no embeddings version is active, the weights are missing, or the card is unknown.
    """
    try:
        return active_embeddings().similar(name, k)
    except (NoActiveModel, DatabaseError, OSError, KeyError, ValueError) as exc:
        logger.info("similar_cards(%r): no embeddings available (%s)", name, exc)
        return []
