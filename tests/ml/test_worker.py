"""A real Celery worker (services stack) consuming this run's default, training and inference queues:
it trains draft bots end to end while the run's JSON shows the progress going up, then an activation
switches the version the worker serves, without a restart; and the run page's progress bar, in
chromium, reaches 100%."""
from __future__ import annotations

import os
import time

import pytest

from ml.models import ModelVersion, TrainingRun
from tests.conftest import start_worker
from tests.browser import ARTIFACTS, CHROMIUM

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]
SCOPE = "archetype:TST"


@pytest.fixture
def training_worker(drafted_set, model_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MTG_MODEL_DIR", str(model_dir))  # the worker writes where the test reads
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MTG_TRAINING_REPORT_SECONDS", "0.05")  # tiny runs: report often enough to be seen
    yield from start_worker(tmp_path)


def wait_done(client, run, seen: list, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        data = client.get(f"/models/runs/{run.pk}/progress.json").json()
        if not seen or seen[-1] != data["progress"]:
            seen.append(data["progress"])
        if data["done"]:
            return data
        time.sleep(0.05)
    raise AssertionError(f"run {run.pk} not done after {timeout}s: {data}")


def test_a_real_worker_trains_and_activation_switches_what_it_serves(training_worker, client, staff):
    from django.conf import settings

    from ml.tasks import enqueue_training, loaded_version

    client.force_login(staff)
    r = client.post("/models/train/", {"kind": "draft_bot", "scope": SCOPE, "parameters": '{"epochs": 160}',
                                       "activate": "on"})
    run = TrainingRun.objects.get()
    assert r.status_code == 302 and run.task_id
    seen: list = []
    data = wait_done(client, run, seen)
    assert data["status"] == "succeeded", data
    assert data["progress"] == 100.0 and data["metric"]["name"] == "held_out_top1"
    middle = [p for p in seen if 0 < p < 100]
    assert len(middle) >= 2 and middle == sorted(middle), f"progress seen: {seen}"
    first = ModelVersion.objects.get(pk=data["version"])
    assert first.active
    assert loaded_version.delay("draft_bot", SCOPE).get(timeout=30)["version"] == first.pk

    run2 = TrainingRun.objects.get(pk=enqueue_training("draft_bot", SCOPE, {"epochs": 2, "seed": 1}, user="test").pk)
    data2 = wait_done(client, run2, [])
    assert data2["status"] == "succeeded", data2
    second = ModelVersion.objects.get(pk=data2["version"])
    assert not second.active  # registered inactive by default
    assert loaded_version.delay("draft_bot", SCOPE).get(timeout=30)["version"] == first.pk
    client.post(f"/models/versions/{second.pk}/activate/")
    assert loaded_version.delay("draft_bot", SCOPE).get(timeout=30)["version"] == second.pk  # same worker, no restart
    client.post("/models/rollback/", {"kind": "draft_bot", "scope": SCOPE})
    assert loaded_version.delay("draft_bot", SCOPE).get(timeout=30)["version"] == first.pk
    from drafts.services import get_bot, set_list

    assert get_bot("archetype", set_list("TST"))[1].pk == first.pk
    assert settings.CELERY_TRAINING_QUEUE.endswith(".training") and training_worker.poll() is None


@pytest.mark.browser
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing")
def test_run_page_progress_bar_reaches_100_in_the_browser(training_worker, daphne_server, browser, staff):
    from playwright.sync_api import expect

    page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
    page.set_default_timeout(30_000)
    problems = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.goto(f"{daphne_server}/models/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", "pw-staff-123")
    page.click("form button[type=submit]")
    page.wait_for_url(f"{daphne_server}/models/")
    page.select_option("#train-form select[name=kind]", "draft_bot")
    page.fill("#train-form input[name=scope]", SCOPE)
    page.fill("#train-form textarea[name=parameters]", '{"epochs": 30}')
    page.check("#train-form input[name=activate]")
    page.click("#train-form button[type=submit]")
    page.wait_for_url(__import__("re").compile(r"/models/runs/\d+/$"))
    expect(page.locator("#run-status")).to_have_text("succeeded", timeout=120_000)
    expect(page.locator("#job-progress")).to_have_attribute("value", "100")
    expect(page.locator("#run-percent")).to_have_text("100.0%")
    expect(page.locator("#run-log")).to_contain_text("held-out top-1")
    expect(page.locator("#run-version")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "model-run.png"), full_page=True)
    page.goto(f"{daphne_server}/models/")
    expect(page.locator("#nav-models")).to_be_visible()
    expect(page.locator(".model-group[data-scope='archetype:TST'] tr.active-version")).to_have_count(1)
    assert not problems, problems
