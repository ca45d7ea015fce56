"""Abuse limits on deck completion: a flood from one client is refused after its quota while another client's
request completes as fast as alone; the cap on a client's unfinished jobs; a full queue answers 503 and writes
nothing. In-process (the test client) and end to end (Daphne, and a Celery worker on the services stack)."""
from __future__ import annotations

import http.client
import json
import random
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client as DjangoClient
from django.utils import timezone

from decks.models import CompletionJob
from tests.limits import turn_on

REQUEST = {"format": "modern", "main": [["Lightning Bolt", 4], ["Goblin Guide", 4]], "seed": 1}


@pytest.fixture
def limits_on(settings, monkeypatch):
    return turn_on(settings, monkeypatch)


def post(http, addr: str, payload=REQUEST):
    """A completion request from ``addr``; ``http`` is a test client (its session, if any, goes with the request),
    or None for a script that keeps no cookies (a fresh client each time: keyed by its address)."""
    http = http or DjangoClient()
    return http.post("/api/decks/complete", payload, content_type="application/json", REMOTE_ADDR=addr)


def test_a_flood_is_refused_after_its_quota_and_another_client_still_completes(
        tiny_corpus, limits_on, eager_tasks, django_capture_on_commit_callbacks):
    """In-process: each accepted completion runs within its request (eager tasks), the test's transaction's
    commit callbacks run at once."""
    set_limits, _ = limits_on
    set_limits(completion="5/min", completion_concurrent=2, completion_queue_max=50)
    http = DjangoClient()

    def timed_completion(addr: str) -> tuple[float, dict]:
        start = time.perf_counter()
        with django_capture_on_commit_callbacks(execute=True):
            response = post(None, addr)
        assert response.status_code == 202, response.content
        job = http.get(f"/api/decks/complete/{response.json()['id']}").json()
        return time.perf_counter() - start, job

    alone, job = timed_completion("198.51.100.2")  # client B, before the flood
    assert job["status"] == "done", job
    answers = []
    for _ in range(100):  # client A
        with django_capture_on_commit_callbacks(execute=True):
            answers.append(post(None, "198.51.100.1"))
    accepted = [r for r in answers if r.status_code == 202]
    refused = [r for r in answers if r.status_code == 429]
    assert len(accepted) == 5 and len(refused) == 95
    assert all(int(r["Retry-After"]) >= 1 and r.json()["errors"][0]["limit"] == "completion" for r in refused)
    assert CompletionJob.objects.filter(client_key="ip:198.51.100.1").count() == 5
    after, job = timed_completion("198.51.100.3")  # client B' after the flood
    assert job["status"] == "done", job
    assert after < 3 * alone + 1.0, (alone, after)


def test_a_client_with_unfinished_jobs_waits_for_them(catalogue, limits_on, django_capture_on_commit_callbacks):
    set_limits, _ = limits_on
    set_limits(completion="100/min", completion_concurrent=2)
    with django_capture_on_commit_callbacks():  # queued, never run: the jobs stay unfinished
        assert [post(None, "198.51.100.5").status_code for _ in range(2)] == [202, 202]
    response = post(None, "198.51.100.5")
    assert response.status_code == 429
    error = response.json()["errors"][0]
    assert error["limit"] == "completion_concurrent" and int(response["Retry-After"]) == error["retry_after"] == 5
    assert "already have 2" in error["message"]
    assert CompletionJob.objects.count() == 2  # nothing written for the refused one
    with django_capture_on_commit_callbacks():
        assert post(None, "198.51.100.6").status_code == 202  # another client
    CompletionJob.objects.filter(client_key="ip:198.51.100.5").update(created=timezone.now() - timedelta(hours=1))
    with django_capture_on_commit_callbacks():  # jobs left unfinished past COMPLETION_STALE_SECONDS count for nobody
        assert post(None, "198.51.100.5").status_code == 202


def test_the_job_remembers_who_asked(catalogue, limits_on, django_capture_on_commit_callbacks):
    http = DjangoClient()
    with django_capture_on_commit_callbacks():
        anonymous = post(http, "198.51.100.7").json()["id"]
        guest = http.cookies["sessionid"].value  # the first completion gave the guest a session
        again = post(http, "198.51.100.7").json()["id"]
        user = User.objects.create_user("ana", password="pw-for-tests-1")
        http.force_login(user)
        signed_in = post(http, "198.51.100.7").json()["id"]
    # counted under the key the limits saw (a first visit has no session yet), the deck for the guest's session
    first = CompletionJob.objects.get(pk=anonymous)
    assert first.client_key == "ip:198.51.100.7" and first.guest == guest
    assert CompletionJob.objects.get(pk=again).client_key == f"guest:{guest}"
    assert CompletionJob.objects.get(pk=signed_in).client_key == f"user:{user.pk}"


def test_a_full_queue_answers_503_and_writes_nothing(catalogue, limits_on):
    set_limits, _ = limits_on
    set_limits(completion="100/min", completion_queue_max=3, completion_queue_retry_after=30)
    for i in range(3):
        CompletionJob.objects.create(format="modern", client_key=f"ip:192.0.2.{i}")
    http = DjangoClient()
    response = post(http, "198.51.100.8")
    assert response.status_code == 503
    error = response.json()["errors"][0]
    assert error["limit"] == "completion_queue" and int(response["Retry-After"]) == error["retry_after"] == 30
    assert "3 deck completions are waiting" in error["message"] and "Nothing was queued" in error["message"]
    assert "try again in 30 s" in error["message"]  # no job finished lately: the longest wait
    page = http.post("/decks/complete/", {"text": "4 Lightning Bolt\n4 Goblin Guide", "format": "modern"},
                     REMOTE_ADDR="198.51.100.8")
    assert page.status_code == 503 and page["Retry-After"] == "30"
    assert "4 Goblin Guide" in page.content.decode() and "Nothing was queued" in page.content.decode()
    assert CompletionJob.objects.count() == 3
    CompletionJob.objects.filter(client_key="ip:192.0.2.0").update(status="done")
    assert post(http, "198.51.100.8").status_code == 202  # room again


# --- end to end: Daphne (and a real worker on the services stack) -------------------------------------------------

def _http(url: str, payload: dict | None, forwarded: str) -> tuple[int, dict, dict]:
    """GET (no payload) or POST ``url`` as the address ``forwarded``: (status, JSON body, headers)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.netloc, timeout=120)
    try:
        conn.request("GET" if payload is None else "POST", parts.path, body=None if payload is None else json.dumps(payload),
                     headers={"Content-Type": "application/json", "X-Forwarded-For": forwarded})
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read() or b"{}"), dict(answer.getheaders())
    finally:
        conn.close()


def _complete_over_http(base: str, forwarded: str, timeout: float = 120) -> tuple[float, dict]:
    start = time.perf_counter()
    status, job, _ = _http(f"{base}/api/decks/complete", REQUEST, forwarded)
    assert status == 202, job
    while job["status"] not in ("done", "failed"):
        assert time.perf_counter() - start < timeout, job
        time.sleep(0.05)
        job = _http(job["url"], None, forwarded)[1]
    return time.perf_counter() - start, job


@pytest.mark.timeout(600)
@pytest.mark.django_db(transaction=True)
def test_a_flood_over_http_leaves_room_for_another_client(tiny_corpus, monkeypatch, request):
    """Client A floods 100 requests from 8 threads through Daphne; B's completion then takes about as long as
    alone. Each client is its own address through X-Forwarded-For (forwarded_hops=1), fresh for every run, so a
    services-stack Redis holding an earlier run's counters changes nothing."""
    for name, value in {"ENABLED": "1", "COMPLETION": "5/min", "COMPLETION_CONCURRENT": "2",
                        "COMPLETION_QUEUE_MAX": "50", "FORWARDED_HOPS": "1"}.items():
        monkeypatch.setenv(f"MTG_LIMIT_{name}", value)
    base = request.getfixturevalue("daphne_server")
    from django.conf import settings

    if settings.STACK == "services":
        request.getfixturevalue("celery_worker_process")
    rng = random.SystemRandom()
    a, b = (f"10.{rng.randrange(256)}.{rng.randrange(256)}.{n}" for n in (1, 2))
    alone, job = _complete_over_http(base, b)
    assert job["status"] == "done", job
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: _http(f"{base}/api/decks/complete", REQUEST, a), range(100)))
    statuses = [status for status, _, _ in answers]
    assert 1 <= statuses.count(202) <= 5 and statuses.count(429) == 100 - statuses.count(202), statuses
    assert all(int(headers["Retry-After"]) >= 1 for status, _, headers in answers if status == 429)
    after, job = _complete_over_http(base, b)
    assert job["status"] == "done", job
    assert after < 3 * alone + 2.0, (alone, after)


def test_a_full_queue_tells_when_the_workers_pace_makes_room(catalogue, limits_on):
    set_limits, _ = limits_on
    set_limits(completion="100/min", completion_queue_max=2, completion_queue_retry_after=30)
    now = timezone.now()
    for i in range(20):  # 20 jobs finished over the last 10 s: two a second
        CompletionJob.objects.create(format="modern", status="done", finished=now - timedelta(seconds=i / 2))
    for i in range(4):
        CompletionJob.objects.create(format="modern", client_key=f"ip:192.0.2.{i}")
    response = post(DjangoClient(), "198.51.100.9")
    assert response.status_code == 503
    assert int(response["Retry-After"]) == response.json()["errors"][0]["retry_after"] == 2  # 3 jobs at 2 a second
