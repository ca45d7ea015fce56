"""Model registry: trained versions of every model kind, one active per (kind, scope).

A row's ``kind`` is one the apps registered with ``ml.kinds`` (no choices list here: a new kind needs no ``ml``
migration); ``clean()`` and ``save()`` refuse any other before a row is written.
"""
from django.core.exceptions import ValidationError
from django.db import models

from ml import kinds
from plumbing.jobs import JobRow


def check_kind(kind: str) -> None:
    """``ValidationError`` (on the ``kind`` field) unless ``kind`` is a registered kind's name."""
    if kinds.get(kind) is None or kinds.canonical(kind) != kind:
        message = kinds.renamed(kind) or f"unknown model kind {kind!r} (registered kinds: {', '.join(kinds.names())})"
        raise ValidationError({"kind": message})


class KindChecked(models.Model):
    """A row whose ``kind`` is checked against the registered kinds in ``clean()`` and ``save()``."""

    class Meta:
        abstract = True

    def clean(self):
        super().clean()
        check_kind(self.kind)

    def save(self, *args, **kwargs):
        check_kind(self.kind)
        super().save(*args, **kwargs)


class ModelVersion(KindChecked):
    kind = models.CharField(max_length=30, db_index=True)
    scope = models.CharField(max_length=40, blank=True, default="", help_text="e.g. a set code for draft bots")
    version = models.PositiveIntegerField()
    config = models.JSONField(default=dict)
    weights_path = models.CharField(max_length=400, help_text="safetensors file (relative to the repo or MTG_MODEL_DIR)")
    weights_sha256 = models.CharField(max_length=64)
    weights_bytes = models.PositiveBigIntegerField(default=0)
    metrics = models.JSONField(default=dict, blank=True)
    data_snapshot = models.JSONField(default=dict, blank=True, help_text="what it was trained on")
    code_version = models.CharField(max_length=64, blank=True)
    notes = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    active = models.BooleanField(default=False)

    class Meta:
        ordering = ["kind", "scope", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "scope", "version"], name="modelversion_unique_version"),
            models.UniqueConstraint(fields=["kind", "scope"], condition=models.Q(active=True),
                                    name="modelversion_one_active"),
        ]

    def __str__(self):
        scope = f"[{self.scope}]" if self.scope else ""
        return f"{self.kind}{scope} v{self.version}{' (active)' if self.active else ''}"


class ActivationEvent(models.Model):
    """One activation of a version (by hand, by a training run, or by a rollback): the history
    ``rollback`` walks back through. ``previous`` is the version that was active just before."""
    kind = models.CharField(max_length=30, db_index=True)
    scope = models.CharField(max_length=40, blank=True, default="")
    version = models.ForeignKey(ModelVersion, on_delete=models.CASCADE, related_name="activations")
    previous = models.ForeignKey(ModelVersion, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    action = models.CharField(max_length=12, default="activate", choices=[("activate", "activate"), ("rollback", "rollback")])
    user = models.CharField(max_length=150, blank=True, default="")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"{self.action} {self.version} (was {self.previous or 'none'})"


class TrainingRun(KindChecked, JobRow):
    """A training or evaluation job (a Celery task on the training queue) and what it reports."""
    STATUSES = [(s, s) for s in ("queued", "running", "succeeded", "failed", "cancelled")]
    JOBS = [("train", "train"), ("evaluate", "evaluate")]
    LOG_LIMIT = 20_000  # characters of log kept (the tail)

    job = models.CharField(max_length=10, choices=JOBS, default="train")
    kind = models.CharField(max_length=30)
    scope = models.CharField(max_length=40, blank=True, default="")
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=STATUSES, default="queued", db_index=True)
    progress = models.FloatField(default=0.0, help_text="percent, 0..100")
    metric_name = models.CharField(max_length=60, blank=True, default="")
    metric_value = models.FloatField(null=True, blank=True)
    message = models.CharField(max_length=200, blank=True, default="")
    log = models.TextField(blank=True, default="")
    created = models.DateTimeField(auto_now_add=True)
    created_by = models.CharField(max_length=150, blank=True, default="")
    task_id = models.CharField(max_length=64, blank=True, default="")
    target_version = models.ForeignKey(ModelVersion, null=True, blank=True, on_delete=models.PROTECT,
                                       related_name="evaluations", help_text="the version an evaluation scores")
    result_version = models.ForeignKey(ModelVersion, null=True, blank=True, on_delete=models.PROTECT,
                                       related_name="training_runs", help_text="the version a training run made")

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"{self.job} {self.kind}{f'[{self.scope}]' if self.scope else ''} #{self.pk} ({self.status})"

    @property
    def done(self) -> bool:
        return self.status in ("succeeded", "failed", "cancelled")
