"""The staff pages: access rules, the versions table, actions, upload rejections, a run started from the form."""
import json

import pytest
import torch
from safetensors.torch import save_file

from ml import registry
from ml.models import ModelVersion, TrainingRun
from tests.ml.conftest import archetype_config, tiny_tensors

pytestmark = pytest.mark.django_db
SCOPE = "archetype:TST"


def urls(version=None, run=None):
    out = ["/models/"]
    if run:
        out += [f"/models/runs/{run.pk}/", f"/models/runs/{run.pk}/progress.json"]
    return out


def test_anonymous_go_to_login_and_members_get_403(client, member):
    v = registry.save_version("draft_bot", tiny_tensors(), archetype_config(), scope=SCOPE)
    run = TrainingRun.objects.create(kind="draft_bot", scope=SCOPE)
    gets = urls(run=run)
    posts = [f"/models/versions/{v.pk}/activate/", f"/models/versions/{v.pk}/delete/", f"/models/versions/{v.pk}/evaluate/",
             "/models/train/", "/models/upload/", "/models/rollback/", f"/models/runs/{run.pk}/cancel/"]
    for url in gets + posts:
        r = client.get(url) if url in gets else client.post(url)
        assert r.status_code == 302 and r["Location"].startswith("/accounts/login/?next="), url
    client.force_login(member)
    for url in gets + posts:
        r = client.get(url) if url in gets else client.post(url)
        assert r.status_code == 403, url
    assert b"/models/" not in client.get("/").content  # no nav link for non-staff
    assert not ModelVersion.objects.get(pk=v.pk).active and TrainingRun.objects.count() == 1


def test_staff_see_versions_side_by_side_and_act(client, staff):
    v1 = registry.save_version("draft_bot", tiny_tensors(), archetype_config(), scope=SCOPE, activate=True,
                               metrics={"held_out": {"all": {"top1": 0.5}}, "train_seconds": 1.5})
    v2 = registry.save_version("draft_bot", tiny_tensors(), archetype_config(), scope=SCOPE,
                               metrics={"held_out": {"all": {"top1": 0.6}}, "eval": {"top1": 0.61}})
    client.force_login(staff)
    page = client.get("/models/")
    html = page.content.decode()
    assert page.status_code == 200 and 'id="nav-models"' in html
    assert "held_out.all.top1" in html and "eval.top1" in html and "train_seconds" in html
    assert "0.6100" in html and "0.5000" in html and 'data-testid="active"' in html
    r = client.post(f"/models/versions/{v2.pk}/activate/", follow=True)
    assert "is now active" in r.content.decode()
    assert ModelVersion.objects.get(active=True).pk == v2.pk
    r = client.post("/models/rollback/", {"kind": "draft_bot", "scope": SCOPE}, follow=True)
    assert "Rolled back" in r.content.decode() and ModelVersion.objects.get(active=True).pk == v1.pk
    r = client.post(f"/models/versions/{v1.pk}/delete/", follow=True)
    assert "is active" in r.content.decode() and ModelVersion.objects.filter(pk=v1.pk).exists()
    r = client.post(f"/models/versions/{v2.pk}/delete/", follow=True)
    assert "Deleted" in r.content.decode() and not ModelVersion.objects.filter(pk=v2.pk).exists()


def test_upload_form_rejects_with_a_clear_message_and_accepts_a_good_file(client, staff, tmp_path, model_dir):
    client.force_login(staff)
    bad = tmp_path / "bad.safetensors"
    torch.save(tiny_tensors(), bad)
    with open(bad, "rb") as fh:
        r = client.post("/models/upload/", {"kind": "draft_bot", "scope": SCOPE, "config": json.dumps(archetype_config()),
                                            "file": fh})
    assert r.status_code == 400 and "Rejected:" in r.content.decode() and "Nothing was saved" in r.content.decode()
    assert not ModelVersion.objects.exists() and not list(model_dir.rglob("*.safetensors"))
    wrong = tmp_path / "wrong.safetensors"
    save_file({**tiny_tensors(), "weights": torch.rand(9, 3)}, str(wrong))
    with open(wrong, "rb") as fh:
        r = client.post("/models/upload/", {"kind": "draft_bot", "scope": SCOPE, "config": json.dumps(archetype_config()),
                                            "file": fh})
    assert r.status_code == 400 and "shape (9, 3)" in r.content.decode() and not ModelVersion.objects.exists()
    good = tmp_path / "good.safetensors"
    save_file(tiny_tensors(), str(good))
    with open(good, "rb") as fh:
        r = client.post("/models/upload/", {"kind": "draft_bot", "scope": SCOPE, "config": json.dumps(archetype_config()),
                                            "file": fh, "activate": "on"}, follow=True)
    assert "Uploaded" in r.content.decode() and ModelVersion.objects.get().active


def test_training_form_starts_a_run_and_the_json_reports_it(client, staff, drafted_set, django_capture_on_commit_callbacks,
                                                           monkeypatch):
    from ml.tasks import train_task

    monkeypatch.setattr(train_task, "apply_async", lambda args: train_task.apply(args=args))  # here, on both stacks
    client.force_login(staff)
    r = client.post("/models/train/", {"kind": "draft_bot", "scope": "TST", "parameters": "{}", "quick": "on"})
    assert r.status_code == 400 and "FAMILY:SET" in r.content.decode() and not TrainingRun.objects.exists()
    r = client.post("/models/train/", {"kind": "draft_bot", "scope": SCOPE, "parameters": "{not json", "quick": "on"})
    assert r.status_code == 400 and "Not valid JSON" in r.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        r = client.post("/models/train/", {"kind": "draft_bot", "scope": SCOPE, "parameters": '{"epochs": 2}',
                                           "quick": "on", "activate": "on"})
    run = TrainingRun.objects.get()
    assert r.status_code == 302 and r["Location"] == f"/models/runs/{run.pk}/"
    page = client.get(r["Location"]).content.decode()
    assert 'id="job-progress"' in page and "progress.json" in page
    data = client.get(f"/models/runs/{run.pk}/progress.json").json()
    assert data["status"] == "succeeded" and data["progress"] == 100.0 and data["done"]
    assert data["metric"]["name"] == "held_out_top1" and "held-out top-1" in data["log"]
    assert run.parameters == {"epochs": 2, "quick": True, "activate": True} and run.created_by == "ada"
    assert ModelVersion.objects.get(pk=data["version"]).active


def test_unknown_kinds_and_bad_parameters_are_form_errors_not_rows(client, staff, tmp_path, model_dir):
    client.force_login(staff)
    good = tmp_path / "good.safetensors"
    save_file(tiny_tensors(), str(good))
    with open(good, "rb") as fh:
        r = client.post("/models/upload/", {"kind": "wizard", "scope": SCOPE, "config": json.dumps(archetype_config()),
                                            "file": fh})
    assert r.status_code == 400 and "wizard is not one of the available choices" in r.content.decode()
    r = client.post("/models/train/", {"kind": "wizard", "scope": "", "parameters": "{}"})
    assert r.status_code == 400
    r = client.post("/models/train/", {"kind": "draft_bot", "scope": SCOPE, "parameters": '{"epochs": "many"}'})
    assert r.status_code == 400 and "parameter epochs" in r.content.decode()
    assert not ModelVersion.objects.exists() and not TrainingRun.objects.exists()
    page = client.get("/models/").content.decode()
    assert '<option value="draft_bot">Draft bot</option>' in page
    with pytest.raises(registry.UploadRejected, match="Unknown kind 'wizard'"):
        registry.upload_version("wizard", "", str(good), {})
