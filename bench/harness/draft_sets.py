"""The draft benches' sets and bots from the data folder, no database: a set's 17Lands card list with the
catalog's card facts and its Draftsim-scale ratings (:func:`proxy_set`), and the shipped learned bots
(:func:`load_shipped`). Used by bench.drafts and bench.draft_games."""
from __future__ import annotations

import json

from bench.harness.paths import ROOT, data_dir

WEIGHTS = ROOT / "ml" / "weights" / "drafts"


def catalog_path(code: str):
    return data_dir() / "arenamcp_17lands_ratings" / "catalogs" / f"{code}.catalog.json"


def proxy_set(code: str):
    """(the set list with the 17Lands catalog's mana costs, colours and types, DraftsimBot's 0-5 ratings)."""
    from drafts.bots.ratings import ratings_from_17lands, set_list_with_catalog
    from drafts.core.cards import read_17lands_set

    cards = data_dir() / "statistical-drafting" / "cards"
    catalog = catalog_path(code)
    s = read_17lands_set(cards / f"{code}.csv", cards / "cards.csv")
    return set_list_with_catalog(s, catalog), ratings_from_17lands(catalog)


def load_shipped(family: str, code: str):
    """A shipped learned bot (safetensors + its config in the file's metadata), or None."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    path = WEIGHTS / f"{family}-{code}.safetensors"
    if not path.exists():
        return None
    with safe_open(str(path), framework="pt") as fh:
        config = json.loads((fh.metadata() or {})["config"])
    tensors = load_file(str(path))
    if family == "archetype":
        from drafts.bots.archetype import ArchetypeBot

        return ArchetypeBot.from_tensors(tensors, config)
    from drafts.bots.neural import NeuralBot

    return NeuralBot.from_tensors(tensors, config)
