"""Training and evaluation runs: start them, run them (in a Celery task on the training queue, or
eagerly in the embedded stack) and report progress, the current metric and a log tail on the
``TrainingRun`` row (throttled to one write every half second).

Each kind wraps the code path of its command: ``train_embeddings``, ``train_completion`` and
``train_diffusion`` are called as they are (their progress bars are redirected to the run), draft bots call
``train_archetype`` / ``train_neural`` with their ``on_epoch`` callbacks.
"""
from __future__ import annotations

import io
import json
import math
import time
import traceback
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from ml import kinds
from ml.models import ModelVersion, TrainingRun

TRAINABLE = ("draft_bot", "card_embeddings", "deck_masked", "deck_diffusion", "game_policy")
THROTTLE_S = 0.5
LISTENERS: list = []  # called with the Reporter on every write (the models command's progress bar)


class RunCancelled(Exception):
    pass


class RunError(ValueError):
    """A run that cannot start or go on (bad parameters, missing data); the message says why."""


# --- reporting ---------------------------------------------------------------------------------------------

class Reporter:
    """Progress (0..100), the current metric, the log tail; written at most every THROTTLE_S seconds."""

    def __init__(self, run: TrainingRun, phases: int = 1):
        self.run = run
        self.phases = max(1, phases)
        self.phase = -1
        self.fraction = 0.0
        self.metric: tuple[str, float] | None = None
        self.message = ""
        self.lines: list[str] = []
        self._last = 0.0
        self._dirty = False

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

    def set_metric(self, name: str, value):
        try:
            value = float(value)
        except (TypeError, ValueError):
            return
        if math.isfinite(value):
            self.metric = (name[:60], value)
            self._dirty = True

    def log(self, line: str):
        line = line.rstrip()
        if line:
            self.lines.append(f"[{time.strftime('%H:%M:%S')}] {line}")
            self._dirty = True
            self.flush()

    def flush(self, force: bool = False):
        now = time.monotonic()
        if not force and now - self._last < getattr(settings, "MTG_TRAINING_REPORT_SECONDS", THROTTLE_S):
            return
        self._last = now
        tail = "\n".join(self.lines)
        if len(tail) > TrainingRun.LOG_LIMIT:
            tail = tail[-TrainingRun.LOG_LIMIT:]
            tail = tail[tail.find("\n") + 1:]
        fields = {"progress": min(self.percent, 99.9), "message": self.message[:200], "log": tail}
        if self.metric:
            fields.update(metric_name=self.metric[0], metric_value=self.metric[1])
        TrainingRun.objects.filter(pk=self.run.pk).update(**fields)
        for listener in LISTENERS:
            listener(self)
        if TrainingRun.objects.filter(pk=self.run.pk, status="cancelled").exists():
            raise RunCancelled("cancelled")

    # adapters
    def bar(self, iterable=None, total=None, desc="", **kwargs):
        return RunBar(self, iterable, total, desc)

    def writer(self):
        return LineWriter(self)


class RunBar:
    """Stands in for the commands' tqdm progress bars and feeds a Reporter."""

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
                self.reporter.set_metric(name, float(value))
            except (TypeError, ValueError):
                pass
        self._report()

    def close(self):
        pass


class LineWriter(io.TextIOBase):
    """A command's stdout, line by line into the run's log."""

    def __init__(self, reporter: Reporter):
        self.reporter, self.buffer_ = reporter, ""

    def write(self, text):
        self.buffer_ += str(text)
        while "\n" in self.buffer_:
            line, self.buffer_ = self.buffer_.split("\n", 1)
            self.reporter.log(line)
        return len(text)

    def flush(self):
        pass


# --- starting ----------------------------------------------------------------------------------------------

def parameters_for(kind: str, scope: str, parameters: dict | None, quick: bool) -> dict:
    base = kinds.quick_parameters(kind, scope) if quick else {}
    merged = {**base, **(parameters or {})}
    if quick:
        merged["quick"] = True
    return merged


def validate(kind: str, scope: str, job: str = "train") -> None:
    if kind not in TRAINABLE:
        raise RunError(f"{kind} cannot be trained here (trainable kinds: {', '.join(TRAINABLE)}).")
    if kind == "draft_bot":
        family, _, code = scope.partition(":")
        if family not in ("archetype", "neural") or not code:
            raise RunError("A draft bot's scope is FAMILY:SET with FAMILY archetype or neural, e.g. archetype:BLB.")
    elif scope:
        raise RunError(f"{kind} has no scope (leave it empty).")


def start_training(kind: str, scope: str = "", parameters: dict | None = None, quick: bool = False,
                   activate: bool = False, user: str = "") -> TrainingRun:
    """Create the run and queue it on the training queue (run now, in-process, in the embedded stack)."""
    validate(kind, scope)
    params = parameters_for(kind, scope, parameters, quick)
    params["activate"] = bool(activate or params.get("activate"))
    run = TrainingRun.objects.create(job="train", kind=kind, scope=scope, parameters=params, created_by=user,
                                     message="Waiting for a training worker")
    return _enqueue(run)


def start_evaluation(version: ModelVersion, parameters: dict | None = None, user: str = "") -> TrainingRun:
    if version.kind not in EVALUATORS:
        raise RunError(f"No evaluation for {version.kind} yet.")
    run = TrainingRun.objects.create(job="evaluate", kind=version.kind, scope=version.scope,
                                     parameters=parameters or {}, created_by=user, target_version=version,
                                     message="Waiting for a training worker")
    return _enqueue(run)


def _enqueue(run: TrainingRun) -> TrainingRun:
    from django.db import transaction

    from ml.tasks import evaluate_task, train_task

    task = train_task if run.job == "train" else evaluate_task

    def send():
        from kombu.exceptions import OperationalError

        try:
            result = task.apply_async(args=[run.pk])
            TrainingRun.objects.filter(pk=run.pk).exclude(task_id__gt="").update(task_id=result.id or "")
        except OperationalError as exc:
            TrainingRun.objects.filter(pk=run.pk).update(status="failed", finished=timezone.now(),
                                                         error=f"Could not queue the run (broker unavailable: {exc}).")

    transaction.on_commit(send)
    return run


def cancel(run: TrainingRun) -> bool:
    """Mark a queued or running run cancelled; a running one stops at its next progress report."""
    updated = TrainingRun.objects.filter(pk=run.pk, status__in=("queued", "running")).update(
        status="cancelled", finished=timezone.now(), message="Cancelled")
    if updated and run.task_id and not settings.CELERY_TASK_ALWAYS_EAGER:
        from mtgsite.celery import app

        app.control.revoke(run.task_id)
    return bool(updated)


# --- running -----------------------------------------------------------------------------------------------

def execute(run_id: int) -> TrainingRun:
    """Run a training or evaluation run to its end; every outcome is recorded on the row."""
    run = TrainingRun.objects.get(pk=run_id)
    if run.status != "queued":
        return run  # done, cancelled, or a redelivered task of a run another worker took
    claimed = TrainingRun.objects.filter(pk=run.pk, status="queued").update(
        status="running", started=timezone.now(), message="Starting")
    if not claimed:
        return TrainingRun.objects.get(pk=run_id)
    run.refresh_from_db()
    reporter = Reporter(run)
    try:
        if run.job == "train":
            version = TRAINERS[run.kind](run, reporter)
            if run.parameters.get("activate"):
                from ml.registry import activate_version

                activate_version(version, user=run.created_by or f"training run {run.pk}")
            reporter.log(f"registered {version}")
            fields = {"result_version": version}
        else:
            version = run.target_version
            metrics = EVALUATORS[run.kind](version, run.parameters, reporter)
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
    except Exception as exc:  # recorded on the run, the worker lives on
        tb = traceback.format_exc(limit=8)
        reporter.lines.append(tb)
        message = str(exc) or type(exc).__name__
        TrainingRun.objects.filter(pk=run.pk).update(
            status="failed", finished=timezone.now(), error=f"{type(exc).__name__}: {message}"[:4000],
            message="Failed", log="\n".join(reporter.lines)[-TrainingRun.LOG_LIMIT:])
    run.refresh_from_db()
    return run


def _latest(kind: str, scope: str = "") -> int:
    return ModelVersion.objects.filter(kind=kind, scope=scope).aggregate(m=Max("pk"))["m"] or 0


def _run_command(module, name: str, reporter: Reporter, options: dict, kind: str, scope: str = "") -> ModelVersion:
    from django.core.management import call_command

    before = _latest(kind, scope)
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(module, "progress", reporter.bar))
        call_command(name, stdout=reporter.writer(), stderr=reporter.writer(), **options)
    version = ModelVersion.objects.filter(kind=kind, scope=scope, pk__gt=before).order_by("-pk").first()
    if version is None:
        raise RunError(f"{name} finished without registering a version")
    return version


def _options(params: dict, allowed: dict) -> dict:
    out = {}
    for key, cast in allowed.items():
        if key in params and params[key] is not None:
            try:
                out[key] = cast(params[key])
            except (TypeError, ValueError):
                raise RunError(f"parameter {key}: {params[key]!r} is not a {cast.__name__}") from None
    unknown = set(params) - set(allowed) - {"quick", "activate", "notes"}
    if unknown:
        raise RunError(f"unknown parameters: {', '.join(sorted(unknown))} (allowed: {', '.join(sorted(allowed))})")
    return out


def train_card_embeddings(run: TrainingRun, reporter: Reporter) -> ModelVersion:
    from ml.management.commands import train_embeddings as module

    reporter.phases = 3  # tokens, doc2vec, classifier
    options = _options(run.parameters, {"epochs": int, "dim": int, "seed": int, "workers": int,
                                        "classifier_epochs": int, "noise_std": float})
    return _run_command(module, "train_embeddings", reporter, {**options, "activate": False}, "card_embeddings")


def train_deck_diffusion(run: TrainingRun, reporter: Reporter) -> ModelVersion:
    from ml.management.commands import train_diffusion as module

    options = _options(run.parameters, {"steps": int, "batch": int, "lr": float, "warmup": int, "d_model": int,
                                        "heads": int, "layers": int, "ff": int, "side_layers": int,
                                        "context_layers": int, "prediction": str, "seed": int, "eval_every": int,
                                        "split_date": str, "device": str, "limit": int})
    options["notes"] = run.parameters.get("notes") or ""
    return _run_command(module, "train_diffusion", reporter, {**options, "no_activate": True}, "deck_diffusion")


def train_deck_masked(run: TrainingRun, reporter: Reporter) -> ModelVersion:
    """The default deck completer: ``train_completion`` (planning the examples, then the optimizer steps)."""
    from ml.management.commands import train_completion as module

    reporter.phases = 2  # planning examples (retrieval), training
    options = _options(run.parameters, {"preset": str, "steps": int, "examples": int, "batch": int, "lr": float,
                                        "d_model": int, "heads": int, "layers": int, "ff": int, "candidates": int,
                                        "neighbours": int, "seed": int, "split_date": str, "limit": int,
                                        "no_text_init": bool, "time_budget": float})
    if options.get("preset") not in (None, "quick", "default"):
        raise RunError("parameter preset: quick or default")
    options["notes"] = run.parameters.get("notes") or ""
    return _run_command(module, "train_completion", reporter, {**options, "no_activate": True}, "deck_masked")


def train_game_policy(run: TrainingRun, reporter: Reporter) -> ModelVersion:
    """The search's learned value model: engine self-play between the sample decks, then the fit."""
    from gameplay.management.commands import train_game_value as module

    options = _options(run.parameters, {"games": int, "workers": int, "seed": int, "epochs": int, "hidden": str,
                                        "weight_decay": float})
    options["notes"] = run.parameters.get("notes") or ""
    return _run_command(module, "train_game_value", reporter, {**options, "register": True}, "game_policy")


def evaluate_game_policy(version: ModelVersion, params: dict, reporter: Reporter) -> dict:
    """Brier score and log-loss against the winner on positions of fresh Medium self-play games (seeds
    5000 + i, never trained on), beside the engine's evaluation on the same positions."""
    from gameplay.core import value
    from gameplay.management.commands import train_game_value as module
    from ml.registry import resolve_path

    _options(params, {"games": int, "workers": int, "seed": int})
    games = int(params.get("games", 12))
    reporter.start_phase(f"playing {games} Medium self-play games")
    try:
        model = value.ValueModel.load(resolve_path(version.weights_path))
    except value.ValueModelError as exc:
        raise RunError(str(exc)) from None
    with mock.patch.object(module, "progress", reporter.bar):
        rows, failed = module.play_games(games, int(params.get("seed", 5000)), int(params.get("workers", 1)),
                                         schedule=(("Medium", "Medium"),))
    if not rows:
        raise RunError("no finished game to evaluate on" + (f" ({failed[0]})" if failed else ""))
    out = {"games": len({r["seed"] for r in rows}), **value.score(model, rows)}
    reporter.set_metric("brier", out["model_brier"])
    return out


def draft_logs(scope: str, params: dict, reporter: Reporter | None = None):
    """(logs, pod keys, description) for a draft bot's set: a 17Lands file (``logs``), the stored
    drafts of the set (``stored``; the default when there are any), else the proxy logs in MTG_DATA_DIR."""
    from drafts.core.logs import pod_keys, read_17lands_csv, read_seats, seats_file_for
    from drafts.models import DraftSeat

    code = scope.partition(":")[2].upper()
    logs_path = params.get("logs")
    use_stored = params.get("stored")
    if not logs_path and use_stored is None:
        use_stored = DraftSeat.objects.filter(draft__set_code=code).exists()
        if not use_stored:
            proxy = Path(settings.MTG_DATA_DIR) / "drafts" / f"draft_data_proxy.{code}.PremierDraft.train.csv.gz"
            if not proxy.exists():
                raise RunError(f"No draft logs for {code}: no stored drafts and no {proxy.name} in MTG_DATA_DIR; "
                               f"give a 17Lands file with the 'logs' parameter.")
            logs_path = str(proxy)
    if use_stored and not logs_path:
        from django.core.management import CommandError

        from drafts.management.commands.train_draftbot import stored_logs

        try:
            data, pods = stored_logs(code, params.get("draft_kind"))
        except CommandError as exc:
            raise RunError(str(exc)) from None
        source = {"stored": code, "draft_kind": params.get("draft_kind")}
    else:
        if not Path(logs_path).exists():
            raise RunError(f"{logs_path}: no such file")
        if reporter:
            reporter.log(f"reading {Path(logs_path).name}")
        data = read_17lands_csv(logs_path, limit=params.get("limit"))
        seats = seats_file_for(logs_path)
        pods = read_seats(seats) if seats else None
        source = {"logs_path": str(logs_path), "limit": params.get("limit")}
    if data.set_code.upper() != code:
        raise RunError(f"the logs are of {data.set_code}, the scope says {code}")
    return data, pod_keys(data, pods), source


def train_draft_bot(run: TrainingRun, reporter: Reporter) -> ModelVersion:
    import torch

    from drafts.core.evaluate import agreement, ranks_from_scores, score_matrix
    from drafts.core.logs import held_out_mask
    from drafts.management.commands.train_draftbot import json_safe, summary
    from drafts.services import set_list
    from ml.registry import save_version

    family = run.scope.partition(":")[0]
    params = dict(run.parameters)
    _options(params, {"epochs": int, "seed": int, "limit": int, "logs": str, "stored": bool, "draft_kind": str,
                      "net": dict, "n_archetypes": int, "lr": float})
    torch.set_num_threads(max(1, torch.get_num_threads()))
    reporter.phases = 1
    reporter.start_phase(f"loading the {run.scope.partition(':')[2]} draft logs")
    data, keys, source = draft_logs(run.scope, params, reporter)
    s = set_list(data.set_code)
    held = held_out_mask(keys)
    train, test = data.select(~held), data.select(held)
    if not len(test) or not len(train):
        raise RunError("too few pods to hold one in ten out: give more logs")
    reporter.log(f"{len(data)} picks: {len(train)} to train on, {len(test)} held out (1 pod in 10)")
    epochs = int(params.get("epochs") or (20 if family == "archetype" else 25))
    seed = int(params.get("seed") or 0)
    done = [0]

    if family == "archetype":
        from drafts.bots.archetype import train_archetype

        total = epochs

        def on_epoch(record):
            done[0] += 1
            for name in ("val_loss", "train_loss"):
                if isinstance(record.get(name), float) and math.isfinite(record[name]):
                    reporter.set_metric(name, record[name])
                    break
            reporter.log(f"epoch {record.get('epoch', done[0])}: " + ", ".join(
                f"{k} {v:.4f}" for k, v in record.items() if isinstance(v, float)))
            reporter.set_fraction(0.05 + 0.85 * done[0] / total, f"epoch {done[0]}/{total}")

        extra = {k: params[k] for k in ("n_archetypes", "lr") if k in params}
        started = time.perf_counter()
        model, history = train_archetype(train, epochs=epochs, seed=seed, on_epoch=on_epoch, set_list=s,
                                         keys=keys[~held], **extra)
    else:
        from drafts.bots.archetype import validation_mask
        from drafts.bots.neural import NeuralConfig, train_neural

        cfg = NeuralConfig.from_dict(params.get("net") or {})
        cfg.epochs = epochs
        total = epochs * max(1, cfg.ensemble) * (2 if cfg.refit else 1)

        def on_epoch(epoch, train_loss, val_loss=None, val_top1=None):
            done[0] += 1
            if val_top1 is not None and math.isfinite(val_top1):
                reporter.set_metric("val_top1", val_top1)
            elif train_loss is not None:
                reporter.set_metric("train_loss", train_loss)
            reporter.log(f"epoch {epoch}: train_loss {train_loss:.4f}"
                         + (f", val_loss {val_loss:.4f}, val_top1 {val_top1:.4f}"
                            if val_loss is not None and math.isfinite(val_loss) else ""))
            reporter.set_fraction(0.05 + 0.85 * min(done[0] / total, 1.0), f"epoch {done[0]}/{total}")

        val = validation_mask(keys[~held])
        started = time.perf_counter()
        model, history = train_neural(train, ~val, val, config=cfg, seed=seed, on_epoch=on_epoch, set_list=s)
    seconds = time.perf_counter() - started
    reporter.set_fraction(0.92, "scoring the held-out pods")
    result = agreement(test, ranks_from_scores(test, score_matrix(model, test, s)))
    reporter.set_metric("held_out_top1", result["all"]["top1"])
    reporter.log(f"held-out top-1 {result['all']['top1']:.3f}, top-3 {result['all']['top3']:.3f}")
    if history.get("members"):
        history = {**history["members"][0], "members": len(history["members"])}
    metrics = {"held_out": summary(result), "by_pick": result["by_pick"], "train_seconds": round(seconds, 1),
               "history": {k: v for k, v in history.items() if isinstance(v, (list, int, float))}}
    config = json_safe(model.config())
    return save_version("draft_bot", model.to_tensors(), config, metrics=json_safe(metrics), scope=run.scope,
                        activate=False, metadata={"config": json.dumps(config)},
                        notes=params.get("notes") or "",
                        data_snapshot={**source, "rows": len(data), "train_rows": len(train), "held_out_rows": len(test),
                                       "split": "1 pod in 10 held out (crc32 of the pod id)"})


TRAINERS = {"draft_bot": train_draft_bot, "card_embeddings": train_card_embeddings,
            "deck_masked": train_deck_masked, "deck_diffusion": train_deck_diffusion,
            "game_policy": train_game_policy}


# --- evaluation --------------------------------------------------------------------------------------------

def evaluate_draft_bot(version: ModelVersion, params: dict, reporter: Reporter) -> dict:
    from drafts.core.evaluate import agreement, ranks_from_scores, score_matrix
    from drafts.core.logs import held_out_mask
    from drafts.services import _load_bot, set_list

    snap = version.data_snapshot or {}
    source = {k: v for k, v in params.items() if k in ("logs", "stored", "draft_kind", "limit")}
    if not source:
        if snap.get("logs_path"):
            source = {"logs": snap["logs_path"], "limit": snap.get("limit")}
        elif snap.get("stored"):
            source = {"stored": True, "draft_kind": snap.get("draft_kind")}
    reporter.start_phase("loading the held-out pods")
    data, keys, _ = draft_logs(version.scope, source, reporter)
    test = data.select(held_out_mask(keys))
    s = set_list(data.set_code)
    reporter.set_fraction(0.4, f"scoring {len(test)} held-out picks")
    started = time.perf_counter()
    result = agreement(test, ranks_from_scores(test, score_matrix(_load_bot(version), test, s)))
    elapsed = time.perf_counter() - started
    reporter.set_metric("top1", result["all"]["top1"])
    return {"top1": result["all"]["top1"], "top3": result["all"]["top3"], "mean_rank": result["all"]["mean_rank"],
            "unforced_top1": result["unforced"]["top1"], "picks": len(test),
            "picks_per_second": round(len(test) / max(elapsed, 1e-9), 1), "split": "held-out pods (1 in 10)"}


def evaluate_card_embeddings(version: ModelVersion, params: dict, reporter: Reporter) -> dict:
    import numpy as np

    from ml.embeddings.classifier import classifier_report
    from ml.registry import load_version

    reporter.start_phase("loading the version")
    loaded = load_version(version)
    E = loaded.tensors["embeddings"].float().numpy()
    W = loaded.tensors["classifier.weight"].float().numpy()
    b = loaded.tensors["classifier.bias"].float().numpy()
    noise = float(params.get("noise_std", version.config.get("noise_std", 0.35)))
    reporter.set_fraction(0.3, "classifier accuracy under noise")
    report = classifier_report(W, b, E, sorted({0.0, noise, 1.0}), seed=int(params.get("seed", 0)))
    out = {"classifier_top1_clean": report[0.0]["top1"], "classifier_top1_noisy": report[noise]["top1"],
           "classifier_top1_noise_1.0": report[1.0]["top1"], "cards": int(E.shape[0])}
    reporter.set_metric("classifier_top1_noisy", out["classifier_top1_noisy"])
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items() if not isinstance(v, np.ndarray)}


def evaluate_deck_diffusion(version: ModelVersion, params: dict, reporter: Reporter) -> dict:
    """eval_completion's measure (main/side recall at K, validity) on held-out corpus decks, for this version."""
    from decks.core.rules import FORMATS
    from ml.completion.evaluate import compare
    from ml.completion_service import build_completer
    from ml.datasets import DEFAULT_SPLIT, card_tables, deck_arrays, split_day
    from ml.diffusion.data import card_popularity, split_by_date
    from ml.embeddings.service import active_embeddings
    from ml.management.commands.eval_completion import DiffusionMethod

    reporter.start_phase("loading decks and the model")
    emb = active_embeddings()
    names = emb.names
    arrays = deck_arrays(names)
    train, test = split_by_date(arrays, split_day(version.config.get("split_date") or DEFAULT_SPLIT))
    if len(test) == 0:
        raise RunError("no held-out decks (first seen after the split date) to evaluate on")
    tables = card_tables(names)
    completer = build_completer(diffusion=version)
    n = int(params.get("n", 30))
    Ks = [int(k) for k in params.get("known", [10, 20])]
    method = DiffusionMethod(completer, names, params.get("sampler", "fast"), int(params.get("steps", 50)))

    def progress(done, total, label):
        reporter.set_fraction(0.1 + 0.9 * done / max(total, 1), label)

    results = compare({"diffusion": method}, test, card_popularity(train, len(names)), Ks, n, int(params.get("seed", 0)),
                      tables.legal, tables.copy_limit, progress=progress, restricted=tables.restricted)
    out = {"decks": n, "formats": len(FORMATS)}
    for k, r in results["diffusion"].items():
        for key in ("main_recall", "side_recall", "valid"):
            if key in r:
                out[f"{key}_k{k}"] = r[key]
    if f"main_recall_k{Ks[0]}" in out:
        reporter.set_metric(f"main_recall_k{Ks[0]}", out[f"main_recall_k{Ks[0]}"])
    return out


def evaluate_deck_masked(version: ModelVersion, params: dict, reporter: Reporter) -> dict:
    """eval_completion's measure (main/side recall at K, validity) on the decks first seen on or after the
    version's split date, with the retrieval index fitted on the decks before it (no leak)."""
    from decks.core.rules import FORMATS
    from ml.completion.evaluate import compare
    from ml.completion_service import build_masked_completer
    from ml.datasets import DEFAULT_SPLIT, card_tables, deck_arrays, split_day
    from ml.diffusion.data import card_popularity, split_by_date
    from ml.embeddings.service import active_embeddings

    _options(params, {"n": int, "known": list, "seed": int})
    reporter.phases = 2
    reporter.start_phase("loading decks and fitting the retrieval index")
    names = active_embeddings().names
    split = version.config.get("split_date") or DEFAULT_SPLIT
    train, test = split_by_date(deck_arrays(names), split_day(split))
    if len(test) == 0:
        raise RunError("no held-out decks (first seen after the split date) to evaluate on")
    tables = card_tables(names)
    completer = build_masked_completer(version=version, split_date=split)
    n = int(params.get("n", 30))
    Ks = [int(k) for k in params.get("known", [10, 20])]
    reporter.start_phase(f"completing {n} held-out decks")

    def progress(done, total, label):
        reporter.set_fraction(done / max(total, 1), label)

    started = time.perf_counter()
    results = compare({"masked": completer.complete_idx}, test, card_popularity(train, len(names)), Ks, n,
                      int(params.get("seed", 0)), tables.legal, tables.copy_limit, progress=progress,
                      restricted=tables.restricted)
    out = {"decks": n, "formats": len(FORMATS), "split_date": split, "seconds": round(time.perf_counter() - started, 1)}
    for k, r in results["masked"].items():
        for key in ("main_recall", "side_recall", "valid_share", "per_second"):
            if key in r:
                out[f"{key}_k{k}"] = r[key]
    if f"main_recall_k{Ks[0]}" in out:
        reporter.set_metric(f"main_recall_k{Ks[0]}", out[f"main_recall_k{Ks[0]}"])
    return out


EVALUATORS = {"draft_bot": evaluate_draft_bot, "card_embeddings": evaluate_card_embeddings,
              "deck_masked": evaluate_deck_masked, "deck_diffusion": evaluate_deck_diffusion,
              "game_policy": evaluate_game_policy}


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
