"""Shell: build the deck Completer from the active registry versions and the catalogue."""
from __future__ import annotations

import torch

from decks.core.rules import FORMATS
from ml.datasets import card_tables, names_sha1
from ml.registry import NoActiveModel, load_active


def device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def build_completer(diffusion=None):
    """The Completer of the active versions (or of the ``diffusion`` ModelVersion given, for evaluation)."""
    from ml.diffusion.complete import Completer
    from ml.diffusion.model import DeckDenoiser
    from ml.diffusion.schedule import cosine_schedule
    from ml.embeddings.service import active_embeddings

    emb = active_embeddings()
    if diffusion is not None:
        from ml.registry import load_version

        diff = load_version(diffusion)
    else:
        diff = load_active("deck_diffusion")
    expected = diff.config.get("names_sha1")
    if expected and expected != names_sha1(emb.names):
        raise NoActiveModel(
            f"The active deck_diffusion v{diff.version.version} was trained on another card vocabulary than the "
            f"active card_embeddings v{emb.config.get('version', '?')}: activate matching versions or retrain.")
    model = DeckDenoiser.from_tensors(diff.config["model"], diff.tensors).to(device())
    sched = cosine_schedule(int(model.config.T))
    tables = card_tables(emb.names)
    return Completer(model, sched, emb.classifier, emb.names, tables.legal, tables.restricted, tables.copy_limit,
                     FORMATS)
