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
# Set in this process only while a browser test's Playwright runs (tests/browser.py), never for the
# whole run: inherited from the shell, it would let a blocking database call in async code pass here.
os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
# the abuse limits (mtgsite/limits.py) are off for the suite, whose one test client would pass every
# quota; the limits' own tests turn them on
os.environ.setdefault("MTG_LIMIT_ENABLED", "0")
