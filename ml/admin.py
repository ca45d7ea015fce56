"""Django admin for the registry (the staff pages at /models/ are the main tool)."""
from django.contrib import admin

from ml.models import ActivationEvent, ModelVersion, TrainingRun


@admin.register(ModelVersion)
class ModelVersionAdmin(admin.ModelAdmin):
    list_display = ("kind", "scope", "version", "active", "weights_bytes", "created", "notes")
    list_filter = ("kind", "active")
    search_fields = ("scope", "notes", "weights_sha256")
    readonly_fields = ("weights_path", "weights_sha256", "weights_bytes", "created", "active")


@admin.register(TrainingRun)
class TrainingRunAdmin(admin.ModelAdmin):
    list_display = ("id", "job", "kind", "scope", "status", "progress", "metric_name", "metric_value", "created",
                    "created_by")
    list_filter = ("job", "kind", "status")
    readonly_fields = ("log", "error", "task_id", "started", "finished", "result_version", "target_version")


@admin.register(ActivationEvent)
class ActivationEventAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "scope", "version", "previous", "action", "user", "created")
    list_filter = ("kind", "action")
