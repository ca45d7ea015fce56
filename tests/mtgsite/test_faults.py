"""PostgreSQL ends every session of the site (``pg_terminate_backend``, what a database restart does) while a
request is half-way through its transaction, through a real Daphne (services stack, a private Redis:
tests/faults.py): the request is answered 503 with Retry-After and no traceback, nothing of it is left in the
database, the same request then succeeds, and the site goes on answering. The pod's and the jobs' faults are
beside their apps (tests/*/test_faults.py); the sweep's rules are tested without processes at the end."""
from __future__ import annotations

import datetime as dt
import json
import threading
import urllib.error
import urllib.request

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from decks.models import CompletionJob, Deck, DeckCard
from tests.faults import daphne, record, wait_until

pytestmark = pytest.mark.faults  # in `make test` (services stack) and counted by bench/faults.py

def pg_params() -> dict:
    s = connection.settings_dict
    return {"host": s["HOST"], "port": s["PORT"], "user": s["USER"], "password": s["PASSWORD"], "dbname": s["NAME"]}


def harness_pid() -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        return cur.fetchone()[0]


def request(url: str, payload: dict | None = None) -> tuple[int, dict, str]:
    """(status, headers, body) of a GET, or of a POST of ``payload`` as JSON."""
    data = None if payload is None else json.dumps(payload).encode()
    req = urllib.request.Request(url, data=data, method="GET" if payload is None else "POST",
                                 headers={"Content-Type": "application/json", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def terminated_mid_request(url: str, payload: dict, table: str) -> tuple[tuple, int]:
    """Send the request while ``table`` is locked, so that it waits half-way through its transaction (after
    its first writes, at its write to ``table``); end its session, then every other session of the database
    but the harness's (the lock's holder among them: ended first, it would let the request go on for a moment).
    Returns (the response, how many sessions ended)."""
    spare = harness_pid()
    holder = psycopg.connect(**pg_params())
    holder.execute(f"LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE")  # blocks INSERT, until it ends
    out: list = []
    sender = threading.Thread(target=lambda: out.append(request(url, payload)))
    sender.start()
    waiting = "FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
    try:
        with psycopg.connect(**pg_params(), autocommit=True) as admin:
            wait_until(lambda: admin.execute(f"SELECT count(*) {waiting}").fetchone()[0], 30,
                       "the request waiting on the lock")
            ended = admin.execute(f"SELECT count(pg_terminate_backend(pid)) {waiting}").fetchone()[0]
            wait_until(lambda: not admin.execute(f"SELECT count(*) {waiting}").fetchone()[0], 30, "the request's end")
            ended += admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND pid <> %s", [spare]).fetchone()[0]
        sender.join(timeout=60)
    finally:
        holder.close()
    return out[0], ended


def assert_clean_503(response: tuple) -> dict:
    status, headers, body = response
    assert status == 503, (status, body[:500])
    assert headers.get("Retry-After") == "5"
    assert "Traceback" not in body and "psycopg" not in body and "terminating" not in body
    return json.loads(body)


@pytest.fixture
def site(catalogue, private_services, served, tmp_path):
    web = served(daphne(tmp_path))
    return f"http://127.0.0.1:{web.port}"


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(180)
def test_a_deck_import_cut_off_by_postgresql_is_a_clean_503_and_leaves_nothing(site):
    payload = {"text": "4 Lightning Bolt\n4 Goblin Guide\n52 Mountain", "name": "Cut off", "format": "modern"}
    response, ended = terminated_mid_request(f"{site}/api/decks/", payload, "decks_deckcard")
    body = assert_clean_503(response)
    half = Deck.objects.filter(name="Cut off").count()  # the deck row was written before its cards: rolled back
    assert "database connection" in body["errors"][0]["message"] and ended >= 2 and half == 0

    status, _, text = request(f"{site}/api/decks/", payload)  # the same request again, at once
    assert status == 201, text
    deck = Deck.objects.get(name="Cut off")
    assert sum(DeckCard.objects.filter(deck=deck, board="main").values_list("count", flat=True)) == deck.main_count == 60
    assert request(f"{site}/api/decks/{deck.pk}/")[0] == 200 and request(f"{site}/")[0] == 200
    orphans = Deck.objects.filter(main_count__gt=0, cards__isnull=True).count()
    record("HTTP: PostgreSQL sessions terminated mid deck import", requests=2, clean_errors=1, succeeded_on_retry=1,
           half_written_rows=half + orphans, sessions_terminated=ended)
    assert orphans == 0


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(180)
def test_a_completion_request_cut_off_by_postgresql_is_a_clean_503_and_queues_nothing(site):
    payload = {"format": "modern", "text": "4 Lightning Bolt\n4 Goblin Guide", "seed": 3}
    response, ended = terminated_mid_request(f"{site}/api/decks/complete", payload, "decks_completionjob")
    assert_clean_503(response)
    assert not CompletionJob.objects.exists()
    status, _, text = request(f"{site}/api/decks/complete", payload)
    assert status == 202, text
    job = CompletionJob.objects.get()
    assert str(job.pk) == json.loads(text)["id"] and job.status == "queued"
    assert request(f"{site}/api/decks/complete/{job.pk}")[0] == 200
    record("HTTP: PostgreSQL sessions terminated mid completion request", requests=2, clean_errors=1,
           succeeded_on_retry=1, half_written_rows=CompletionJob.objects.count() - 1, sessions_terminated=ended)


# --- the sweep's rules, without processes (both stacks) ---------------------------------------------------------

def stale_by(settings) -> dt.datetime:
    return timezone.now() - dt.timedelta(seconds=settings.MTG_JOB_STALE_SECONDS + 5)


@pytest.mark.django_db
def test_the_sweep_queues_a_dead_workers_completion_again_then_fails_it_with_the_reason(settings, monkeypatch):
    from decks import tasks
    from decks.completion.service import recover_stale_jobs

    old = stale_by(settings)
    fields = dict(format="modern", known_main=[["Lightning Bolt", 4]], status="running", started=old, heartbeat=old)
    again = CompletionJob.objects.create(attempts=1, **fields)
    last = CompletionJob.objects.create(attempts=settings.MTG_JOB_MAX_ATTEMPTS, **fields)
    alive = CompletionJob.objects.create(attempts=1, **{**fields, "heartbeat": timezone.now()})
    legacy = CompletionJob.objects.create(attempts=1, **{**fields, "heartbeat": None})  # claimed before heartbeats
    queued = []
    monkeypatch.setattr(tasks, "enqueue_completion", lambda job: queued.append(job.pk))
    assert tasks.recover_completions() == 2 and sorted(queued) == sorted([again.pk, legacy.pk])
    rows = {j.pk: j for j in CompletionJob.objects.all()}
    assert rows[again.pk].status == "queued" and "worker running it stopped" in rows[again.pk].message
    assert rows[last.pk].status == "failed" and rows[last.pk].finished is not None
    assert f"tried {settings.MTG_JOB_MAX_ATTEMPTS} times" in rows[last.pk].error
    assert rows[alive.pk].status == "running"  # its worker still stamps it
    assert recover_stale_jobs() == []  # nothing twice


@pytest.mark.django_db
def test_the_sweep_fails_a_dead_workers_training_run_with_the_reason(settings):
    from ml.models import TrainingRun
    from ml.tasks import recover_runs

    old = stale_by(settings)
    dead = TrainingRun.objects.create(kind="draft_bot", status="running", started=old, heartbeat=old, progress=42.0)
    alive = TrainingRun.objects.create(kind="draft_bot", status="running", started=old, heartbeat=timezone.now())
    assert recover_runs() == 1
    dead.refresh_from_db()
    assert dead.status == "failed" and dead.finished and "stopped (killed or lost) at 42%" in dead.error
    assert TrainingRun.objects.get(pk=alive.pk).status == "running"


@pytest.mark.django_db
def test_the_sweep_plays_a_dead_workers_gauntlet_game_again_then_counts_it_as_an_error(settings, monkeypatch):
    from gameplay.gauntlet import tasks
    from gameplay.gauntlet.models import GauntletGame, GauntletRun

    old = stale_by(settings)
    decks = [{"name": "a", "source": "", "cards": [["Mountain", 40]]}, {"name": "b", "source": "", "cards": [["Island", 40]]}]
    run = GauntletRun.objects.create(decks=decks, games_per_pair=2, total=2, runner="celery", status="running")
    local = GauntletRun.objects.create(decks=decks, games_per_pair=1, total=1, runner="local", status="running")
    seat = dict(deck_a=0, deck_b=1, round=0, seat0_deck=0, seat1_deck=1, seed=1, status="running", started=old,
                heartbeat=old)
    again = GauntletGame.objects.create(run=run, index=0, attempts=1, **seat)
    last = GauntletGame.objects.create(run=run, index=1, attempts=settings.MTG_JOB_MAX_ATTEMPTS, **seat)
    GauntletGame.objects.create(run=local, index=0, attempts=1, **seat)  # the command's: `gauntlet --resume`
    sent = []
    monkeypatch.setattr(tasks, "group", lambda sigs: type("G", (), {"apply_async": lambda self: sent.extend(
        s.args for s in sigs)})())
    assert tasks.recover_games() == 1 and sent == [(run.pk, 0)]
    again.refresh_from_db()
    last.refresh_from_db()
    run.refresh_from_db()
    assert again.status == "pending" and last.status == "error" and "worker running this game stopped" in last.error
    assert (run.done, run.errors) == (1, 1)
    assert GauntletGame.objects.get(run=local).status == "running"
