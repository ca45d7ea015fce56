"""Training and evaluation runs: create them, run them (``ml.tasks`` queues them on the training queue, or runs
them eagerly in the embedded stack) and report progress, the current metric and a log tail on the
``TrainingRun`` row (throttled to one write every half second).

A run calls the functions its kind registered with ``ml.kinds`` (``train(params, progress, scope)``,
``evaluate(version, params, progress)``), with the run's ``Reporter`` as their progress.
"""
from __future__ import annotations

import json
import math
import time
import traceback

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from ml import kinds
from ml.models import ModelVersion, TrainingRun
from ml.progress import Progress
from ml.registry import activate_version, active_version
from plumbing.recovery import heartbeat, recover_stale

class RunCancelled(Exception):
    pass


# --- reporting ---------------------------------------------------------------------------------------------

class Reporter(Progress):
    """Progress (0..100), the current metric, the log tail; written at most every settings.MTG_TRAINING_REPORT_SECONDS.
    ``listener``, when given, is called with the reporter on every write (the models command's progress bar)."""

    def __init__(self, run: TrainingRun, phases: int = 1, listener=None):
        self.run = run
        self.phases = max(1, phases)
        self.listener = listener
        self.phase = -1
        self.fraction = 0.0
        self.current_metric: tuple[str, float] | None = None
        self.message = ""
        self.lines: list[str] = []
        self._last = 0.0
        self._dirty = False

    # the Progress of the kinds' functions
    def expect(self, phases: int) -> None:
        self.phases = max(1, int(phases))

    def bar(self, iterable=None, total=None, desc="", **kwargs):
        return RunBar(self, iterable, total, desc)

    def metric(self, name: str, value):
        try:
            value = float(value)
        except (TypeError, ValueError):
            return
        if math.isfinite(value):
            self.current_metric = (name[:60], value)
            self._dirty = True

    def log(self, line: str):
        line = line.rstrip()
        if line:
            self.lines.append(f"[{time.strftime('%H:%M:%S')}] {line}")
            self._dirty = True
            self.flush()

    # progress
    def start_phase(self, message: str = ""):
        self.phase = min(self.phase + 1, self.phases - 1)
        self.fraction = 0.0
        if message:
            self.message = message
            self.log(message)
        self.flush()

    def set_fraction(self, fraction: float, message: str | None = None):
        self.fraction = min(max(float(fraction), 0.0), 1.0)
        if message is not None:
            self.message = message
        self.flush()

    @property
    def percent(self) -> float:
        return round(100.0 * (max(self.phase, 0) + self.fraction) / self.phases, 1)

    def flush(self, force: bool = False):
        now = time.monotonic()
        if not force and now - self._last < settings.MTG_TRAINING_REPORT_SECONDS:
            return
        self._last = now
        tail = "\n".join(self.lines)
        if len(tail) > TrainingRun.LOG_LIMIT:
            tail = tail[-TrainingRun.LOG_LIMIT:]
            tail = tail[tail.find("\n") + 1:]
        fields = {"progress": min(self.percent, 99.9), "message": self.message[:200], "log": tail}
        if self.current_metric:
            fields.update(metric_name=self.current_metric[0], metric_value=self.current_metric[1])
        TrainingRun.objects.filter(pk=self.run.pk).update(**fields)
        if self.listener is not None:
            self.listener(self)
        if TrainingRun.objects.filter(pk=self.run.pk, status="cancelled").exists():
            raise RunCancelled("cancelled")


class RunBar:
    """A phase of a run: the tqdm-like bar its kind's functions drive, feeding a Reporter."""

    def __init__(self, reporter: Reporter, iterable=None, total=None, desc=""):
        self.reporter, self.iterable, self.desc, self.n = reporter, iterable, desc or "", 0
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)
        self.total = total
        reporter.start_phase(desc)

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.update(1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _report(self):
        if self.total:
            self.reporter.set_fraction(self.n / self.total, f"{self.desc}: {self.n}/{self.total}")

    def update(self, n=1):
        self.n += n
        self._report()

    def refresh(self):
        self._report()

    def set_description(self, desc, refresh=True):
        self.desc = desc

    def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
        values = dict(ordered_dict or {}, **kwargs)
        for name, value in values.items():
            try:
                self.reporter.metric(name, float(value))
            except (TypeError, ValueError):
                pass
        self._report()

    def close(self):
        pass


# --- creating ----------------------------------------------------------------------------------------------

def parameters_for(kind: str, scope: str, parameters: dict | None, quick: bool) -> dict:
    base = kinds.quick_parameters(kind, scope) if quick else {}
    merged = {**base, **(parameters or {})}
    if quick:
        merged["quick"] = True
    return merged


def validate(kind: str, scope: str) -> None:
    found = kinds.get(kind)
    if found is None or found.train is None:
        renamed = kinds.renamed(kind)
        raise kinds.TrainingError(f"{kind} cannot be trained here (trainable kinds: {', '.join(kinds.trainable())})."
                                  if renamed is None else f"{renamed}: train {kinds.canonical(kind)}.")
    if found.check_scope is not None:
        found.check_scope(scope)
    elif scope:
        raise kinds.TrainingError(f"{kind} has no scope (leave it empty).")


IF_BETTER = "if_better"  # the ``activate`` of a run whose version is activated only when it beats the active one


def create_training_run(kind: str, scope: str = "", parameters: dict | None = None, quick: bool = False,
                        activate: bool | str = False, user: str = "") -> TrainingRun:
    """The row of a training run, waiting for a worker (``ml.tasks.enqueue_training`` queues it). The kind, its
    scope and the parameters' names and types are checked first (``TrainingError``: no row is written).
    ``activate``: True, False or ``IF_BETTER`` (when the kind can compare versions: ``Kind.better``)."""
    kind = kinds.canonical(kind)
    validate(kind, scope)
    params = parameters_for(kind, scope, parameters, quick)
    found = kinds.get(kind)
    kinds.cast_parameters(params, found.parameters)
    if activate == IF_BETTER or params.get("activate") == IF_BETTER:
        if found.better is None:
            raise kinds.TrainingError(f"{kind} cannot compare versions: activate it or not.")
        params["activate"] = IF_BETTER
    else:
        params["activate"] = bool(activate or params.get("activate"))
    return TrainingRun.objects.create(job="train", kind=kind, scope=scope, parameters=params, created_by=user,
                                      message="Waiting for a training worker")


def create_evaluation_run(version: ModelVersion, parameters: dict | None = None, user: str = "") -> TrainingRun:
    found = kinds.get(version.kind)
    if found is None or found.evaluate is None:
        raise kinds.TrainingError(f"No evaluation for {version.kind} yet.")
    if found.evaluate_parameters is not None:
        kinds.cast_parameters(parameters or {}, found.evaluate_parameters)
    return TrainingRun.objects.create(job="evaluate", kind=version.kind, scope=version.scope,
                                      parameters=parameters or {}, created_by=user, target_version=version,
                                      message="Waiting for a training worker")


# --- running -----------------------------------------------------------------------------------------------

def execute(run_id: int, listener=None) -> TrainingRun:
    """Run a training or evaluation run to its end; every outcome is recorded on the row. ``listener``: called
    with the run's Reporter on every write."""
    run = TrainingRun.objects.get(pk=run_id)
    if run.status != "queued":
        return run  # done, cancelled, or a redelivered task of a run another worker took
    now = timezone.now()
    claimed = TrainingRun.objects.filter(pk=run.pk, status="queued").update(
        status="running", started=now, heartbeat=now, message="Starting", attempts=F("attempts") + 1)
    if not claimed:
        return TrainingRun.objects.get(pk=run_id)
    run.refresh_from_db()
    with heartbeat(TrainingRun.objects.filter(pk=run.pk)):
        _run(run, Reporter(run, listener=listener))
    run.refresh_from_db()
    return run


def _run(run: TrainingRun, reporter: Reporter) -> None:
    """The run's kind's train or evaluate function; the outcome is written to the row."""
    try:
        kind = kinds.get(run.kind)
        if run.job == "train":
            params = kinds.cast_parameters(run.parameters, kind.parameters)
            params["notes"] = run.parameters.get("notes") or ""
            version = kind.train(params, reporter, run.scope)
            if activates(kind, version, run.parameters.get("activate")):
                activate_version(version, user=run.created_by or f"training run {run.pk}")
            reporter.log(f"registered {version}")
            fields = {"result_version": version}
        else:
            version = run.target_version
            params = dict(run.parameters)
            if kind.evaluate_parameters is not None:
                params = kinds.cast_parameters(params, kind.evaluate_parameters)
            metrics = kind.evaluate(version, params, reporter)
            version.refresh_from_db()
            version.metrics = {**(version.metrics or {}), "eval": metrics}
            version.save(update_fields=["metrics"])
            reporter.log("evaluation: " + json.dumps({k: v for k, v in metrics.items() if isinstance(v, (int, float))}))
            fields = {}
        reporter.message = "Done"
        reporter.fraction, reporter.phase = 1.0, reporter.phases - 1
        try:
            reporter.flush(force=True)
        except RunCancelled:
            pass
        TrainingRun.objects.filter(pk=run.pk).update(status="succeeded", progress=100.0, finished=timezone.now(),
                                                     message="Done", **fields)
    except RunCancelled:
        reporter.lines.append("cancelled")
        TrainingRun.objects.filter(pk=run.pk).update(log="\n".join(reporter.lines)[-TrainingRun.LOG_LIMIT:])
    except Exception as exc:  # noqa: BLE001 any failure is recorded on the run, the worker lives on
        tb = traceback.format_exc(limit=8)
        reporter.lines.append(tb)
        message = str(exc) or type(exc).__name__
        TrainingRun.objects.filter(pk=run.pk).update(
            status="failed", finished=timezone.now(), error=f"{type(exc).__name__}: {message}"[:4000],
            message="Failed", log="\n".join(reporter.lines)[-TrainingRun.LOG_LIMIT:])


def activates(kind: kinds.Kind, version: ModelVersion, activate) -> bool:
    """Whether a run's new version becomes active: ``activate`` True, or ``IF_BETTER`` and it beats the active
    version of its (kind, scope) by the kind's ``better`` (or none is active)."""
    if activate != IF_BETTER:
        return bool(activate)
    current = active_version(version.kind, version.scope, required=False)
    return current is None or kind.better(version.metrics or {}, current.metrics or {})


def fail_stale_runs() -> list[int]:
    """The runs a dead worker left running (``plumbing.recovery.stale``) fail with the reason (a run is not
    started again by itself: it may take hours, and the person decides). Returns their ids."""
    _, failed = recover_stale(TrainingRun.objects.all(), what="run", progress=True, failed={"message": "Failed"},
                              then="The run did not finish; start it again: a new run starts from the beginning.")
    return [run.pk for run in failed]


# --- display -----------------------------------------------------------------------------------------------

def flat_metrics(metrics: dict, prefix: str = "", depth: int = 0) -> dict:
    """Scalar metrics, nested keys joined with dots (held_out.all.top1), lists and long histories left out."""
    out = {}
    for key, value in (metrics or {}).items():
        name = f"{prefix}{key}"
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            out[name] = value
        elif isinstance(value, dict) and depth < 2 and key not in ("by_pick", "history", "timings", "neighbour_ranks",
                                                                   "model_config", "train_config"):
            out.update(flat_metrics(value, f"{name}.", depth + 1))
    return out


def run_payload(run: TrainingRun) -> dict:
    return {"id": run.pk, "job": run.job, "kind": run.kind, "scope": run.scope, "status": run.status,
            "progress": round(run.progress, 1), "message": run.message, "metric": (
                {"name": run.metric_name, "value": run.metric_value} if run.metric_name else None),
            "log": run.log[-4000:], "error": run.error or None, "done": run.done,
            "started": run.started.isoformat() if run.started else None,
            "finished": run.finished.isoformat() if run.finished else None,
            "version": run.result_version_id or run.target_version_id}
