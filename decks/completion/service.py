"""Deck completion shell: validate a request, queue a job, run it with the active models, store the result.

Two models complete decks: ``masked`` (the default: retrieval of the nearest tournament decks + the masked
diffusion model, ``decks.completion.models.masked.sampler.MaskedCompleter``; kind ``deck_masked``, the pure neighbour vote
until a version is trained or shipped) and ``manamorphosis`` (the continuous diffusion,
``decks.completion.models.manamorphosis.complete.Completer``; kind ``deck_diffusion``). The model code never touches the database;
``decks.completion.completers`` builds it from the active registry versions, the catalogue and the corpus, and this
module writes what it returns. Queueing a job is ``decks.tasks.enqueue_completion``'s, above this module.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Min, Q
from django.urls import reverse
from django.utils import timezone

from decks.completion.models.common import CompletionError
from decks.core.decklist import Entry, ParsedDeck, parse_decklist
from decks.core.rules import FORMATS, normalize_format, validate_deck
from decks.models import CompletionJob, Deck, DeckAppearance
from decks.services import card_index, card_rules, save_parsed_deck
from ml.registry import NoActiveModel, active_version
from plumbing import limits, live
from plumbing.recovery import heartbeat, max_attempts, recover_stale, stale_q

log = logging.getLogger(__name__)

MAX_TEXT = 20_000
MAX_COLLECTION_TEXT = 500_000   # an Arena / MTGO collection export of every card fits
MAX_COLLECTION_LINES = 25_000
MODELS = {"masked": "Masked diffusion + nearest tournament decks (default)",
          "manamorphosis": "Manamorphosis (continuous diffusion)"}
DEFAULT_MODEL = "masked"
SOURCES_SHOWN = 5
_completer_lock = threading.Lock()
_completers: dict[str, tuple[tuple, object]] = {}  # model -> (active versions, completer)


def reset_completers() -> None:
    """Forget the built completers (the next job builds them from the active versions again)."""
    with _completer_lock:
        _completers.clear()


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
    model: str = DEFAULT_MODEL
    collection: list[tuple[str, int]] | None = None  # complete from these cards only (basic lands: any number)


def job_group(job_id) -> str:
    return f"job-{job_id}"


def _error(message: str, line: int | None = None, text: str = "", suggestions=()) -> dict:
    return {"line": line, "text": text, "message": message, "suggestions": list(suggestions)}


def name_count(row, most: int) -> tuple[str, int] | None:
    """A [name, count] pair with a whole count from 1 to ``most``, or None."""
    try:
        name, count = row
        count = int(count)
    except (TypeError, ValueError):
        return None
    return (name, count) if isinstance(name, str) and 1 <= count <= most else None


def parse_collection(collection, index) -> tuple[list[tuple[str, int]], list[dict]]:
    """A collection: text (an Arena or MTGO export, or ``N Name`` lines: the decklist parser; sections such as
    Sideboard are counted too) or [[name, count], ...] -> (copies per canonical name, errors). Each error names its
    line ("Collection, line 3: ..."); nothing is used when there is one."""
    errors: list[dict] = []
    totals: dict[str, int] = {}
    if isinstance(collection, (bytes, bytearray)):
        try:
            collection = bytes(collection).decode("utf-8-sig")
        except UnicodeDecodeError:
            return [], [_error("The collection file is not UTF-8 text: export it as text (Arena, MTGO .txt or "
                               "'N Name' lines).")]
    if isinstance(collection, str):
        if "\x00" in collection:
            return [], [_error("The collection is not text (a binary file?): export it as text.")]
        if len(collection) > MAX_COLLECTION_TEXT:
            return [], [_error(f"The collection is {len(collection)} characters long; the limit is "
                               f"{MAX_COLLECTION_TEXT}.")]
        result = parse_decklist(collection, index, max_lines=MAX_COLLECTION_LINES)
        for e in result.errors:
            where = f"Collection, line {e.line_no}: " if e.line_no else "Collection: "
            hint = f" (did you mean {' or '.join(e.suggestions[:3])}?)" if e.suggestions else ""
            errors.append(_error(where + e.message + hint, text=e.line[:200]))
        entries = [(en.name, en.count) for en in ((result.deck.main + result.deck.side) if result.deck else [])]
    elif isinstance(collection, list):
        entries = []
        for i, row in enumerate(collection, 1):
            pair = name_count(row, 9999)
            if pair is None:
                errors.append(_error(f"Collection, entry {i}: expected [name, count] with count 1-9999, got "
                                     f"{str(row)[:80]}."))
                continue
            name, count = pair
            canonical = index.resolve(name)
            if canonical is None:
                hint = " or ".join(index.suggest(name))
                errors.append(_error(f'Collection, entry {i}: unknown card "{name[:100]}"'
                                     + (f" (did you mean {hint}?)" if hint else ""), text=name[:200]))
                continue
            entries.append((canonical, count))
    else:
        return [], [_error("The collection must be text or a list of [name, count] pairs.")]
    for name, count in entries:
        totals[name] = totals.get(name, 0) + count
    if not errors and not totals:
        errors.append(_error("The collection has no cards."))
    return sorted(totals.items()), errors


def parse_request(text: str | None = None, main=None, side=None, fmt: str = "", generate_side: bool = True,
                  sampler: str = "fast", seed: int | None = 0, model: str | None = DEFAULT_MODEL,
                  collection=None) -> CompletionRequest:
    """Text (any decklist layout) or [[name, count], ...] lists -> a validated request, or CompletionRequestError.

    With the masked model a card whose legality in the format is unknown (not seen in a tournament deck of it)
    is kept and the result carries a warning; the manamorphosis model refuses it, as it always has.
    ``collection`` (text, uploaded bytes or [[name, count], ...]; masked model only): complete from these cards
    only, within their counts (basic lands in any number); errors name the collection's line."""
    format_key = normalize_format(fmt or "")
    errors: list[dict] = []
    model = DEFAULT_MODEL if model is None or model == "" else model
    if not isinstance(model, str) or model not in MODELS:
        errors.append(_error(f"Unknown model {str(model)[:40]!r}; choose one of {', '.join(MODELS)}."))
        model = DEFAULT_MODEL
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
                pair = name_count(row, 250)
                if pair is None:
                    errors.append(_error(f"Bad {board} entry {str(row)[:80]}: expected [name, count] with count 1-250."))
                    continue
                name, count = pair
                canonical = index.resolve(name)
                if canonical is None:
                    errors.append(_error(f'Unknown card "{name[:100]}"', text=name[:200],
                                         suggestions=index.suggest(name)))
                    continue
                out.append(Entry(canonical, count))
            entries[board] = out
        parsed = ParsedDeck(entries.get("main", []), entries.get("side", []))
    owned = None
    if collection is not None and collection != "" and collection != []:
        if model != "masked":
            errors.append(_error("Completing from a collection needs the masked model."))
        else:
            owned, problems = parse_collection(collection, index)
            errors += problems
    if errors:
        raise CompletionRequestError(errors)

    if parsed.main_count == 0:
        errors.append(_error("Give at least one main-deck card to build around."))
    if parsed.main_count > 60:
        errors.append(_error(f"Main deck has {parsed.main_count} cards; completion fills up to 60, so give at most 60."))
    rules = card_rules(parsed.counts().keys())
    for v in validate_deck(parsed, rules, format_key, min_main=0, max_side=15):
        if v.code == "unknown_legality" and model == "masked":
            continue  # kept; the completion says so (MaskedCompleter's warnings)
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

    return CompletionRequest(format_key, merged(parsed.main), merged(parsed.side), bool(generate_side), sampler, seed,
                             model, owned)


def create_job(request: CompletionRequest, owner=None, client: str = "", guest: str | None = None) -> CompletionJob:
    """Store the job, waiting for a worker (the caller queues it: ``decks.tasks.enqueue_completion``). ``client``
    is who asked (``plumbing.limits.Client.key``, as the limits counted it), whose unfinished jobs
    :data:`LIMIT_WORK` counts; ``guest`` the guest session whose "My decks" gets the deck (none for a user)."""
    return CompletionJob.objects.create(
        format=request.format, known_main=[list(x) for x in request.main], known_side=[list(x) for x in request.side],
        generate_side=request.generate_side, sampler=request.sampler, seed=request.seed, model=request.model,
        collection=[list(x) for x in request.collection] if request.collection is not None else None,
        owner=owner if getattr(owner, "is_authenticated", False) else None, client_key=client[:80],
        guest=(guest or "")[:40], message="Waiting for a worker")


def _recent():
    """Jobs young enough to be still wanted: one left queued or running longer than COMPLETION_STALE_SECONDS (its
    worker died) counts against nobody."""
    since = timezone.now() - timedelta(seconds=settings.COMPLETION_STALE_SECONDS)
    return CompletionJob.objects.filter(created__gte=since)


def unfinished_jobs(client: str) -> int:
    """The client's jobs waiting for a worker or running."""
    return _recent().filter(client_key=client, status__in=("queued", "running")).count() if client else 0


def waiting_jobs() -> int:
    """Everyone's jobs waiting for a worker: the inference queue's depth."""
    return _recent().filter(status="queued").count()


def seconds_for(jobs: int) -> float | None:
    """How long the workers take for ``jobs`` more completions at their pace of the last minute: the jobs finished
    since the first of them that finished within it (None: none did)."""
    now = timezone.now()
    recent = CompletionJob.objects.filter(finished__gte=now - timedelta(seconds=60)).aggregate(n=Count("pk"),
                                                                                              first=Min("finished"))
    if not recent["n"]:
        return None
    return jobs * max((now - recent["first"]).total_seconds(), 1.0) / recent["n"]


# How the abuse limits (plumbing.limits) count completions: the client's unfinished jobs, the queue and its pace.
LIMIT_WORK = limits.Work(unfinished=unfinished_jobs, waiting=waiting_jobs, pace=seconds_for)


# --- running -----------------------------------------------------------------------------------

def _active_pk(kind: str):
    version = active_version(kind, required=False)
    return version.pk if version is not None else None


def get_completer(model: str = DEFAULT_MODEL):
    """The completer of ``model`` ("masked" or "manamorphosis") for the active versions, built once per process
    and rebuilt when another version becomes active. Raises ``NoActiveModel`` when a version it needs is missing
    (the masked model needs only the card embeddings: without a deck_masked version it is the neighbour vote)."""
    if model not in MODELS:
        raise ValueError(f"unknown completion model {model!r}")
    if model == "masked":
        key = (active_version("card_embeddings").pk, _active_pk("deck_masked"))
    else:
        key = (active_version("card_embeddings").pk, active_version("deck_diffusion").pk)
    with _completer_lock:
        cached = _completers.get(model)
        if cached is not None and cached[0] == key:
            return cached[1]
    from decks.completion.completers import build_completer, build_masked_completer  # noqa: PLC0415 - torch: loaded by the first job

    completer = build_masked_completer() if model == "masked" else build_completer()
    with _completer_lock:
        _completers[model] = (key, completer)
    return completer


def completer_version(model: str, completer):
    """The ModelVersion a completion of ``model`` is recorded with (None for the neighbour vote)."""
    if model == "masked":
        return getattr(completer, "version", None)
    return active_version("deck_diffusion")


def publish_job(job: CompletionJob) -> None:
    """Push the job's state to its websocket group (ws/jobs/<id>/)."""
    live.send_to_group(job_group(job.pk), {"type": "job.update", "job": job_payload(job)})


def job_payload(job: CompletionJob) -> dict:
    return {
        "id": str(job.pk), "status": job.status, "progress": round(job.progress, 3), "message": job.message,
        "format": job.format, "model": job.model, "error": job.error or None, "deck": job.deck_id,
        "result": job.result,
    }


def claim_jobs(job_id, limit: int | None = None, worker: str = "") -> list[CompletionJob]:
    """Claim the job ``job_id`` and up to ``limit - 1`` other queued jobs (oldest first) for one batch.

    Each claimed row is flipped from queued to running by a conditional UPDATE, so a job is claimed by exactly one
    task even when several workers race; on PostgreSQL the candidates are also read with
    ``SELECT ... FOR UPDATE SKIP LOCKED`` inside the transaction, so concurrent claimers never wait on each other's rows.
    Returns ``[]`` when ``job_id`` is no longer queued (taken by another batch, finished, or locked by a claimer that
    is taking it). A job whose worker died mid-batch (no heartbeat for ``MTG_JOB_STALE_SECONDS``) can be claimed
    again by its own redelivered task while it has runs left (``MTG_JOB_MAX_ATTEMPTS``); otherwise the sweep
    (:func:`recover_stale_jobs`) queues it again or fails it with the reason. Each claim counts a run (``attempts``)
    and names the ``worker`` that took it.
    """
    limit = max(1, int(limit or settings.COMPLETION_BATCH_SIZE))
    now = timezone.now()
    own_cond = Q(pk=job_id) & (Q(status="queued") | (stale_q() & Q(attempts__lt=max_attempts())))
    fields = dict(status="running", started=now, heartbeat=now, progress=0.0, message="Loading the model", worker=worker)

    def take(job, cond) -> bool:
        if CompletionJob.objects.filter(cond).update(attempts=F("attempts") + 1, **fields) != 1:
            return False
        for k, v in fields.items():
            setattr(job, k, v)
        job.attempts += 1
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
    """Jobs with the same key run in one ``complete_many`` call of one model (format and seed are per request;
    only Manamorphosis has samplers)."""
    model = job.model or DEFAULT_MODEL
    return (model, job.sampler if model == "manamorphosis" else "", bool(job.generate_side))


def _fail(job: CompletionJob, error: str) -> None:
    job.status, job.error, job.finished = "failed", error, timezone.now()
    job.save(update_fields=["status", "error", "finished"])
    publish_job(job)


def source_decks(completer, completion, limit: int = SOURCES_SHOWN) -> list[dict]:
    """The tournament decks a masked completion drew on most: deck id, event, date, vote weight, similarity."""
    from decks.completion.completers import source_deck_ids  # noqa: PLC0415 - torch: loaded with the completer

    picked = source_deck_ids(completer, completion)[:limit]
    ids = [d for d, _, _ in picked]
    decks = {d.pk: d for d in Deck.objects.filter(pk__in=ids).only("id", "name", "first_seen", "format")}
    events: dict[int, tuple] = {}
    for deck_id, event, date in (DeckAppearance.objects.filter(deck_id__in=ids).exclude(event="")
                                 .order_by("date", "id").values_list("deck_id", "event", "date")):
        events.setdefault(deck_id, (event, date))
    out = []
    for deck_id, weight, similarity in picked:
        deck = decks.get(deck_id)
        if deck is None:  # deleted since the index was built
            continue
        event, date = events.get(deck_id, (deck.name or f"Tournament deck #{deck_id}", deck.first_seen))
        date = date or deck.first_seen
        out.append({"deck": deck_id, "event": event, "date": date.isoformat() if date else None,
                    "weight": round(weight, 4), "similarity": round(similarity, 4),
                    "url": reverse("deck-detail", args=[deck_id])})
    return out


def _finish(job: CompletionJob, completion, version, completer=None) -> None:
    extra = {}
    if (job.model or DEFAULT_MODEL) == "masked":
        extra = {"confidence": dict(completion.confidence), "sources": source_decks(completer, completion),
                 "warnings": list(completion.warnings),
                 # one completion per archetype when the given cards fit several (the first tab: this default answer)
                 "archetypes": [{**a.to_dict(), "sources": source_decks(completer, a, 3)}
                                for a in getattr(completion, "archetypes", None) or ()]}
        if job.collection is not None:  # decks.completion.models.collection: the deck that can be played, its open slots
            extra.update(missing=[list(x) for x in completion.missing],
                         missing_table=[list(x) for x in completion.missing_table],
                         not_owned=[list(x) for x in completion.not_owned], notes=list(completion.notes),
                         lands=completion.lands)
    with transaction.atomic():
        parsed = ParsedDeck([Entry(n, c) for n, c in completion.main], [Entry(n, c) for n, c in completion.side])
        deck = save_parsed_deck(parsed, job.format, f"Completed {job.format.title()} deck", owner=job.owner,
                                source="completion", guest=job.guest or None)  # unlisted: the asker's
        job.deck = deck
        job.model_version = version
        job.result = {
            "main": [list(x) for x in completion.main], "side": [list(x) for x in completion.side],
            "generated_main": [list(x) for x in completion.generated_main],
            "generated_side": [list(x) for x in completion.generated_side],
            "iterations": completion.iterations, "seconds": round(completion.seconds, 3), **extra,
        }
        job.status, job.progress, job.message, job.finished = "done", 1.0, "Done", timezone.now()
        job.save()
    publish_job(job)


INTERNAL_ERROR = "Internal error while completing the deck; nothing was saved."


def _complete_group(completer, jobs: list[CompletionJob]) -> list:
    """One batch through ``complete_many``; progress is fanned out to every job's row and websocket group.
    If the batch itself crashes (not a per-request CompletionError), each job is retried alone so one poison job
    cannot fail the others; a job that crashes alone gets an internal-error outcome (an Exception)."""
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

    model, sampler, generate_side = batch_key(jobs[0])

    def run(group, report):
        # bad rows get their own CompletionError
        if model == "masked":  # a collection, when given, is the request's fourth part
            requests = [(j.known_main or [], j.known_side or [], j.format, j.collection) for j in group]  # greedy: the same cards give the same deck, the seed changes nothing
            return completer.complete_many(requests, seed=group[0].seed, generate_side=generate_side, progress=report)
        requests = [(j.known_main or [], j.known_side or [], j.format) for j in group]
        return completer.complete_many(requests, seeds=[j.seed for j in group], sampler=sampler,
                                       generate_side=generate_side, progress=report)

    try:
        return run(jobs, reporter(jobs))
    except Exception:
        if len(jobs) == 1:
            log.exception("completion job %s crashed", jobs[0].pk)
            return [RuntimeError(INTERNAL_ERROR)]
        log.exception("completion batch %s crashed; running its jobs one by one",
                                              [job.pk for job in jobs])
    outcomes = []
    for job in jobs:
        try:
            outcomes += run([job], reporter([job]))
        except Exception:
            log.exception("completion job %s crashed", job.pk)
            outcomes.append(RuntimeError(INTERNAL_ERROR))
    return outcomes


def run_batch(job_id, limit: int | None = None, worker: str = "") -> tuple[CompletionJob | None, list[CompletionJob]]:
    """Claim ``job_id`` and other queued jobs (``claim_jobs``), complete them in batches of compatible settings on
    the model's device, and store each job's result or its own error. Returns (the job ``job_id``, the jobs this
    call ran); the first is the row as it stands when another batch already took it (nothing is run twice)."""
    claimed = claim_jobs(job_id, limit, worker)
    if not claimed:
        return CompletionJob.objects.filter(pk=job_id).first(), []
    try:
        with heartbeat(CompletionJob.objects.filter(pk__in=[j.pk for j in claimed])):
            _run_claimed(claimed)
    except Exception:  # e.g. the channel layer is down: no claimed job is left "running"
        CompletionJob.objects.filter(pk__in=[j.pk for j in claimed], status="running").update(
            status="failed", error=INTERNAL_ERROR, finished=timezone.now())
        raise
    return claimed[0], claimed


def _run_claimed(claimed: list[CompletionJob]) -> None:
    for job in claimed:
        publish_job(job)

    groups: dict[tuple, list[CompletionJob]] = {}
    for job in claimed:  # the task's own job first, so its group runs first
        groups.setdefault(batch_key(job), []).append(job)
    loaded: dict[str, tuple] = {}
    for key, jobs in groups.items():
        model = key[0]
        if model not in loaded:
            try:
                completer = get_completer(model)
                loaded[model] = (completer, completer_version(model, completer), None)
            except Exception as exc:  # NoActiveModel or a broken model: every job of that model says so
                if not isinstance(exc, NoActiveModel):
                    log.exception("could not load the %s completion model", model)
                loaded[model] = (None, None, str(exc) if isinstance(exc, NoActiveModel) else INTERNAL_ERROR)
        completer, version, error = loaded[model]
        if error is not None:
            for job in jobs:
                _fail(job, error)
            continue
        outcomes = _complete_group(completer, jobs)
        for job, outcome in zip(jobs, outcomes):
            try:
                if isinstance(outcome, CompletionError):
                    _fail(job, str(outcome))
                elif isinstance(outcome, Exception):
                    _fail(job, INTERNAL_ERROR)
                else:
                    _finish(job, outcome, version, completer)
            except Exception:
                log.exception("storing completion job %s failed", job.pk)
                CompletionJob.objects.filter(pk=job.pk).update(status="failed", error=INTERNAL_ERROR,
                                                              finished=timezone.now())
                job.refresh_from_db()
                publish_job(job)


def recover_stale_jobs() -> list[CompletionJob]:
    """The jobs a dead worker left running (``plumbing.recovery.recover_stale``): each is queued again while it has
    runs left (returned: the caller queues their tasks), or fails with the reason after ``MTG_JOB_MAX_ATTEMPTS``
    runs; the page hears of both."""
    again, failed = recover_stale(
        CompletionJob.objects.order_by("created"), what="job", then="Nothing was saved: try again.",
        failed={"message": "Failed"},
        again=lambda job: {"status": "queued", "progress": 0.0, "message": f"Queued again: the worker running it "
                           f"stopped (run {job.attempts + 1} of {max_attempts()})"})
    for job in again + failed:
        try:
            publish_job(job)
        except Exception:  # noqa: BLE001 - best effort (the channel layer may be down): the page polls the row too
            log.warning("could not publish recovered job %s", job.pk, exc_info=True)
    return again


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

