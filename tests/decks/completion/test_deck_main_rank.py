"""The main-deck ranker (kind deck_main_rank) through the real front door: a quick training run registers a
version, and the site's masked completer builds its main deck with the active one (legal 60 + 15, the given cards
kept); without one the main deck is the masked model's, as before."""
import pytest

from decks.models import Card

from .conftest import train

pytestmark = pytest.mark.django_db

QUICK = {"months": 2, "per_month": 20, "val": 10, "epochs": 1, "width": 16, "layers": 1, "heads": 2,
         "split_date": "2026-06-01"}


def totals(entries):
    return sum(n for _, n in entries)


def test_quick_training_registers_a_main_ranker_the_site_uses(masked_model):
    from decks.completion import service
    from decks.completion.completers import build_masked_completer
    from decks.completion.models.mainrank import MAIN_SLOT_FEATURES
    from ml.models import ModelVersion

    before = build_masked_completer()
    assert before.main_ranker is None and before.main_rank_version is None   # none trained: the masked model's deck
    given = [("Lightning Bolt", 4), ("Goblin Guide", 3)]
    plain = before.complete(given, [], "modern", archetypes=False)
    train("deck_main_rank", **QUICK)
    version = ModelVersion.objects.get(kind="deck_main_rank", active=True)
    c = version.config
    assert c["format"] == "deck-main-rank-v1" and c["board"] == "main" and c["slot_features"] == MAIN_SLOT_FEATURES
    assert version.metrics["train_examples"] > 0 and 0.0 <= version.metrics["validation"]["main_proxy_model"] <= 1.0
    service.reset_completers()
    site = service.get_completer("masked")
    assert site.main_ranker is not None and site.main_rank_version == version
    done = site.complete(given, [("Path to Exile", 2)], "modern", archetypes=False)
    assert totals(done.main) == 60 and totals(done.side) == 15
    main, side = dict(done.main), dict(done.side)
    assert main["Lightning Bolt"] >= 4 and main["Goblin Guide"] >= 3 and side["Path to Exile"] >= 2
    limits = dict(Card.objects.filter(name__in=set(main) | set(side)).values_list("name", "copy_limit"))
    for name in set(main) | set(side):
        if limits[name]:
            assert main.get(name, 0) + side.get(name, 0) <= limits[name], name
    assert all(0.0 <= v <= 1.0 for k, v in done.confidence.items() if k.startswith("main:"))
    off = build_masked_completer(main_rank=False)   # switched off: the masked model's deck again
    assert off.main_ranker is None
    assert off.complete(given, [], "modern", archetypes=False).main == plain.main
