"""The device the site's models run on: ``device()`` resolves the setting ``MTG_DEVICE`` (auto|cpu|cuda).

Every place that picks a device calls it: the Celery worker at start-up (a ``cuda`` asked for but absent stops
it with the reason), ``manage.py complete_batch`` and ``models train`` (the training kinds' ``device``
parameter defaults to it), and the completers the workers build.
"""
from __future__ import annotations

from django.conf import settings

from common.device import resolve_device


def device() -> str:
    """``"cpu"`` or ``"cuda"``; raises ``common.device.DeviceUnavailable`` for ``MTG_DEVICE=cuda`` without a GPU."""
    return resolve_device(settings.MTG_DEVICE)
