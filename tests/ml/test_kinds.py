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
                      "deck_rank": "decks.completion.training", "deck_diffusion": "decks.completion.training"}
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


def test_text_parameters_are_cast_to_the_kinds_types(tmp_path):
    allowed = {"on": bool, "names": list, "net": dict, "rate": float, "file": Path}
    (existing := tmp_path / "logs.csv").write_text("x")
    assert kinds.cast_parameters({"on": "yes", "names": "a, b", "net": '{"hidden": [8]}', "rate": "0.5",
                                  "file": str(existing)}, allowed) == {
        "on": True, "names": ["a", "b"], "net": {"hidden": [8]}, "rate": 0.5, "file": str(existing)}
    assert kinds.cast_parameters({"on": "off", "names": '["x"]'}, allowed) == {"on": False, "names": ["x"]}
    assert kinds.cast_parameters({"names": "10, 20,x"}, allowed) == {"names": [10, 20, "x"]}
    assert kinds.cast_parameters({"on": True, "names": ["y"]}, allowed) == {"on": True, "names": ["y"]}
    for bad, message in (({"on": "maybe"}, "is not a bool"), ({"net": "[1]"}, "is not a dict"),
                         ({"file": str(tmp_path / "none")}, "is not a file path")):
        with pytest.raises(kinds.TrainingError, match=message):
            kinds.cast_parameters(bad, allowed)


def test_aliases_labels_and_unknown_kinds(monkeypatch):
    monkeypatch.setattr(kinds, "_KINDS", dict(kinds._KINDS))
    monkeypatch.setattr(kinds, "_ALIASES", {})
    new = kinds.register(kinds.Kind("renamed_kind", label="A renamed kind"), aliases=("old_kind",))
    assert kinds.get("old_kind") is new and kinds.check("old_kind") is new and kinds.canonical("old_kind") == "renamed_kind"
    assert kinds.renamed("old_kind") == "old_kind is now renamed_kind" and kinds.renamed("renamed_kind") is None
    assert ("renamed_kind", "A renamed kind") in kinds.choices() and kinds.label("draft_bot") == "Draft bot"
    assert "old_kind" not in kinds.names()
    with pytest.raises(kinds.UnknownKind, match="unknown model kind 'wizard'"):
        kinds.check("wizard")
    with pytest.raises(ValueError, match="is a registered kind"):
        kinds.alias("draft_bot", "renamed_kind")


@pytest.mark.django_db
def test_rows_of_an_unknown_kind_are_refused_before_they_are_written():
    from django.core.exceptions import ValidationError

    from ml.models import ModelVersion, TrainingRun

    with pytest.raises(ValidationError, match="unknown model kind 'wizard'"):
        ModelVersion.objects.create(kind="wizard", version=1, weights_path="x", weights_sha256="0")
    with pytest.raises(ValidationError, match="unknown model kind"):
        TrainingRun(kind="wizard").full_clean()
    with pytest.raises(kinds.TrainingError, match="cannot be trained here"):
        training.create_training_run("wizard")
    assert not ModelVersion.objects.exists() and not TrainingRun.objects.exists()


@pytest.mark.django_db
def test_the_front_door_lists_kinds_and_documents_parameters():
    import io

    from django.core.management import CommandError, call_command

    out = io.StringIO()
    call_command("models", "kinds", stdout=out)
    assert "draft_bot" in out.getvalue() and "epochs=int" in out.getvalue() and "consented=bool" in out.getvalue()
    with pytest.raises(CommandError, match="give KEY=VALUE"):
        call_command("models", "train", "draft_bot", "--scope", "archetype:TST", "--param", "epochs")
    with pytest.raises(CommandError, match="cannot be trained here"):
        call_command("models", "train", "wizard")
    from ml.management.commands.models import PARAMETERS, Command

    assert PARAMETERS in Command().create_parser("manage.py", "models").format_help()


@pytest.mark.django_db
def test_the_front_door_takes_an_old_name_and_says_the_new_one(monkeypatch):
    import io

    from django.core.management import CommandError, call_command

    monkeypatch.setattr(kinds, "_ALIASES", {})
    kinds.alias("old_bot", "draft_bot")
    err = io.StringIO()
    call_command("models", "list", "--kind", "old_bot", stdout=io.StringIO(), stderr=err)
    assert "old_bot is now draft_bot" in err.getvalue()
    with pytest.raises(CommandError, match="FAMILY:SET"):  # checked as draft_bot
        call_command("models", "train", "old_bot", "--scope", "TST", stdout=io.StringIO(), stderr=io.StringIO())
