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


def run_job(job_id) -> CompletionJob:
    job = CompletionJob.objects.get(pk=job_id)
    if job.status in ("done", "failed"):
        return job  # a redelivered task does not run twice
    job.status, job.started, job.progress, job.message = "running", timezone.now(), 0.0, "Loading the model"
    job.save(update_fields=["status", "started", "progress", "message"])
    publish_job(job)
    last = [0.0]

    def progress(fraction: float, message: str = ""):
        now = time.monotonic()
        if now - last[0] < 0.25 and fraction < 1.0:
            return
        last[0] = now
        CompletionJob.objects.filter(pk=job.pk).update(progress=min(fraction, 0.99), message=message[:200])
        job.progress, job.message = min(fraction, 0.99), message[:200]
        publish_job(job)

    try:
        from ml.diffusion.complete import CompletionError
        from ml.registry import NoActiveModel, active_version

        completer = get_completer()
        completion = completer.complete(
            [tuple(x) for x in job.known_main], [tuple(x) for x in job.known_side], job.format, seed=job.seed,
            sampler=job.sampler, generate_side=job.generate_side, progress=progress)
    except (CompletionError, NoActiveModel) as exc:
        job.status, job.error, job.finished = "failed", str(exc), timezone.now()
        job.save(update_fields=["status", "error", "finished"])
        publish_job(job)
        return job

    with transaction.atomic():
        parsed = ParsedDeck([Entry(n, c) for n, c in completion.main], [Entry(n, c) for n, c in completion.side])
        deck = save_parsed_deck(parsed, job.format, f"Completed {job.format.title()} deck", owner=job.owner,
                                source="completion")
        job.deck = deck
        job.model_version = active_version("deck_diffusion")
        job.result = {
            "main": [list(x) for x in completion.main], "side": [list(x) for x in completion.side],
            "generated_main": [list(x) for x in completion.generated_main],
            "generated_side": [list(x) for x in completion.generated_side],
            "iterations": completion.iterations, "seconds": round(completion.seconds, 3),
        }
        job.status, job.progress, job.message, job.finished = "done", 1.0, "Done", timezone.now()
        job.save()
    publish_job(job)
    return job


def user_counts(job: CompletionJob) -> dict[tuple[str, str], int]:
    """(board, name) -> copies the user gave, to mark them on the result page."""
    out = {("main", n): c for n, c in job.known_main}
    out.update({("side", n): c for n, c in job.known_side})
    return out

