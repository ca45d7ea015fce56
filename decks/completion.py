"""Deck completion shell: validate a request, queue a job, run it with the active models, store the result.

The model code (ml.diffusion.complete.Completer) never touches the database; this module builds it
from the active registry versions and the catalogue, and writes what it returns.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.utils import timezone

from decks.core.decklist import Entry, ParsedDeck, parse_decklist
from decks.core.rules import FORMATS, normalize_format, validate_deck
from decks.models import CompletionJob
from decks.services import card_index, card_rules, save_parsed_deck

MAX_TEXT = 20_000
_completer_lock = threading.Lock()
_completer: tuple[tuple, object] | None = None


class CompletionRequestError(ValueError):
    """The request cannot be completed; ``errors`` are user-facing messages (per line when parsing failed)."""

    def __init__(self, errors: list[dict]):
        self.errors = errors
        super().__init__("; ".join(e["message"] for e in errors))


@dataclass
class CompletionRequest:
    format: str
    main: list[tuple[str, int]]
    side: list[tuple[str, int]]
    generate_side: bool = True
    sampler: str = "fast"
    seed: int = 0


def job_group(job_id) -> str:
    return f"job-{job_id}"


def _error(message: str, line: int | None = None, text: str = "", suggestions=()) -> dict:
    return {"line": line, "text": text, "message": message, "suggestions": list(suggestions)}


def parse_request(text: str | None = None, main=None, side=None, fmt: str = "", generate_side: bool = True,
                  sampler: str = "fast", seed: int | None = 0) -> CompletionRequest:
    """Text (any decklist layout) or [[name, count], ...] lists -> a validated request, or CompletionRequestError."""
    format_key = normalize_format(fmt or "")
    errors: list[dict] = []
    if not format_key:
        errors.append(_error(f"Choose a format: one of {', '.join(FORMATS)}." if not fmt else
                             f"Unknown format {str(fmt)[:40]!r}; choose one of {', '.join(FORMATS)}."))
    if sampler not in ("fast", "full"):
        errors.append(_error("Sampler must be 'fast' or 'full'."))
    try:
        seed = int(seed or 0)
        if not 0 <= seed < 2**31:
            raise ValueError
    except (TypeError, ValueError):
        errors.append(_error("Seed must be a whole number from 0 to 2147483647."))
        seed = 0

    index = card_index()
    if text is not None:
        if not str(text).strip():
            errors.append(_error("Paste at least one card."))
            raise CompletionRequestError(errors)
        if len(text) > MAX_TEXT:
            errors.append(_error(f"The list is {len(text)} characters long; the limit is {MAX_TEXT}."))
            raise CompletionRequestError(errors)
        result = parse_decklist(text, index)
        errors += [_error(e.message, e.line_no, e.line, e.suggestions) for e in result.errors]
        parsed = result.deck or ParsedDeck([], [])
    else:
        entries = {}
        for board, rows in (("main", main or []), ("side", side or [])):
            out = []
            if not isinstance(rows, list):
                errors.append(_error(f"'{board}' must be a list of [name, count] pairs."))
                rows = []
            for row in rows:
                try:
                    name, count = row
                    count = int(count)
                    if not isinstance(name, str) or not 1 <= count <= 250:
                        raise ValueError
                except (TypeError, ValueError):
                    errors.append(_error(f"Bad {board} entry {str(row)[:80]}: expected [name, count] with count 1-250."))
                    continue
                canonical = index.resolve(name)
                if canonical is None:
                    errors.append(_error(f'Unknown card "{name[:100]}"', text=name[:200],
                                         suggestions=index.suggest(name)))
                    continue
                out.append(Entry(canonical, count))
            entries[board] = out
        parsed = ParsedDeck(entries.get("main", []), entries.get("side", []))
    if errors:
        raise CompletionRequestError(errors)

    if parsed.main_count == 0:
        errors.append(_error("Give at least one main-deck card to build around."))
    if parsed.main_count > 60:
        errors.append(_error(f"Main deck has {parsed.main_count} cards; completion fills up to 60, so give at most 60."))
    rules = card_rules(parsed.counts().keys())
    for v in validate_deck(parsed, rules, format_key, min_main=0, max_side=15):
        if v.code == "unknown_legality":
            errors.append(_error(f"{v.card} has not been seen legal in {format_key.title()}; "
                                 f"the completed deck must be legal there.", text=v.card or ""))
        else:
            errors.append(_error(v.message, text=v.card or ""))
    if errors:
        raise CompletionRequestError(errors)

    def merged(entries):
        totals: dict[str, int] = {}
        for e in entries:
            totals[e.name] = totals.get(e.name, 0) + e.count
        return sorted(totals.items())

    return CompletionRequest(format_key, merged(parsed.main), merged(parsed.side), bool(generate_side), sampler, seed)


def create_job(request: CompletionRequest, owner=None) -> CompletionJob:
    """Store the job and queue the task (eager in the embedded stack)."""
    from decks.tasks import complete_deck_task

    job = CompletionJob.objects.create(
        format=request.format, known_main=[list(x) for x in request.main], known_side=[list(x) for x in request.side],
        generate_side=request.generate_side, sampler=request.sampler, seed=request.seed,
        owner=owner if getattr(owner, "is_authenticated", False) else None, message="Waiting for a worker")
    def enqueue():
        from kombu.exceptions import OperationalError

        try:
            complete_deck_task.delay(str(job.id))
        except OperationalError as exc:  # broker down: the job says so instead of a 500
            CompletionJob.objects.filter(pk=job.pk).update(
                status="failed", error=f"The job could not be queued (task broker unavailable: {exc}). Try again.")

    transaction.on_commit(enqueue)
    return job


# --- running -----------------------------------------------------------------------------------

def get_completer():
    """The Completer for the active embeddings + diffusion versions, built once per process."""
    global _completer
    from ml.registry import active_version

    key = (active_version("card_embeddings").pk, active_version("deck_diffusion").pk)
    with _completer_lock:
        if _completer is not None and _completer[0] == key:
            return _completer[1]
    from ml.completion_service import build_completer

    completer = build_completer()
    with _completer_lock:
        _completer = (key, completer)
    return completer


def publish_job(job: CompletionJob) -> None:
    """Push the job's state to its websocket group (ws/jobs/<id>/)."""
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(job_group(job.pk), {"type": "job.update", "job": job_payload(job)})


def job_payload(job: CompletionJob) -> dict:
    return {
        "id": str(job.pk), "status": job.status, "progress": round(job.progress, 3), "message": job.message,
        "format": job.format, "error": job.error or None, "deck": job.deck_id, "result": job.result,
    }


def claim_jobs(job_id, limit: int | None = None) -> list[CompletionJob]:
    """Claim the job ``job_id`` and up to ``limit - 1`` other queued jobs (oldest first) for one batch.

    Each claimed row is flipped from queued to running by a conditional UPDATE, so a job is claimed by exactly one
    task even when several workers race; on PostgreSQL the candidates are also read with
    ``SELECT ... FOR UPDATE SKIP LOCKED`` inside the transaction, so concurrent claimers never wait on each other's rows.
    Returns ``[]`` when ``job_id`` is no longer queued (taken by another batch, finished, or locked by a claimer that
    is taking it). A job left running longer than ``COMPLETION_STALE_SECONDS`` (a worker died mid-batch; the broker
    redelivers its task) can be claimed again by its own task.
    """
    from datetime import timedelta

    from django.conf import settings
    from django.db import connection
    from django.db.models import Q

    limit = max(1, int(limit or getattr(settings, "COMPLETION_BATCH_SIZE", 8)))
    now = timezone.now()
    stale = now - timedelta(seconds=getattr(settings, "COMPLETION_STALE_SECONDS", 900))
    own_cond = Q(pk=job_id) & (Q(status="queued") | Q(status="running", started__lt=stale))
    fields = dict(status="running", started=now, progress=0.0, message="Loading the model")

    def take(job, cond) -> bool:
        if CompletionJob.objects.filter(cond).update(**fields) != 1:
            return False
        for k, v in fields.items():
            setattr(job, k, v)
        return True

    if not connection.features.has_select_for_update_skip_locked:
        # SQLite: no row locks, and a read-then-write transaction fails at once ("database is locked") when another
        # connection wrote in between; each conditional UPDATE on its own (autocommit, busy timeout) is the claim.
        own = CompletionJob.objects.filter(pk=job_id).first()
        if own is None or not take(own, own_cond):
            return []
        others = CompletionJob.objects.filter(status="queued").exclude(pk=own.pk).order_by("created")[:limit - 1]
        return [own] + [j for j in (others if limit > 1 else []) if take(j, Q(pk=j.pk, status="queued"))]
    with transaction.atomic():
        rows = CompletionJob.objects.select_for_update(skip_locked=True)
        own = rows.filter(own_cond).first()
        if own is None or not take(own, Q(pk=own.pk)):
            return []  # taken, finished, or locked by a claimer that is taking it
        others = list(rows.filter(status="queued").exclude(pk=own.pk).order_by("created")[:limit - 1]) if limit > 1 else []
        return [own] + [j for j in others if take(j, Q(pk=j.pk, status="queued"))]


def batch_key(job: CompletionJob) -> tuple:
    """Jobs with the same key run in one ``Completer.complete_many`` call (format and seed are per request)."""
    return (job.sampler, bool(job.generate_side))


def _fail(job: CompletionJob, error: str) -> None:
    job.status, job.error, job.finished = "failed", error, timezone.now()
    job.save(update_fields=["status", "error", "finished"])
    publish_job(job)


def _finish(job: CompletionJob, completion, version) -> None:
    with transaction.atomic():
        parsed = ParsedDeck([Entry(n, c) for n, c in completion.main], [Entry(n, c) for n, c in completion.side])
        deck = save_parsed_deck(parsed, job.format, f"Completed {job.format.title()} deck", owner=job.owner,
                                source="completion")
        job.deck = deck
        job.model_version = version
        job.result = {
            "main": [list(x) for x in completion.main], "side": [list(x) for x in completion.side],
            "generated_main": [list(x) for x in completion.generated_main],
            "generated_side": [list(x) for x in completion.generated_side],
            "iterations": completion.iterations, "seconds": round(completion.seconds, 3),
        }
        job.status, job.progress, job.message, job.finished = "done", 1.0, "Done", timezone.now()
        job.save()
    publish_job(job)


INTERNAL_ERROR = "Internal error while completing the deck; nothing was saved."


def _complete_group(completer, jobs: list[CompletionJob]) -> list:
    """One batch through ``complete_many``; progress is fanned out to every job's row and websocket group.
    If the batch itself crashes (not a per-request CompletionError), each job is retried alone so one poison job
    cannot fail the others; a job that crashes alone gets an internal-error outcome (an Exception)."""
    import logging

    def reporter(group: list[CompletionJob]):
        last = [0.0]
        ids = [job.pk for job in group]
        suffix = f" (batch of {len(group)})" if len(group) > 1 else ""

        def progress(fraction: float, message: str = ""):
            now = time.monotonic()
            if now - last[0] < 0.25 and fraction < 1.0:
                return
            last[0] = now
            value, text = min(fraction, 0.99), (message + suffix)[:200]
            CompletionJob.objects.filter(pk__in=ids, status="running").update(progress=value, message=text)
            for job in group:
                job.progress, job.message = value, text
                publish_job(job)
        return progress

    sampler, generate_side = batch_key(jobs[0])

    def run(group, report):
        return completer.complete_many(
            [(j.known_main or [], j.known_side or [], j.format) for j in group],  # bad rows get their own CompletionError
            seeds=[j.seed for j in group], sampler=sampler, generate_side=generate_side, progress=report)

    try:
        return run(jobs, reporter(jobs))
    except Exception:
        if len(jobs) == 1:
            logging.getLogger(__name__).exception("completion job %s crashed", jobs[0].pk)
            return [RuntimeError(INTERNAL_ERROR)]
        logging.getLogger(__name__).exception("completion batch %s crashed; running its jobs one by one",
                                              [job.pk for job in jobs])
    outcomes = []
    for job in jobs:
        try:
            outcomes += run([job], reporter([job]))
        except Exception:
            logging.getLogger(__name__).exception("completion job %s crashed", job.pk)
            outcomes.append(RuntimeError(INTERNAL_ERROR))
    return outcomes


def run_batch(job_id, limit: int | None = None) -> tuple[CompletionJob | None, list[CompletionJob]]:
    """Claim ``job_id`` and other queued jobs (``claim_jobs``), complete them in batches of compatible settings on
    the model's device, and store each job's result or its own error. Returns (the job ``job_id``, the jobs this
    call ran); the first is the row as it stands when another batch already took it (nothing is run twice)."""
    claimed = claim_jobs(job_id, limit)
    if not claimed:
        return CompletionJob.objects.filter(pk=job_id).first(), []
    try:
        _run_claimed(claimed)
    except Exception:  # e.g. the channel layer is down: no claimed job is left "running"
        CompletionJob.objects.filter(pk__in=[j.pk for j in claimed], status="running").update(
            status="failed", error=INTERNAL_ERROR, finished=timezone.now())
        raise
    return claimed[0], claimed


def _run_claimed(claimed: list[CompletionJob]) -> None:
    import logging

    for job in claimed:
        publish_job(job)
    from ml.registry import NoActiveModel, active_version

    try:
        completer = get_completer()
        version = active_version("deck_diffusion")
    except Exception as exc:  # NoActiveModel or a broken model: every claimed job says so
        if not isinstance(exc, NoActiveModel):
            logging.getLogger(__name__).exception("could not load the completion model")
        for job in claimed:
            _fail(job, str(exc) if isinstance(exc, NoActiveModel) else INTERNAL_ERROR)
        return
    from ml.diffusion.complete import CompletionError

    groups: dict[tuple, list[CompletionJob]] = {}
    for job in claimed:  # the task's own job first, so its group runs first
        groups.setdefault(batch_key(job), []).append(job)
    for jobs in groups.values():
        outcomes = _complete_group(completer, jobs)
        for job, outcome in zip(jobs, outcomes):
            try:
                if isinstance(outcome, CompletionError):
                    _fail(job, str(outcome))
                elif isinstance(outcome, Exception):
                    _fail(job, INTERNAL_ERROR)
                else:
                    _finish(job, outcome, version)
            except Exception:
                logging.getLogger(__name__).exception("storing completion job %s failed", job.pk)
                CompletionJob.objects.filter(pk=job.pk).update(status="failed", error=INTERNAL_ERROR,
                                                              finished=timezone.now())
                job.refresh_from_db()
                publish_job(job)


def run_job(job_id) -> CompletionJob:
    """Run ``job_id`` (batched with other queued jobs, see ``run_batch``); returns its row."""
    job, _ = run_batch(job_id)
    if job is None:
        raise CompletionJob.DoesNotExist(job_id)
    return job


def user_counts(job: CompletionJob) -> dict[tuple[str, str], int]:
    """(board, name) -> copies the user gave, to mark them on the result page."""
    out = {("main", n): c for n, c in job.known_main}
    out.update({("side", n): c for n, c in job.known_side})
    return out

