"""Celery app. In the embedded stack tasks run eagerly (CELERY_TASK_ALWAYS_EAGER)."""
import os

from celery import Celery
from celery.signals import worker_init

from common.device import DeviceUnavailable

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mtgsite.settings")

# the subpackages of apps that have their own tasks.py (online pods, the gauntlet, the game review), found beside each app's own
TASK_PACKAGES = ["drafts.pods", "gameplay.gauntlet", "gameplay.review"]

app = Celery("mtgsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # <app>.tasks of every installed app
app.autodiscover_tasks(TASK_PACKAGES)


@worker_init.connect
def check_device(**_kwargs) -> None:
    """A worker started with MTG_DEVICE=cuda where torch sees no GPU stops with the reason (no silent CPU run)."""
    from plumbing.device import device  # noqa: PLC0415 Django settings: only once the worker starts

    try:
        device()
    except DeviceUnavailable as exc:
        raise SystemExit(f"Celery worker not started: {exc}") from None
