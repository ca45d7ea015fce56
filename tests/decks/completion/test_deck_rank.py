"""The deck-level sideboard ranker (kind deck_rank) through the real front door: a quick training run registers a
version, and the site's masked completer builds its sideboard with the active one (legal 60 + 15, the given cards
kept)."""
import pytest

from decks.completion.training import RANK_DEFAULTS
from decks.models import Card
from ml import training
from ml.models import TrainingRun

from .conftest import train

pytestmark = pytest.mark.django_db

QUICK = {"months": 2, "per_month": 20, "val": 10, "epochs": 2, "width": 16, "layers": 1, "heads": 2, "slots": 16,
         "split_date": "2026-06-01"}


def totals(entries):
    return sum(n for _, n in entries)


@pytest.fixture
def rank_model(masked_model):
    from ml.models import ModelVersion

    train("deck_rank", **QUICK)
    from decks.completion import service

    service.reset_completers()
    return ModelVersion.objects.get(kind="deck_rank", active=True)


def test_quick_training_registers_a_ranker_the_site_uses(rank_model, masked_model):
    from decks.completion.completers import build_masked_completer
    from decks.completion.models.deckrank import SLOT_FEATURES
    from decks.completion.service import get_completer

    c = rank_model.config
    assert c["format"] == "deck-rank-v1" and c["board"] == "side" and c["slot_features"] == SLOT_FEATURES
    assert c["model"]["layers"] == 1 and rank_model.metrics["train_examples"] > 0
    assert c["rank"]["query_mix"] == RANK_DEFAULTS["query_mix"]  # the retrieval it was trained with, kept
    assert 0.0 <= rank_model.metrics["validation"]["side_top15_model"] <= 1.0
    site = get_completer("masked")
    assert site.side_ranker is not None and site.rank_version == rank_model
    given_side = [("Path to Exile", 2)]
    done = site.complete([("Lightning Bolt", 4), ("Goblin Guide", 3)], given_side, "modern")
    assert totals(done.main) == 60 and totals(done.side) == 15
    main, side = dict(done.main), dict(done.side)
    assert main["Lightning Bolt"] >= 4 and main["Goblin Guide"] >= 3 and side["Path to Exile"] >= 2
    limits = dict(Card.objects.filter(name__in=set(main) | set(side)).values_list("name", "copy_limit"))
    for name in set(main) | set(side):  # copy limits across main + side (0: any number, basics, Relentless Rats)
        if limits[name]:
            assert main.get(name, 0) + side.get(name, 0) <= limits[name], name
    assert all(0.0 <= v <= 1.0 for k, v in done.confidence.items() if k.startswith("side:"))
    plain = build_masked_completer(rank=False)  # the denoiser's own sideboard, for comparison
    assert plain.side_ranker is None
    assert totals(plain.complete([("Lightning Bolt", 4)], [], "modern").side) == 15
    run = training.execute(TrainingRun.objects.create(job="evaluate", kind="deck_rank", target_version=rank_model,
                                                      parameters={"n": 3, "known": [10]}).pk)
    assert run.status == "succeeded", run.error + run.log
    rank_model.refresh_from_db()
    ev = rank_model.metrics["eval"]
    assert 0.0 <= ev["side_recall_k10"] <= 1.0 and 0.0 <= ev["side_recall_denoiser_k10"] <= 1.0
    assert ev["valid_share_k10"] == 1.0 and run.metric_name == "side_recall_k10"


def test_a_collection_is_a_hard_mask_for_the_ranked_sideboard(rank_model):
    from decks.completion.service import get_completer

    site = get_completer("masked")
    full = site.complete([("Lightning Bolt", 4)], [], "modern")
    wanted = [name for name, _ in full.side if name not in ("Mountain", "Island")]
    assert wanted
    owned = [("Lightning Bolt", 4), ("Goblin Guide", 4), ("Monastery Swiftspear", 4), ("Lava Spike", 4),
             ("Rift Bolt", 4), ("Inspiring Vantage", 4), ("Sacred Foundry", 4), ("Skullcrack", 1)]
    done = site.complete([("Lightning Bolt", 4)], [], "modern", collection=owned)
    have = dict(owned)
    main, side = dict(done.main), dict(done.side)
    for name, n in done.not_owned:  # the open slots the collection cannot fill: marked, not owned
        main[name] -= n
    basics = {"Mountain", "Island", "Plains", "Swamp", "Forest"}
    for name in set(main) | set(side):
        if name not in basics:
            assert main.get(name, 0) + side.get(name, 0) <= have.get(name, 0), name
    assert set(side) - basics <= set(have)


@pytest.mark.parametrize("mix", [-0.1, 1.5])
def test_a_query_mix_outside_0_to_1_is_refused_and_writes_no_version(tiny_corpus, mix):
    from django.core.management.base import CommandError

    from ml.models import ModelVersion

    with pytest.raises(CommandError, match="query_mix must be between 0 and 1"):
        train("deck_rank", **QUICK, query_mix=mix)
    assert not ModelVersion.objects.filter(kind="deck_rank").exists()


def test_a_version_compared_beside_the_active_one_retrieves_its_own_way(rank_model):
    """rank_variant (the benches' way to put another deck_rank version in the site's completer) gives a version
    trained with another query_mix its own candidate index, and shares the index when the retrieval is the same."""
    from decks.completion.completers import build_masked_completer, rank_variant
    from decks.embeddings.service import active_embeddings

    mix = rank_model.config["rank"]["query_mix"]
    train("deck_rank", **QUICK, query_mix=1.0 if mix != 1.0 else 0.5)
    from ml.models import ModelVersion

    other = ModelVersion.objects.get(kind="deck_rank", active=True)
    site = build_masked_completer()
    assert site.rank_version == other and site.rank_index.params.query_mix == other.config["rank"]["query_mix"]
    names = active_embeddings().names
    first = rank_variant(site, names, rank_model)
    assert first.rank_version == rank_model and first.rank_index is not site.rank_index
    assert first.rank_index.params.query_mix == mix and site.rank_index.params.query_mix != mix
    assert rank_variant(site, names, other).rank_index is site.rank_index
    done = first.complete([("Lightning Bolt", 4)], [], "modern")
    assert totals(done.main) == 60 and totals(done.side) == 15
