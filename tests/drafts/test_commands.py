"""The draft management commands end to end on a hand-made set: simulate, export, import, evaluate, predict, plot."""
from __future__ import annotations

import csv
import gzip
import io
import json

import pytest
from django.core.management import CommandError, call_command


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_simulate_export_import_evaluate_predict(draft_set, tmp_path):
    from drafts.models import Draft, DraftPick

    text = run("simulate_drafts", "--set", "TST", "--pods", "2", "--bots", "draftsim,rating,random,draftsim", "--seats", "4",
               "--seed", "10")
    assert "2 pods of 4 seats simulated" in text
    assert Draft.objects.count() == 2 and DraftPick.objects.count() == 2 * 4 * 42
    logs = tmp_path / "draft_data.TST.csv.gz"
    assert "336 picks written" in run("export_drafts", "--set", "TST", "--out", str(logs))

    results = tmp_path / "results.json"
    text = run("eval_draftbot", "--logs", str(logs), "--bot", "draftsim", "--out", str(results))
    assert "top-1" in text
    report = json.loads(results.read_text())
    assert report["picks"] == 336 and 0 < report["all"]["top1"] <= report["all"]["top3"] <= 1
    assert report["unforced"]["picks"] == 336 - 2 * 4 * 3 and set(report["by_pick"]) == {str(i) for i in range(42)}
    assert report["all"]["mean_rank"] >= 1

    predictions = tmp_path / "predictions.csv"
    run("predict_picks", "--logs", str(logs), "--bot", "rating", "--out", str(predictions))
    rows = list(csv.DictReader(predictions.open()))
    assert len(rows) == 336 and list(rows[0]) == ["draft_id", "pack_number", "pick_number", "ranking"]
    with gzip.open(logs, "rt") as fh:
        first = next(csv.DictReader(fh))
    pack = {k[len("pack_card_"):] for k, v in first.items() if k.startswith("pack_card_") and v == "1"}
    assert set(rows[0]["ranking"].split("|")) == pack

    Draft.objects.all().delete()
    assert "8 seats, 336 picks stored" in run("import_drafts", "--logs", str(logs))
    assert "0 seats, 0 picks stored; 8 seats were already stored" in run("import_drafts", "--logs", str(logs))

    plot = tmp_path / "seat.svg"
    draft = Draft.objects.first()
    run("plot_draft", "--draft", str(draft.pk), "--seat", "1", "--out", str(plot))
    assert plot.read_bytes().lstrip().startswith(b"<?xml") or b"<svg" in plot.read_bytes()[:300]
    heat = tmp_path / "heat.png"
    run("plot_draft", "--weights", "TST", "--out", str(heat))
    assert heat.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("args, message", [
    (["simulate_drafts", "--set", "NOPE"], "unknown set"),
    (["simulate_drafts", "--set", "TST", "--bots", "wizard"], "unknown bot"),
    (["eval_draftbot", "--logs", "/nonexistent.csv.gz", "--bot", "draftsim"], "no such file"),
    (["import_drafts", "--logs", "/nonexistent.csv"], "file not found"),
    (["export_drafts", "--out", "x.csv"], "say what to export"),
    (["plot_draft", "--out", "x.gif", "--weights", "TST"], "must end in .svg or .png"),
])
def test_command_errors_are_clear(draft_set, args, message):
    with pytest.raises(CommandError, match=message):
        call_command(*args, stdout=io.StringIO(), stderr=io.StringIO())


def test_eval_on_a_corrupt_file_is_a_clear_error(draft_set, tmp_path):
    bad = tmp_path / "broken.csv.gz"
    bad.write_bytes(gzip.compress(b"expansion,event_type,draft_id,pack_number,pick_number,pick,pack_card_A,pool_A\n")[:30])
    with pytest.raises(CommandError, match="unreadable|corrupt"):
        call_command("eval_draftbot", "--logs", str(bad), "--bot", "draftsim", stdout=io.StringIO())
