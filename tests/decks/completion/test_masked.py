"""The masked completer (retrieval + masked diffusion) as the site's default: training command, registry kind,
the page, the API, the commands, the job result (confidence, source decks, warnings) and the shipped default."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from decks.models import CompletionJob, Deck
from ml.models import ModelVersion, TrainingRun

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

PARTIAL = "4 Lightning Bolt\n4 Goblin Guide\n2 Inspiring Vantage\n\nSideboard\n2 Path to Exile\n"


def totals(pairs):
    return sum(c for _, c in pairs)


def counts(pairs):
    return {n: c for n, c in pairs}


def post_api(client, payload):
    return client.post("/api/decks/complete", payload, content_type="application/json")


def assert_masked_result(result):
    """60 + 15, a confidence in 0..1 for every generated card, up to 5 sources that are corpus decks."""
    assert totals(result["main"]) == 60 and totals(result["side"]) == 15
    generated = {f"main:{n}" for n, _ in result["generated_main"]} | {f"side:{n}" for n, _ in result["generated_side"]}
    assert set(result["confidence"]) == generated
    assert all(0.0 <= v <= 1.0 for v in result["confidence"].values())
    sources = result["sources"]
    assert 1 <= len(sources) <= 5
    weights = [s["weight"] for s in sources]
    assert weights == sorted(weights, reverse=True)
    for s in sources:
        deck = Deck.objects.get(pk=s["deck"])
        assert deck.source == "corpus" and s["url"] == reverse("deck-detail", args=[deck.pk])
        assert s["event"].startswith("Event ") and s["date"] == deck.first_seen.isoformat()
        assert 0.0 < s["weight"] <= 1.0 and 0.0 <= s["similarity"] <= 1.0
    return sources


# --- training and the registry -----------------------------------------------------------------------

def test_quick_training_registers_an_active_masked_version(masked_model, tiny_corpus):
    from decks.completion.datasets import names_sha1
    from decks.embeddings.service import active_embeddings
    from ml.kinds import expected_shapes
    from ml.registry import resolve_path
    from ml.safetensors_check import check_tensors, read_header_path

    v = masked_model
    c = v.config
    assert c["format"] == "masked-v1" and c["split_date"] == "2026-06-01" and c["train"]["steps"] == 40
    assert c["model"]["d_model"] == 32 and c["model"]["layers"] == 1 and c["model"]["candidates"] == 48
    assert c["model"]["vocab"] == len(c["cards"]) + 1 and "Lightning Bolt" in c["cards"]
    assert c["names_sha1"] == names_sha1(active_embeddings().names) and c["retrieval"]["neighbours"] == 50
    assert v.metrics["steps"] == 40 and v.metrics["finished"] and v.metrics["train_decks"] > 0
    header = read_header_path(resolve_path(v.weights_path))
    assert header.metadata["format"] == "masked-v1"
    assert check_tensors(header, expected_shapes("deck_masked", c)) == []

    from decks.completion.service import get_completer

    completer = get_completer("masked")
    assert completer.model is not None and completer.version == v
    assert get_completer("masked") is completer  # cached until another version is active
    done = completer.complete([("Lightning Bolt", 4)], [], "modern")
    assert totals(done.main) == 60 and totals(done.side) == 15


def test_the_versions_sampler_settings_reach_the_completer(masked_model, tiny_corpus):
    """The gates and rounds chosen on the validation month (bench/completion_gates.py --apply) are stored in the
    version's config and used by every completion with it."""
    from decks.completion.completers import build_masked_completer

    v = masked_model
    v.config = {**v.config, "sampler": {"gate": 0.6, "side_gate": 0.8, "steps": 1, "side_steps": 3}}
    c = build_masked_completer(version=v, split_date=None)
    assert (c.gate, c.side_gate, c.steps, c.side_steps) == (0.6, 0.8, 1, 3)
    assert c.gate_for(0) == 0.6 and c.gate_for(1) == 0.8
    done = c.complete([("Lightning Bolt", 4)], [], "modern")
    assert totals(done.main) == 60 and totals(done.side) == 15 and done.iterations <= 1 + 3


def test_deck_arrays_carry_the_deck_ids(tiny_corpus):
    from decks.completion.datasets import deck_arrays
    from decks.embeddings.service import active_embeddings

    names = active_embeddings().names
    arrays = deck_arrays(names)
    assert arrays.ids is not None and len(arrays.ids) == len(arrays) == Deck.objects.filter(source="corpus").count()
    for row in (0, len(arrays) - 1):
        deck = Deck.objects.get(pk=int(arrays.ids[row]))
        mains = sorted(names[i] for i in arrays.main[row])
        expected = sorted(dc.card.name for dc in deck.cards.filter(board="main") for _ in range(dc.count))
        assert mains == expected
    again = deck_arrays(names)  # from the cache file
    assert list(again.ids) == list(arrays.ids)


def train_masked(*flags, **params):
    """``manage.py models train deck_masked [flags] --params JSON`` -> its output."""
    out = io.StringIO()
    call_command("models", "train", "deck_masked", *flags, "--params", json.dumps(params), stdout=out,
                 stderr=io.StringIO())
    return out.getvalue()


def test_train_command_options_and_errors(tiny_corpus):
    with pytest.raises(CommandError, match="multiple of heads"):
        train_masked(preset="quick", d_model=30, heads=4)
    with pytest.raises(CommandError, match="at least 1"):
        train_masked(preset="quick", steps=0)
    with pytest.raises(CommandError, match="Too few training decks"):
        train_masked(preset="quick", split_date="2000-01-01")
    assert not ModelVersion.objects.filter(kind="deck_masked").exists()


def test_time_budget_then_resume(tiny_corpus):
    """A run cut by time_budget registers nothing and leaves a checkpoint; resume finishes it."""
    from decks.completion.training import checkpoint_path

    with pytest.raises(CommandError, match="resume"):
        train_masked(preset="quick", steps=120, time_budget=0.05)
    assert checkpoint_path(0).exists() and not ModelVersion.objects.filter(kind="deck_masked").exists()
    out = train_masked(preset="quick", steps=120, resume=True)
    version = ModelVersion.objects.get(kind="deck_masked")
    assert not version.active and version.metrics["steps"] == 120, out


def test_training_run_and_evaluation_of_the_kind(tiny_corpus):
    from ml import training

    run = TrainingRun.objects.create(kind="deck_masked", parameters={
        **training.parameters_for("deck_masked", "", {}, True), "split_date": "2026-06-01"})
    run = training.execute(run.pk)
    assert run.status == "succeeded", run.error + run.log
    assert run.parameters["steps"] == 40 and run.metric_name == "loss" and "registered" in run.log
    version = run.result_version
    assert version.kind == "deck_masked" and not version.active
    run = training.execute(TrainingRun.objects.create(job="evaluate", kind="deck_masked", target_version=version,
                                                      parameters={"n": 4, "known": [10]}).pk)
    assert run.status == "succeeded", run.error + run.log
    version.refresh_from_db()
    ev = version.metrics["eval"]
    assert 0.0 <= ev["main_recall_k10"] <= 1.0 and ev["valid_share_k10"] == 1.0


def test_expected_shapes_of_the_kind():
    from ml.kinds import ConfigError, expected_shapes, quick_parameters, required_metadata

    config = {"format": "masked-v1", "cards": ["a", "b", "c"],
              "model": {"vocab": 4, "d_model": 16, "heads": 2, "layers": 1, "ff": 32, "candidates": 8}}
    shapes = expected_shapes("deck_masked", config)
    assert shapes["card.weight"] == (4, 16) and len(shapes) > 10
    with pytest.raises(ConfigError, match="vocab is 4 but cards lists 2"):
        expected_shapes("deck_masked", {**config, "cards": ["a", "b"]})
    with pytest.raises(ConfigError, match="lacks cards"):
        expected_shapes("deck_masked", {"model": config["model"]})
    with pytest.raises(ConfigError, match="unknown deck_masked format"):
        expected_shapes("deck_masked", {**config, "format": "pickle"})
    check = required_metadata("deck_masked", config)["format"]
    assert check("masked-v1") is None and "must be" in check("v0")
    assert quick_parameters("deck_masked")["steps"] == 40


# --- the product: API, page, commands ---------------------------------------------------------------

def test_api_completes_with_the_masked_model_by_default(client, masked_model, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = post_api(client, {"format": "modern", "main": [["Lightning Bolt", 4], ["Goblin Guide", 4]],
                                     "side": [["Path to Exile", 2]]})
    assert response.status_code == 202, response.content
    assert response.json()["model"] == "masked"
    detail = client.get(f"/api/decks/complete/{response.json()['id']}").json()
    assert detail["status"] == "done", detail["error"]
    job = CompletionJob.objects.get()
    assert job.model == "masked" and job.model_version == masked_model
    sources = assert_masked_result(detail["result"])
    assert counts(detail["result"]["main"])["Lightning Bolt"] >= 4 and detail["result"]["warnings"] == []
    deck_page = client.get(sources[0]["url"])
    assert deck_page.status_code == 200


def test_page_shows_confidence_sources_and_warnings(client, tiny_corpus, django_capture_on_commit_callbacks):
    """No deck_masked version yet: the neighbour vote completes. A card never seen in the format is kept, with a
    warning on the page (the Manamorphosis model refuses it instead)."""
    text = PARTIAL + "\n"
    text = "1 Lim-Dûl's Vault\n" + text
    form = {"text": text, "format": "modern", "sideboard": "generate", "sampler": "fast", "seed": "0"}
    response = client.post(reverse("completion-form"), {**form, "model": "manamorphosis"})
    assert response.status_code == 200 and "has not been seen legal in Modern" in response.content.decode()
    assert CompletionJob.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("completion-form"), form)  # the form's default model: masked
    assert response.status_code == 302
    job = CompletionJob.objects.get()
    assert job.status == "done" and job.model == "masked" and job.model_version is None, job.error
    sources = assert_masked_result(job.result)
    assert counts(job.result["main"])["Lim-Dûl's Vault"] == 1
    assert any("Lim-Dûl's Vault" in w and "kept" in w for w in job.result["warnings"])
    page = client.get(response["Location"]).content.decode()
    assert 'id="job-warnings"' in page and "Lim-Dûl&#x27;s Vault has not been seen" in page
    assert 'id="job-sources"' in page and f'href="{sources[0]["url"]}"' in page and sources[0]["event"] in page
    assert page.count("<meter") == len(job.result["confidence"]) and "% sure of this card" in page


def test_form_offers_the_models(client, catalogue):
    page = client.get(reverse("completion-form")).content.decode()
    assert '<option value="masked" selected>' in page and '<option value="manamorphosis">' in page


@pytest.mark.parametrize("payload, fragment", [
    ({"format": "modern", "main": [["Lightnig Bolt", 4]]}, "Unknown card"),
    ({"format": "modern", "main": [["Lightning Bolt", 5]]}, "5 copies of Lightning Bolt"),
    ({"format": "modern", "main": [["Lightning Bolt", 4]], "side": [["Lightning Bolt", 1]]}, "5 copies"),
    ({"format": "modern", "main": [["Lightning Bolt", 4]], "model": "gpt"}, "Unknown model 'gpt'"),
    ({"format": "modern", "main": [["Lightning Bolt", 4]], "model": 3}, "choose one of masked, manamorphosis"),
    ({"format": "modern", "main": [["Counterspell", 4]]}, "Counterspell is not legal in Modern"),
])
def test_api_bad_input_is_a_clear_400_and_writes_no_job(client, catalogue, payload, fragment):
    response = post_api(client, payload)
    assert response.status_code == 400
    assert any(fragment in e["message"] for e in response.json()["errors"]), response.json()
    assert CompletionJob.objects.count() == 0


def test_api_manamorphosis_still_works(client, tiny_models, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = post_api(client, {"format": "modern", "main": [["Lightning Bolt", 4]], "seed": 2,
                                     "model": "manamorphosis", "sampler": "fast"})
    assert response.status_code == 202, response.content
    detail = client.get(f"/api/decks/complete/{response.json()['id']}").json()
    assert detail["status"] == "done" and detail["model"] == "manamorphosis", detail["error"]
    assert totals(detail["result"]["main"]) == 60 and totals(detail["result"]["side"]) == 15
    assert not {"confidence", "sources", "warnings"} & set(detail["result"])
    job = CompletionJob.objects.get()
    assert job.model_version.kind == "deck_diffusion"
    assert "seed 2" in client.get(reverse("completion-job", args=[job.pk])).content.decode()


def test_masked_and_manamorphosis_jobs_in_one_batch(tiny_models, settings):
    """One task call claims both; each model runs its own group with its own completer."""
    from decks.tasks import complete_deck_task

    settings.COMPLETION_BATCH_SIZE = 8
    make = lambda model: CompletionJob.objects.create(format="modern", known_main=[["Lightning Bolt", 4]],  # noqa: E731
                                                      known_side=[], model=model)
    masked, mana = make("masked"), make("manamorphosis")
    out = complete_deck_task(str(masked.pk))
    assert sorted(out["batch"]) == sorted([str(masked.pk), str(mana.pk)])
    masked.refresh_from_db()
    mana.refresh_from_db()
    assert masked.status == "done" and mana.status == "done", (masked.error, mana.error)
    assert "sources" in masked.result and "sources" not in mana.result
    assert masked.model_version is None and mana.model_version.kind == "deck_diffusion"


def test_complete_deck_command_with_each_model(tiny_models):
    from decks.core.decklist import parse_decklist
    from decks.services import card_index

    for model in ("masked", "manamorphosis"):
        out, err = io.StringIO(), io.StringIO()
        call_command("complete_deck", cards=["4 Lightning Bolt", "4 Goblin Guide"], format="modern", model=model,
                     stdout=out, stderr=err)
        parsed = parse_decklist(out.getvalue(), card_index())
        assert parsed.ok and parsed.deck.main_count == 60 and parsed.deck.side_count == 15
        assert ("drew on: Event " in err.getvalue()) == (model == "masked")


def test_complete_batch_with_the_masked_model(tiny_corpus, tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join([
        json.dumps({"id": "a", "format": "modern", "main": [["Lightning Bolt", 4]], "side": []}),
        json.dumps({"id": "b", "format": "modern", "main": [["Counterspell", 4]], "side": []}),
        json.dumps({"id": "c", "format": "legacy", "main": [["Counterspell", 4], ["Island", 10]]}),
    ]) + "\n")
    out = tmp_path / "out.jsonl"
    call_command("complete_batch", infile=str(tasks), outfile=str(out), stdout=io.StringIO(), stderr=io.StringIO())
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(rows["a"]) == {"id", "main", "side"} and totals(rows["a"]["main"]) == 60
    assert "Counterspell" in rows["b"]["error"]
    assert counts(rows["c"]["main"])["Counterspell"] == 4 and totals(rows["c"]["side"]) == 15
    with pytest.raises(CommandError, match="invalid choice: 'gpt'"):
        call_command("complete_batch", "--model", "gpt", infile=str(tasks), outfile=str(out), stdout=io.StringIO())


def test_evaluation_on_a_file_scores_the_masked_model(masked_model, tiny_corpus):
    out = tiny_corpus / "eval.json"
    params = {"decks": str(tiny_corpus / "corpus.jsonl"), "known": [10], "out": str(out), "n": 4,
              "methods": "diffusion,nearest", "split_date": "2026-06-01"}
    call_command("models", "evaluate", str(masked_model.pk), "--params", json.dumps(params), stdout=io.StringIO(),
                 stderr=io.StringIO())
    result = json.loads(out.read_text())
    masked_model.refresh_from_db()
    assert masked_model.metrics["eval"]["diffusion_main_recall_k10"] == result["results"]["diffusion"]["10"]["main_recall"]
    assert result["model"] == "masked" and result["diffusion_version"]["kind"] == "deck_masked"
    assert "cards" not in result["diffusion_version"]["config"]
    r = result["results"]["diffusion"]["10"]
    assert 0.0 <= r["main_recall"] <= 1.0 and r["valid_share"] == 1.0


# --- the shipped default ------------------------------------------------------------------------------

def test_shipped_masked_weights_are_registered_and_used(masked_model, tmp_path, monkeypatch):
    from ml import defaults

    folder = tmp_path / "weights"
    monkeypatch.setattr(defaults, "WEIGHTS_DIR", folder)
    monkeypatch.setattr(defaults, "MANIFEST", folder / "manifest.json")
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps([{"kind": "card_embeddings", "file": "x.safetensors",
                                                       "sha256": "0", "config": {}}]))
    call_command("register_models", export=True, kind="deck_masked", stdout=io.StringIO())
    assert [e["kind"] for e in defaults.shipped()] == ["card_embeddings", "deck_masked"]  # the other entry kept
    assert (folder / "deck_masked.safetensors").exists()

    TrainingRun.objects.filter(kind="deck_masked").delete()  # the run that trained it protects its version
    ModelVersion.objects.filter(kind="deck_masked").delete()
    out = io.StringIO()
    call_command("register_models", no_train=True, stdout=out)
    shipped = ModelVersion.objects.get(kind="deck_masked")
    assert shipped.active and "deck_masked: registered the shipped default" in out.getvalue()
    from decks.completion import service

    service.reset_completers()
    assert service.get_completer("masked").version == shipped


def test_without_a_masked_version_register_models_says_the_vote_is_used(tiny_corpus, tmp_path, monkeypatch):
    from ml import defaults

    monkeypatch.setattr(defaults, "MANIFEST", tmp_path / "none.json")
    out = io.StringIO()
    call_command("register_models", no_train=True, stdout=out, stderr=io.StringIO())
    assert "deck_masked: no shipped or trained version; deck completion uses the neighbour vote" in out.getvalue()
    assert not ModelVersion.objects.filter(kind="deck_masked").exists()


def test_a_version_of_another_vocabulary_fails_the_job_clearly(client, masked_model,
                                                               django_capture_on_commit_callbacks):
    masked_model.config = {**masked_model.config, "cards": masked_model.config["cards"][:-1] + ["Nonexistent Card"]}
    masked_model.save(update_fields=["config"])
    from decks.completion import service

    service.reset_completers()
    with django_capture_on_commit_callbacks(execute=True):
        response = post_api(client, {"format": "modern", "main": [["Lightning Bolt", 4]]})
    assert response.status_code == 202
    job = CompletionJob.objects.get()
    assert job.status == "failed" and "does not fit the active card_embeddings" in job.error
    assert "Nonexistent Card" in job.error and job.deck is None


def test_the_schema_documents_the_model_parameter(client, db):
    schema = client.get("/api/schema/").content.decode()
    assert "manamorphosis" in schema and "confidence" in schema and "CompletionSource" in schema
