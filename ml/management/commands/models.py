"""The model management pages from the command line, and the one front door to train and evaluate any kind:

    manage.py models list [--kind KIND]
    manage.py models kinds
    manage.py models train KIND [--scope S] [--quick] [--activate | --activate-if-better] [--param KEY=VALUE ...]
                                [--params JSON|@file.json] [--notes TEXT] [--queue]
    manage.py models evaluate VERSION_ID|KIND [--scope S] [--param KEY=VALUE ...] [--params JSON] [--out FILE] [--queue]
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

from plumbing.progress import progress
from ml import kinds, training
from ml.kinds import TrainingError
from ml.models import ModelVersion
from ml.registry import RegistryError, activate_version, active_version, delete_version, rollback, upload_version
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


def parameters(params: str | None, param: list[str] | None) -> dict:
    """``--params`` (a JSON object) overridden by each ``--param KEY=VALUE`` (text, cast to the kind's type when
    the run is created: see PARAMETERS)."""
    out = _json(params)
    for item in param or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CommandError(f"--param {item!r}: give KEY=VALUE")
        out[key.strip()] = value
    return out


PARAMETERS = """\
Parameters of a kind (`models kinds` lists them with their types): --param KEY=VALUE, repeated, over --params
JSON. Text is cast to the parameter's type: int, float, str; bool: true/false, yes/no, on/off, 1/0 (a flag of
a former command, e.g. --consented, is --param consented=true); list: a JSON list or a,b,c (numbers read as
numbers); dict: a JSON object (--param 'net={"hidden": [64]}'); file path: the file must exist. Unknown names
and wrong types are refused before any run is written."""


class Command(BaseCommand):
    help = ("List, train, evaluate, activate, roll back, delete and upload model versions: the one front door to "
            "train and evaluate every registered kind (`models kinds`). " + PARAMETERS)

    def create_parser(self, prog_name, subcommand, **kwargs):
        from argparse import RawDescriptionHelpFormatter  # noqa: PLC0415 the help keeps its lines (PARAMETERS)

        return super().create_parser(prog_name, subcommand, formatter_class=RawDescriptionHelpFormatter, **kwargs)

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        p = sub.add_parser("list")
        p.add_argument("--kind")
        sub.add_parser("kinds", help="the registered kinds, with their parameters and types")
        p = sub.add_parser("train", help="train a version of KIND", epilog=PARAMETERS)
        p.add_argument("kind")
        p.add_argument("--scope", default="")
        p.add_argument("--quick", action="store_true", help="the kind's tiny preset (the parameters given override it)")
        activation = p.add_mutually_exclusive_group()
        activation.add_argument("--activate", action="store_true", help="activate the new version")
        activation.add_argument("--activate-if-better", action="store_true",
                                help="activate it when it beats the active version (or none is active)")
        self._parameter_arguments(p)
        p.add_argument("--notes", default=None, help="what the version is (default: its kind, data, size, metric)")
        p.add_argument("--queue", action="store_true", help="send it to the training queue and follow it")
        p = sub.add_parser("evaluate", help="evaluate a version (VERSION_ID, or KIND: its active version)",
                           epilog=PARAMETERS)
        p.add_argument("target", help="a version id, or a kind (its active version of --scope)")
        p.add_argument("--scope", default="")
        self._parameter_arguments(p)
        p.add_argument("--out", help="also write the metrics to this JSON file")
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

    @staticmethod
    def _parameter_arguments(p):
        p.add_argument("--param", action="append", metavar="KEY=VALUE", help="a parameter (repeat it)")
        p.add_argument("--params", help="JSON object of parameters (or @file.json)")

    def handle(self, *args, action, **opts):
        return getattr(self, f"do_{action}")(**opts) or ""

    def _kind(self, kind: str | None) -> str | None:
        """The kind's name now; an old name's notice on stderr ("game_policy is now game_value")."""
        if not kind:
            return kind
        notice = kinds.renamed(kind)
        if notice:
            self.stderr.write(notice)
        return kinds.canonical(kind)

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

    def do_kinds(self, **_):
        for name in kinds.names():
            kind = kinds.get(name)
            jobs = "/".join(job for job, fn in (("train", kind.train), ("evaluate", kind.evaluate)) if fn) or "upload"
            self.stdout.write(f"{name:<16} {kind.label or name} ({jobs})")
            for title, allowed in (("train", kind.parameters), ("evaluate", kind.evaluate_parameters or {})):
                if allowed:
                    self.stdout.write(f"  {title}: " + ", ".join(f"{key}={kinds.type_name(cast)}"
                                                                   for key, cast in allowed.items()))

    def do_train(self, kind, scope="", quick=False, activate=False, activate_if_better=False, param=None,
                 params=None, notes=None, queue=False, **_):
        kind = self._kind(kind)
        given = parameters(params, param)
        if notes is not None:
            given["notes"] = notes
        queue = queue and not settings.CELERY_TASK_ALWAYS_EAGER  # the embedded stack runs it here
        start = enqueue_training if queue else training.create_training_run
        how = training.IF_BETTER if activate_if_better else activate
        try:
            return self._run(lambda: start(kind, scope, given, quick=quick, activate=how, user="manage.py models"),
                             queue)
        except TrainingError as exc:
            raise CommandError(str(exc))

    def do_evaluate(self, target, scope="", param=None, params=None, out=None, queue=False, **_):
        if target.isdigit():
            version = self._version(int(target))
        else:
            kind = self._kind(target)
            version = active_version(kind, scope, required=False)
            if version is None:
                raise CommandError(f"no active {kind}{f' [{scope}]' if scope else ''} version to evaluate "
                                   f"(give a version id: manage.py models list)")
        queue = queue and not settings.CELERY_TASK_ALWAYS_EAGER  # the embedded stack runs it here
        start = enqueue_evaluation if queue else training.create_evaluation_run
        try:
            self._run(lambda: start(version, parameters(params, param), user="manage.py models"), queue)
        except TrainingError as exc:
            raise CommandError(str(exc))
        if out:
            version.refresh_from_db()
            Path(out).write_text(json.dumps(version.metrics.get("eval", {}), indent=1))

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
