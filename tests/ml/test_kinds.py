"""The model kinds: each app registers its own with ml.kinds (ml imports neither drafts nor gameplay), the runs
and the pages take the trainable kinds from there, and the functions report to any Progress."""
import ast
from pathlib import Path

import pytest
from django.conf import settings

from ml import kinds, training
from ml.progress import BarProgress, Progress

ML = Path(settings.BASE_DIR) / "ml"


def test_every_app_registers_its_kinds():
    owners = {name: kinds.get(name).train.__module__ for name in kinds.trainable()}
    assert owners == {"draft_bot": "drafts.training", "game_value": "gameplay.training.value",
                      "game_policy_net": "gameplay.training.policy",
                      "card_embeddings": "decks.embeddings.training", "deck_masked": "decks.completion.training",
                      "deck_diffusion": "decks.completion.training"}
    assert all(kinds.get(name).evaluate is not None for name in owners)
    assert kinds.quick_parameters("draft_bot", "neural:TST")["net"]["hidden"] == [64]
    assert kinds.quick_parameters("draft_bot", "archetype:TST") == {"epochs": 3}
    assert kinds.quick_parameters("no_such_kind") == {}


def test_scopes_and_parameters_are_checked_by_the_kind():
    training.validate("draft_bot", "neural:BLB")
    with pytest.raises(kinds.TrainingError, match="FAMILY:SET"):
        training.validate("draft_bot", "wizard:BLB")
    with pytest.raises(kinds.TrainingError, match="has no scope"):
        training.validate("card_embeddings", "BLB")
    with pytest.raises(kinds.TrainingError, match="cannot be trained here"):
        training.validate("wizard", "")
    assert kinds.cast_parameters({"epochs": "3", "quick": True}, {"epochs": int}) == {"epochs": 3}
    with pytest.raises(kinds.TrainingError, match="is not a int"):
        kinds.cast_parameters({"epochs": "many"}, {"epochs": int})


def test_ml_imports_neither_drafts_nor_gameplay():
    found = []
    for path in ML.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.relative_to(ML)}: {n}" for n in names if n.split(".")[0] in ("drafts", "gameplay")]
    assert found == []


def test_progress_without_a_listener_and_with_bars():
    silent = Progress()
    with silent.bar(total=3, desc="x") as bar:
        bar.update(1)
        bar.set_postfix(loss="0.5")
    silent.expect(2)
    silent.log("nothing")
    silent.metric("loss", 0.5)
    lines, made = [], []

    def bars(iterable=None, **kwargs):
        made.append(kwargs)
        return Progress().bar(iterable, **kwargs)
    shown = BarProgress(bars, lines.append)
    assert list(shown.bar([1, 2], desc="items", unit="item")) == [1, 2]
    shown.log("a line")
    assert lines == ["a line"] and made == [{"total": None, "desc": "items", "unit": "item"}]
