"""The masked completer from plain inputs (pure: numpy + torch): a ``deck_masked`` version's config and tensors,
the card names, the corpus arrays and the card tables. ``decks.completion.completers`` feeds it from the
registry and the database; ``bench/device.py`` from exported files.
"""
from __future__ import annotations

import numpy as np

from decks.completion.models.retrieval import RetrievalParams
from decks.completion.models.masked.sampler import MaskedCompleter
from decks.completion.models.masked.train import denoiser_for, prepare


class VocabularyMismatch(ValueError):
    """The version's cards are not all in the vocabulary, or its config has no model."""


def masked_completer(config: dict | None, tensors: dict | None, names: list[str], arrays, legal: np.ndarray,
                     copy_limit: np.ndarray, restricted: np.ndarray, formats: list[str],
                     device: str = "cpu") -> MaskedCompleter:
    """The completer of one version (``config`` None: the pure neighbour vote), its network on ``device``."""
    model, cards, params = None, None, RetrievalParams()
    if config is not None:
        index = {n: i for i, n in enumerate(names)}
        missing = [n for n in config.get("cards", []) if n not in index]
        if missing or "model" not in config:
            raise VocabularyMismatch(
                (f"{len(missing)} of its cards (e.g. {missing[0]}) are not in the vocabulary" if missing
                 else "its config has no model"))
        cards = np.array([index[n] for n in config["cards"]], dtype=np.int64)
        params = RetrievalParams.from_dict(config.get("retrieval"))
        model = denoiser_for(config["model"])
        model.load_state_dict({k: v.float() for k, v in tensors.items()})
        model.to(device).eval()
    prep = prepare(arrays, len(names), legal, copy_limit, restricted, params, cards=cards)
    sampler = (config.get("sampler") or {}) if config is not None else {}
    gate, side_gate = sampler.get("gate"), sampler.get("side_gate")
    rounds = {k: int(sampler[k]) for k in ("steps", "side_steps") if k in sampler}
    return MaskedCompleter(model, prep.vote, prep.tables, names, formats, restricted,
                           gate=None if gate is None else float(gate),
                           side_gate=None if side_gate is None else float(side_gate), **rounds)
