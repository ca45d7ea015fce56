"""Loaded with `-p tests.isolation` (pytest.ini) before pytest-django reads the settings:
keeps test traffic (Celery queue, channel-layer prefix, Redis databases) apart from a
developer's running site on the same Redis."""
import os

os.environ.setdefault("MTG_CHANNEL_PREFIX", f"mtgtest{os.getpid()}")
os.environ.setdefault("CELERY_DEFAULT_QUEUE", f"mtgtest{os.getpid()}")
os.environ.setdefault("REDIS_CACHE_URL", "redis://127.0.0.1:6379/11")
os.environ.setdefault("REDIS_CHANNELS_URL", "redis://127.0.0.1:6379/12")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/13")
# Set in this process only while a browser test's Playwright runs (tests/browser.py), never for the
# whole run: inherited from the shell, it would let a blocking database call in async code pass here.
os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
