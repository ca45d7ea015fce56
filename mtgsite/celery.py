"""Celery app. In the embedded stack tasks run eagerly (CELERY_TASK_ALWAYS_EAGER)."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mtgsite.settings")

app = Celery("mtgsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
