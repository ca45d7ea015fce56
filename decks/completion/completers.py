"""Shell: build the deck completers from the active registry versions, the catalogue and the deck corpus.

``build_masked_completer`` (the site's default, kind ``deck_masked``) and ``build_completer`` (the continuous
Manamorphosis diffusion, kind ``deck_diffusion``). Neither model's code reads the database: the rows become
arrays here.
"""
from __future__ import annotations

import copy

import numpy as np

from decks.core.rules import FORMATS
from decks.completion.datasets import card_tables, deck_arrays, land_mask, names_sha1, split_day
from decks.completion.models.deckrank import SlotIndex
from decks.completion.kind_names import RANK
from decks.completion.models.manamorphosis.complete import Completer
from decks.completion.models.deck_arrays import split_by_date
from decks.completion.models.masked.build import VocabularyMismatch, masked_completer
from decks.completion.models.manamorphosis.model import DeckDenoiser
from decks.completion.models.manamorphosis.schedule import cosine_schedule
from decks.embeddings.service import active_embeddings
from ml.defaults import FIGURES
from ml.models import ModelVersion
from ml.registry import NoActiveModel, active_version, load_active, load_version
from plumbing.device import device


def build_completer(diffusion=None):
    """The Completer of the active versions (or of the ``diffusion`` ModelVersion given, for evaluation)."""
    emb = active_embeddings()
    if diffusion is not None:
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


def build_masked_completer(version=None, split_date: str | None = None, rank=None):
    """The masked completer of the active ``deck_masked`` version (or of the ``version`` given, for evaluation).

    With no active version it is the pure neighbour vote (the model's gate-1 prior), so completion works on a
    fresh site before any training. Its retrieval index holds every corpus deck (the site follows the newest
    metagame), or only the decks first seen before ``split_date`` when one is given (evaluation: no leak).
    The completer's ``deck_ids`` maps the rows of its sources to ``Deck`` ids and ``version`` is the
    ``ModelVersion`` used (None for the neighbour vote). The sideboard comes from the active ``deck_rank`` version
    when there is one (``rank``: that ``ModelVersion`` instead, or False for none: the denoiser's sideboard);
    ``rank_version`` says which.
    """
    emb = active_embeddings()
    names = emb.names
    if version is None:
        try:
            active_version("deck_masked")
        except NoActiveModel:  # none trained or shipped yet: the neighbour vote alone
            loaded = None
        else:
            loaded = load_active("deck_masked")  # an active version whose weights are missing says so
    else:
        loaded = load_version(version)
    arrays = deck_arrays(names)
    if split_date:
        arrays, _ = split_by_date(arrays, split_day(split_date))
    if len(arrays) == 0:
        raise NoActiveModel("No tournament decks to draw on: import the deck corpus (manage.py import_decks)"
                            + (f" or choose a later split date than {split_date}." if split_date else "."))
    tables = card_tables(names)
    try:
        completer = masked_completer((loaded.config or {}) if loaded is not None else None,
                                     loaded.tensors if loaded is not None else None, names, arrays, tables.legal,
                                     tables.copy_limit, tables.restricted, FORMATS)  # the CPU, whatever MTG_DEVICE:
        # its network scores one board at a time, and an H200 completes 0.65x as many jobs/s (bench/results/device.md)
    except VocabularyMismatch as exc:
        raise NoActiveModel(
            f"The deck_masked v{loaded.version.version} does not fit the active card_embeddings: {exc}; activate "
            "matching versions or retrain (manage.py models train deck_masked).") from None
    completer.deck_ids = arrays.ids if arrays.ids is not None else np.full(len(arrays), -1, dtype=np.int64)
    completer.version = loaded.version if loaded is not None else None
    completer.land = land_mask(names)  # completing from a collection keeps the land count in the archetype's range
    completer.rank_version = None
    if rank is not False:
        attach_side_ranker(completer, names, None if rank is None else rank)
        fitted = (completer.rank_version.config or {}).get("split_date") if completer.rank_version else None
        if split_date and fitted and fitted > split_date:  # an evaluation must not use a ranker that saw its decks
            raise NoActiveModel(
                f"The deck_rank v{completer.rank_version.version} was fitted on decks up to {fitted}, after the split "
                f"{split_date}: evaluate with the version fitted before it (its figures version, "
                "register_models --export --kind deck_rank --figures ID, or pass it as rank).")
    return completer


def figures_versions():
    """(deck_masked, deck_rank) versions the published held-out figures come from: those shipped with the role
    ``figures`` (fitted on a dated split, ``register_models --export --kind K --figures ID``) when the active ones are
    refits on every deck; None for a kind without one (its active version is then both). The benches evaluate
    these on the decks after their split date: an honest split, whatever the site serves."""
    def one(kind):
        return ModelVersion.objects.filter(kind=kind, scope="", config__role=FIGURES).order_by("-pk").first()
    return one("deck_masked"), one(RANK)


def attach_side_ranker(completer, names: list[str], version=None):
    """Give ``completer`` the sideboard ranker of the active ``deck_rank`` version (or of ``version``), built on the
    completer's own corpus; none active: the completer keeps building the sideboard itself. A version made for
    another vocabulary or another feature layout says so (NoActiveModel)."""
    from decks.completion.datasets import card_features  # noqa: PLC0415 torch: kept off Django start-up
    from decks.completion.models.deckrank import RankParams, ranker_from  # noqa: PLC0415 torch: kept off Django start-up

    if version is None:
        try:
            active_version(RANK)
        except NoActiveModel:
            return completer.with_side_ranker(None, None)
        loaded = load_active(RANK)
    else:
        loaded = load_version(version)
    expected = loaded.config.get("names_sha1")
    if expected and expected != names_sha1(names):
        raise NoActiveModel(f"The deck_rank v{loaded.version.version} was trained on another card vocabulary than the "
                            "active card_embeddings: activate matching versions or retrain (manage.py models train "
                            "deck_rank).")
    try:
        model = ranker_from(loaded.config, loaded.tensors)
    except ValueError as exc:
        raise NoActiveModel(f"The deck_rank v{loaded.version.version} cannot be loaded: {exc}.") from None
    index = SlotIndex(completer.vote.fitted, card_features(names), RankParams.from_dict(loaded.config.get("rank")))
    completer.with_side_ranker(model, index)
    completer.rank_version = loaded.version
    return completer


def rank_variant(completer, names: list[str], version):
    """A copy of ``completer`` whose sideboard ranker is the deck_rank ``version`` (for comparing versions on the
    same corpus); its candidate index is shared when the version retrieves the same way."""
    other = copy.copy(completer)
    attach_side_ranker(other, names, version)
    if completer.rank_index is not None and other.rank_index.params == completer.rank_index.params:
        other.rank_index = completer.rank_index  # the same retrieval and candidates: share the index
    return other


def source_deck_ids(completer, completion) -> list[tuple[int, float, float]]:
    """(Deck id, vote weight, similarity) of each source of a masked completion, best first."""
    ids = getattr(completer, "deck_ids", None)
    out = []
    for source in getattr(completion, "sources", None) or ():
        if ids is not None and 0 <= source.row < len(ids) and ids[source.row] >= 0:
            out.append((int(ids[source.row]), float(source.weight), float(source.similarity)))
    return out
