"""The model management pages from the command line:

    manage.py models list [--kind KIND]
    manage.py models train KIND [--scope S] [--quick] [--activate] [--params JSON] [--queue]
    manage.py models evaluate VERSION_ID [--params JSON] [--queue]
    manage.py models activate VERSION_ID
    manage.py models rollback KIND [--scope S]
    manage.py models delete VERSION_ID
    manage.py models upload FILE --kind KIND [--scope S] --config JSON|@file.json [--activate]

``train`` and ``evaluate`` run in this process with a progress bar (or, with ``--queue``, go to the
training queue and the bar follows the run's row until it ends).
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from decks.management.importing import progress
from ml import kinds, training
from ml.kinds import TrainingError
from ml.models import ModelVersion
from ml.registry import RegistryError, activate_version, delete_version, rollback, upload_version
from ml.safetensors_check import UploadRejected
from ml.tasks import enqueue_evaluation, enqueue_training


def _json(value: str | None) -> dict:
    if not value:
        return {}
    if value.startswith("@"):
        value = Path(value[1:]).read_text()
    try:
        data = json.loads(value)
    except ValueError as exc:
        raise CommandError(f"not valid JSON: {exc}")
    if not isinstance(data, dict):
        raise CommandError("give a JSON object")
    return data


class Command(BaseCommand):
    help = "List, train, evaluate, activate, roll back, delete and upload model versions."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        p = sub.add_parser("list")
        p.add_argument("--kind")
        p = sub.add_parser("train")
        p.add_argument("kind")
        p.add_argument("--scope", default="")
        p.add_argument("--quick", action="store_true")
        p.add_argument("--activate", action="store_true")
        p.add_argument("--params", help="JSON object of training parameters (or @file.json)")
        p.add_argument("--queue", action="store_true", help="send it to the training queue and follow it")
        p = sub.add_parser("evaluate")
        p.add_argument("version_id", type=int)
        p.add_argument("--params")
        p.add_argument("--queue", action="store_true")
        p = sub.add_parser("activate")
        p.add_argument("version_id", type=int)
        p = sub.add_parser("rollback")
        p.add_argument("kind")
        p.add_argument("--scope", default="")
        p = sub.add_parser("delete")
        p.add_argument("version_id", type=int)
        p = sub.add_parser("upload")
        p.add_argument("file")
        p.add_argument("--kind", required=True)
        p.add_argument("--scope", default="")
        p.add_argument("--config", required=True, help="JSON object or @config.json")
        p.add_argument("--notes", default="")
        p.add_argument("--activate", action="store_true")

    def handle(self, *args, action, **opts):
        return getattr(self, f"do_{action}")(**opts) or ""

    # --- actions -------------------------------------------------------------------------------------------
    def do_list(self, kind=None, **_):
        qs = ModelVersion.objects.order_by("kind", "scope", "-version")
        kind = self._kind(kind)
        if kind:
            qs = qs.filter(kind=kind)
        if not qs.exists():
            self.stdout.write("no model versions (manage.py register_models registers the shipped defaults)")
        for v in qs:
            flat = training.flat_metrics(v.metrics)
            shown = ", ".join(f"{k} {val:.4g}" if isinstance(val, float) else f"{k} {val}"
                              for k, val in list(flat.items())[:4])
            self.stdout.write(f"{v.pk:>5}  {v.kind:<16} {v.scope:<14} v{v.version:<3} {'*' if v.active else ' '} "
                              f"{v.weights_bytes / 1e6:7.2f} MB  {shown}")

    def do_train(self, kind, scope="", quick=False, activate=False, params=None, queue=False, **_):
        kind = self._kind(kind)
        try:
            training.validate(kind, scope)
        except TrainingError as exc:
            raise CommandError(str(exc))
        queue = queue and not settings.CELERY_TASK_ALWAYS_EAGER  # the embedded stack runs it here
        start = enqueue_training if queue else training.create_training_run
        return self._run(lambda: start(kind, scope, _json(params), quick=quick, activate=activate,
                                       user="manage.py models"), queue)

    def do_evaluate(self, version_id, params=None, queue=False, **_):
        version = self._version(version_id)
        queue = queue and not settings.CELERY_TASK_ALWAYS_EAGER  # the embedded stack runs it here
        start = enqueue_evaluation if queue else training.create_evaluation_run
        try:
            return self._run(lambda: start(version, _json(params), user="manage.py models"), queue)
        except TrainingError as exc:
            raise CommandError(str(exc))

    def do_activate(self, version_id, **_):
        version = activate_version(self._version(version_id), user="manage.py models")
        self.stdout.write(self.style.SUCCESS(f"{version} is now active"))

    def do_rollback(self, kind, scope="", **_):
        kind = self._kind(kind)
        try:
            version = rollback(kind, scope, user="manage.py models")
        except RegistryError as exc:
            raise CommandError(str(exc))
        self.stdout.write(self.style.SUCCESS(f"rolled back: {version} is active"))

    def do_delete(self, version_id, **_):
        version = self._version(version_id)
        label = str(version)
        try:
            delete_version(version)
        except RegistryError as exc:
            raise CommandError(str(exc))
        self.stdout.write(self.style.SUCCESS(f"deleted {label}"))

    def do_upload(self, file, kind, scope="", config=None, notes="", activate=False, **_):
        if not Path(file).is_file():
            raise CommandError(f"{file}: no such file")
        kind = self._kind(kind)
        try:
            version = upload_version(kind, scope, file, _json(config), notes=notes, activate=activate,
                                     user="manage.py models")
        except UploadRejected as exc:
            raise CommandError(f"rejected: {exc}")
        self.stdout.write(self.style.SUCCESS(f"uploaded {version} ({version.weights_bytes / 1e6:.2f} MB)"))

    # --- helpers -------------------------------------------------------------------------------------------
    def _kind(self, kind: str | None) -> str | None:
        """The kind's name now: an old name (``kinds.alias``) still works, and the command says what it is now."""
        new = kinds.renamed(kind) if kind else None
        if new is None:
            return kind
        self.stderr.write(f"the kind {kind} is now {new} (the old name goes after this release)")
        return new

    def _version(self, version_id):
        version = ModelVersion.objects.filter(pk=version_id).first()
        if version is None:
            raise CommandError(f"no model version {version_id} (see manage.py models list)")
        return version

    def _run(self, start, queue: bool):
        """Start the run: queued (a bar following the row the worker writes), else created and executed here
        (the task body, with a bar fed by its reports)."""
        if queue:
            with transaction.atomic():
                run = start()
            bar = progress(total=100, desc=f"{run.job} {run.kind} {run.scope}".strip(), unit="%")
            while True:  # follow the row the worker writes
                run.refresh_from_db()
                self._show(bar, run.progress, run.metric_name, run.metric_value)
                if run.done:
                    break
                time.sleep(0.5)
        else:
            run = start()
            bar = progress(total=100, desc=f"{run.job} {run.kind} {run.scope}".strip(), unit="%")
            run = training.execute(run.pk, listener=lambda r: self._show(bar, r.percent, *(r.current_metric or ("", None))))
            self._show(bar, run.progress, run.metric_name, run.metric_value)
        bar.close()
        if run.status != "succeeded":
            tail = "\n".join(run.log.splitlines()[-15:])
            raise CommandError(f"run #{run.pk} {run.status}: {run.error}\n{tail}")
        version = run.result_version or run.target_version
        version.refresh_from_db()
        if run.job == "evaluate":
            self.stdout.write(json.dumps(version.metrics.get("eval", {}), indent=1))
        self.stdout.write(self.style.SUCCESS(f"run #{run.pk} succeeded: {version}"))

    @staticmethod
    def _show(bar, percent, metric_name, metric_value):
        bar.n = round(float(percent), 1)
        if metric_name and metric_value is not None:
            bar.set_postfix({metric_name: f"{metric_value:.4f}"}, refresh=False)
        bar.refresh()
