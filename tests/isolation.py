"""Loaded with `-p tests.isolation` (pytest.ini) before pytest-django reads the settings:
keeps test traffic (Celery queue, channel-layer prefix, Redis databases) apart from a
developer's running site on the same Redis, and turns the abuse limits off (a whole run from one test client
would pass them; tests/mtgsite/test_limits.py and the other limits tests turn them on)."""
import os

os.environ.setdefault("MTG_CHANNEL_PREFIX", f"mtgtest{os.getpid()}")
os.environ.setdefault("CELERY_DEFAULT_QUEUE", f"mtgtest{os.getpid()}")
os.environ.setdefault("REDIS_CACHE_URL", "redis://127.0.0.1:6379/11")
os.environ.setdefault("REDIS_CHANNELS_URL", "redis://127.0.0.1:6379/12")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/13")
os.environ.setdefault("MTG_LIMIT_ENABLED", "0")
