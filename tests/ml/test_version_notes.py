"""A version's notes, when nobody writes any, say what it is: kind, the data it learned from, size, key metric."""
from __future__ import annotations

from decks.core.setnames import set_label
from ml.registry import describe_version


def test_notes_describe_each_kind():
    assert describe_version("draft_bot", "neural:BLB", {"held_out": {"all": {"top1": 0.6543}}},
                            {"train_rows": 182784, "logs": "draft_data_proxy.BLB.csv.gz"}, 1_862_838) == (
        "Draft bot neural:BLB · trained on 182,784 picks of draft_data_proxy.BLB.csv.gz · 1.9 MB · held-out top-1 0.654")
    assert describe_version("deck_masked", "", {"val_loss": 4.3343}, {"train_decks": 246923, "split_date": "2026-05-01"},
                            3_365_568) == ("Deck completion: masked diffusion + retrieval · trained on 246,923 decks "
                                           "first seen before 2026-05-01 · 3.4 MB · validation loss 4.334")
    assert describe_version("card_embeddings", "", {"classifier_top1_noisy": 0.99937}, {"cards": 34855}, 18_778_068) == (
        "Card embeddings (Doc2Vec + card classifier) · trained on 34,855 cards · 18.8 MB · "
        "card classifier top-1 on noisy vectors 0.999")
    assert describe_version("game_value", "", {"valid_log_loss": 0.3012}, {"games": 165}, 6532) == (
        "Game value model (the search's learned leaf and win estimate) · trained on 165 self-play games · 6.5 kB · validation log-loss 0.301")
    assert describe_version("deck_rank", "", {"val_recall": 0.629}, {"train_decks": 242808, "split_date": "2026-05-01"},
                            216_700) == ("Deck completion: deck-level sideboard ranker · trained on 242,808 decks first "
                                         "seen before 2026-05-01 · 216.7 kB · validation recall 0.629")
    assert describe_version("draft_bot", "archetype:TST", {}, {}, 0) == "Draft bot archetype:TST · 0.1 kB"


def test_set_labels_name_the_set_once():
    assert set_label("BLB") == "Bloomburrow (BLB)"
    assert set_label("BLB", "BLB") == "Bloomburrow (BLB)"  # a name that is only the code counts as none
    assert set_label("M19", "Core Set 2019") == "Core Set 2019 (M19)"
    assert set_label("TST", "Test set TST") == "Test set TST (TST)"  # a stored name wins
    assert set_label("ZZZ") == "ZZZ"
