"""Model management pages (staff only): versions with their metrics side by side, activate, roll back,
evaluate, delete unused versions, start a training run, follow it live, upload a weights file.

Anonymous visitors are sent to the login page; signed-in people who are not staff get a 403.
"""
from __future__ import annotations

import json
from collections import OrderedDict

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from ml import kinds, registry, training
from ml.metric_labels import metric_label
from ml.models import ModelVersion, TrainingRun
from ml.safetensors_check import UploadRejected
from ml.tasks import cancel, enqueue_evaluation, enqueue_training
from plumbing.staff import staff_only

METRIC_COLUMNS = 12  # the most metric columns a group's table shows


class JSONField(forms.CharField):
    def clean(self, value):
        value = super().clean(value)
        if not value:
            return {}
        try:
            data = json.loads(value)
        except ValueError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc}")
        if not isinstance(data, dict):
            raise forms.ValidationError("Give a JSON object, e.g. {\"epochs\": 3}.")
        return data


def trainable_choices():
    return kinds.choices(lambda kind: kind.train is not None)


def uploadable_choices():
    return kinds.choices(lambda kind: kind.shapes is not None)


class TrainForm(forms.Form):
    kind = forms.ChoiceField(choices=trainable_choices)
    scope = forms.CharField(required=False, max_length=40,
                            help_text="Draft bots: FAMILY:SET, e.g. archetype:BLB or neural:DSK. Empty for the others.")
    parameters = JSONField(required=False, widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false"}),
                           help_text='JSON, e.g. {"epochs": 5}; added to (and overriding) the quick preset.')
    quick = forms.BooleanField(required=False, initial=True, label="Quick preset (a tiny run for smoke checks)")
    activate = forms.BooleanField(required=False, label="Activate the new version when it finishes")
    refit = forms.BooleanField(required=False, label="Refit on every deck the site has (split_date = latest)",
                               help_text="After importing new decks: the same recipe trained up to the newest corpus "
                                         "deck (deck completion kinds); the version the site ships.")

    def clean(self):
        data = super().clean()
        if data.get("refit"):
            data["parameters"] = {**(data.get("parameters") or {}), "split_date": "latest"}
        if "kind" in data:
            try:
                training.validate(data["kind"], (data.get("scope") or "").strip())
            except kinds.TrainingError as exc:
                raise forms.ValidationError(str(exc))
        return data


class UploadForm(forms.Form):
    kind = forms.ChoiceField(choices=uploadable_choices)
    scope = forms.CharField(required=False, max_length=40, help_text="Draft bots: FAMILY:SET.")
    config = JSONField(widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false"}),
                       help_text="The version's config JSON: the tensors are checked against it.")
    file = forms.FileField(help_text="A .safetensors file (nothing else is accepted; never unpickled).")
    notes = forms.CharField(required=False, max_length=200,
                            help_text="What this version is; left empty, its kind, size and metrics say it.")
    activate = forms.BooleanField(required=False, label="Activate it")


def version_groups():
    """[(kind label, scope, versions, metric columns, rows)] with the union of flattened metric keys; each column
    carries its key and its heading in words (ml.metric_labels)."""
    groups = OrderedDict()
    for v in ModelVersion.objects.order_by("kind", "scope", "-version"):
        groups.setdefault((v.kind, v.scope), []).append(v)
    out = []
    for (kind, scope), versions in groups.items():
        flats = [training.flat_metrics(v.metrics) for v in versions]
        keys = []
        for flat in flats:
            keys += [k for k in flat if k not in keys]
        preferred = [k for k in keys if k.startswith("eval.")] + [k for k in keys if not k.startswith("eval.")]
        columns = preferred[:METRIC_COLUMNS]
        rows = []
        for v, flat in zip(versions, flats):
            refs = registry.references(v)
            rows.append({"v": v, "cells": [_fmt(flat.get(k)) for k in columns], "refs": refs,
                         "deletable": not v.active and not refs})
        out.append({"kind": kind, "label": kinds.label(kind), "scope": scope, "rows": rows,
                    "columns": [{"key": k, "label": metric_label(k)} for k in columns],
                    "active": next((v for v in versions if v.active), None)})
    return out


def _fmt(value):
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) < 10 else f"{value:,.1f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _page(request, train_form=None, upload_form=None, status=200):
    return render(request, "ml/models.html", {
        "groups": version_groups(), "runs": TrainingRun.objects.select_related("result_version", "target_version")[:15],
        "train_form": train_form or TrainForm(), "upload_form": upload_form or UploadForm(),
        "upload_limit_mb": settings.MTG_MODEL_UPLOAD_MAX_BYTES / 1e6, "stack": settings.STACK,
    }, status=status)


@staff_only
@require_GET
def models_page(request):
    return _page(request)


@staff_only
@require_POST
def train(request):
    form = TrainForm(request.POST)
    if not form.is_valid():
        return _page(request, train_form=form, status=400)
    data = form.cleaned_data
    try:
        run = enqueue_training(data["kind"], (data.get("scope") or "").strip(), data["parameters"],
                               quick=data["quick"], activate=data["activate"], user=request.user.get_username())
    except kinds.TrainingError as exc:
        form.add_error(None, str(exc))
        return _page(request, train_form=form, status=400)
    return redirect("ml-run", run_id=run.pk)


@staff_only
@require_POST
def upload(request):
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, upload_form=form, status=400)
    data = form.cleaned_data
    try:
        version = registry.upload_version(data["kind"], (data.get("scope") or "").strip(), data["file"], data["config"],
                                          notes=data.get("notes") or "", activate=data["activate"],
                                          user=request.user.get_username())
    except UploadRejected as exc:
        form.add_error("file", f"Rejected: {exc} Nothing was saved.")
        return _page(request, upload_form=form, status=400)
    messages.success(request, f"Uploaded {version} ({version.weights_bytes / 1e6:.2f} MB).")
    return redirect("ml-models")


@staff_only
@require_POST
def activate(request, version_id: int):
    version = get_object_or_404(ModelVersion, pk=version_id)
    registry.activate_version(version, user=request.user.get_username())
    messages.success(request, f"{version} is now active.")
    return redirect("ml-models")


@staff_only
@require_POST
def rollback(request):
    kind, scope = request.POST.get("kind", ""), request.POST.get("scope", "")
    try:
        version = registry.rollback(kind, scope, user=request.user.get_username())
    except registry.RegistryError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Rolled back: {version} is active again.")
    return redirect("ml-models")


@staff_only
@require_POST
def delete(request, version_id: int):
    version = get_object_or_404(ModelVersion, pk=version_id)
    label = str(version)
    try:
        registry.delete_version(version)
    except registry.RegistryError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Deleted {label}.")
    return redirect("ml-models")


@staff_only
@require_POST
def evaluate(request, version_id: int):
    version = get_object_or_404(ModelVersion, pk=version_id)
    try:
        run = enqueue_evaluation(version, user=request.user.get_username())
    except kinds.TrainingError as exc:
        messages.error(request, str(exc))
        return redirect("ml-models")
    return redirect("ml-run", run_id=run.pk)


@staff_only
@require_GET
def run_detail(request, run_id: int):
    run = get_object_or_404(TrainingRun.objects.select_related("result_version", "target_version"), pk=run_id)
    return render(request, "ml/run.html", {"run": run, "payload": training.run_payload(run)})


@staff_only
@require_GET
def run_json(request, run_id: int):
    run = get_object_or_404(TrainingRun, pk=run_id)
    return JsonResponse(training.run_payload(run))


@staff_only
@require_POST
def run_cancel(request, run_id: int):
    run = get_object_or_404(TrainingRun, pk=run_id)
    if cancel(run):
        messages.success(request, f"Run #{run.pk} cancelled.")
    return redirect("ml-run", run_id=run.pk)
