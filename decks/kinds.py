"""The model kinds of the ``decks`` app, registered with the ``ml`` registry from ``DecksConfig.ready``:
``card_embeddings`` (Doc2Vec + card classifier), ``deck_masked`` (the default completer: masked diffusion over card
tokens + retrieval) and ``deck_diffusion`` (the continuous Manamorphosis model).

Each ``Kind`` says what an uploaded weights file must hold (shapes, metadata), how to train and evaluate a version
(``decks.embeddings.training``, ``decks.completion.training``) and which parameters ``manage.py models
train|evaluate`` accepts. Importing this module loads no torch (the shape checks import it when called).
"""
from __future__ import annotations

import json

from decks.completion.kind_names import DIFFUSION, MASKED, RANK
from decks.completion.training import (
    MASKED_FORMAT, MASKED_QUICK, RANK_FORMAT, RANK_QUICK, train_diffusion, train_masked, train_rank)
from decks.embeddings.training import KIND as EMBEDDINGS
from decks.embeddings.training import evaluate as evaluate_embeddings
from decks.embeddings.training import train as train_embeddings
from ml.kinds import ConfigError, Kind, need

# --- deck completion ---------------------------------------------------------------------------------------

def evaluate_masked(version, params: dict, progress) -> dict:
    from decks.completion.evaluation import evaluate_masked as evaluate  # noqa: PLC0415 torch: kept off Django start-up

    return evaluate(version, params, progress)


def evaluate_rank(version, params: dict, progress) -> dict:
    from decks.completion.evaluation import evaluate_rank as evaluate  # noqa: PLC0415 torch: kept off Django start-up

    return evaluate(version, params, progress)


def evaluate_diffusion(version, params: dict, progress) -> dict:
    from decks.completion.evaluation import evaluate_diffusion as evaluate  # noqa: PLC0415 torch: kept off Django start-up

    return evaluate(version, params, progress)


# what ``manage.py models evaluate VERSION --params JSON`` accepts for both completion kinds: ``n``, ``known``,
# ``seed`` on the version's held-out decks, or, with ``decks`` (a corpus-layout file), that file scored against
# ``methods`` (baselines fitted on the decks before ``split_date``), the results document written to ``out``
FILE_EVALUATION = {"decks": str, "out": str, "methods": str, "from_date": str, "split_date": str}

def _state_shapes(build, what: str) -> dict:
    """The tensor shapes of the network ``build()`` makes on PyTorch's meta device (no memory, no computation)."""
    import torch  # noqa: PLC0415 kept off Django start-up

    try:
        with torch.device("meta"):
            model = build()
    except ConfigError:
        raise
    except (TypeError, ValueError, AssertionError, RuntimeError) as exc:
        raise ConfigError(f"the model config cannot build {what}: {exc}") from None
    return {name: tuple(t.shape) for name, t in model.state_dict().items()}


def diffusion_shapes(config: dict) -> dict:
    from decks.completion.models.manamorphosis.model import DeckDenoiser, DenoiserConfig  # noqa: PLC0415 torch: kept off Django start-up

    need(config, "model")
    return _state_shapes(lambda: DeckDenoiser(DenoiserConfig.from_dict(config["model"])), "a denoiser")


def masked_shapes(config: dict) -> dict:
    from decks.completion.models.masked.train import denoiser_for  # noqa: PLC0415 torch: kept off Django start-up

    need(config, "model", "cards")
    if config.get("format", MASKED_FORMAT) != MASKED_FORMAT:
        raise ConfigError(f"unknown deck_masked format {config.get('format')!r} ({MASKED_FORMAT})")
    if not isinstance(config["model"], dict) or not isinstance(config["cards"], list):
        raise ConfigError("model must be a JSON object and cards a list of card names")

    def build():
        vocab = config["model"].get("vocab")
        if vocab != len(config["cards"]) + 1:
            raise ConfigError(f"model.vocab is {vocab} but cards lists {len(config['cards'])} names "
                              f"(the vocabulary is the cards plus token 0, unknown)")
        return denoiser_for(config["model"])
    return _state_shapes(build, "a masked denoiser")


def masked_metadata(config: dict) -> dict:
    def masked_format(value):
        return None if value == MASKED_FORMAT else f"metadata 'format' must be {MASKED_FORMAT!r}"
    return {"format": masked_format}


DECK_MASKED = Kind(
    MASKED, label="Deck completion: masked diffusion + retrieval", shapes=masked_shapes, metadata=masked_metadata, train=train_masked, evaluate=evaluate_masked,
    parameters={"preset": str, "steps": int, "examples": int, "batch": int, "lr": float, "d_model": int, "heads": int,
                "layers": int, "ff": int, "candidates": int, "neighbours": int, "seed": int, "split_date": str,
                "limit": int, "no_text_init": bool, "no_retrieval": bool, "time_budget": float, "head": str, "resume": bool,
                "device": str},
    evaluate_parameters={"n": int, "known": list, "seed": int, **FILE_EVALUATION},
    quick=lambda scope: MASKED_QUICK)

def rank_shapes(config: dict) -> dict:
    from decks.completion.models.deckrank import (  # noqa: PLC0415 torch: kept off Django start-up
        LEGACY_SLOT_FEATURES, SLOT_FEATURES, RankerConfig, SlotRanker)

    need(config, "model")
    if config.get("format", RANK_FORMAT) != RANK_FORMAT:
        raise ConfigError(f"unknown deck_rank format {config.get('format')!r} ({RANK_FORMAT})")
    if int(config.get("slot_features", SLOT_FEATURES)) not in (SLOT_FEATURES, LEGACY_SLOT_FEATURES):
        raise ConfigError(f"slot_features is {config.get('slot_features')}, this code makes {SLOT_FEATURES}")
    if not isinstance(config["model"], dict):
        raise ConfigError("model must be a JSON object")
    return _state_shapes(lambda: SlotRanker(RankerConfig.from_dict(config["model"])), "a slot ranker")


def rank_metadata(config: dict) -> dict:
    def rank_format(value):
        return None if value == RANK_FORMAT else f"metadata 'format' must be {RANK_FORMAT!r}"
    return {"format": rank_format}


DECK_RANK = Kind(
    RANK, label="Deck completion: deck-level sideboard ranker", shapes=rank_shapes, metadata=rank_metadata,
    train=train_rank, evaluate=evaluate_rank,
    parameters={"split_date": str, "months": int, "per_month": int, "val": int, "epochs": int, "batch": int,
                "lr": float, "width": int, "layers": int, "heads": int, "slots": int, "neighbours": int,
                "query_mix": float, "no_card_features": bool, "no_archetype_groups": bool, "seed": int},
    evaluate_parameters={"n": int, "known": list, "seed": int},
    quick=lambda scope: RANK_QUICK)

DECK_DIFFUSION = Kind(
    DIFFUSION, label="Deck completion diffusion", shapes=diffusion_shapes, train=train_diffusion, evaluate=evaluate_diffusion,
    parameters={"steps": int, "batch": int, "lr": float, "warmup": int, "d_model": int, "heads": int, "layers": int,
                "ff": int, "side_layers": int, "context_layers": int, "prediction": str, "seed": int,
                "eval_every": int, "split_date": str, "device": str, "limit": int, "resume": bool},
    evaluate_parameters={"n": int, "known": list, "seed": int, "sampler": str, "steps": int, **FILE_EVALUATION},
    quick=lambda scope: {"steps": 60, "batch": 16, "d_model": 64, "heads": 4, "layers": 2, "ff": 128,
                         "side_layers": 1, "context_layers": 1, "eval_every": 30, "limit": 2000, "warmup": 10})

# --- card embeddings ---------------------------------------------------------------------------------------

def embeddings_shapes(config: dict) -> dict:
    need(config, "vocab", "dim")
    v, d = int(config["vocab"]), int(config["dim"])
    return {"embeddings": (v, d), "classifier.weight": (v, d), "classifier.bias": (v,)}


def embeddings_metadata(config: dict) -> dict:
    def names(value):
        try:
            got = json.loads(value)
        except ValueError:
            return "metadata 'names' is not a JSON list"
        if not isinstance(got, list) or len(got) != int(config["vocab"]):
            return f"metadata 'names' must list the {config['vocab']} card names of the vocabulary"
        return None
    return {"names": names}


CARD_EMBEDDINGS = Kind(
    EMBEDDINGS, label="Card embeddings (Doc2Vec + card classifier)", shapes=embeddings_shapes, metadata=embeddings_metadata, train=train_embeddings,
    evaluate=evaluate_embeddings,
    dtypes={"embeddings": frozenset({"F16", "F32"}), "classifier.weight": frozenset({"F16", "F32"}),
            "classifier.bias": frozenset({"F32", "F16"})},
    parameters={"epochs": int, "dim": int, "seed": int, "workers": int, "classifier_epochs": int, "noise_std": float},
    quick=lambda scope: {"epochs": 5, "dim": 32, "classifier_epochs": 1, "workers": 1})


KINDS = (CARD_EMBEDDINGS, DECK_MASKED, DECK_RANK, DECK_DIFFUSION)
