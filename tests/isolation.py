"""Loaded with `-p tests.isolation` (pytest.ini) before pytest-django reads the settings:
keeps test traffic (Celery queue, channel-layer prefix, Redis databases) apart from a
developer's running site on the same Redis, and turns the abuse limits off (a whole run from one test client
would pass them; tests/plumbing/test_limits.py and the other limits tests turn them on).

Under pytest-xdist (`make test` runs each stack on three workers) every worker is its own process with its own
Redis databases, queue, channel prefix, var folder and test database (pytest-django suffixes the database
name with the worker id), so two workers never see each other's keys, jobs or rows: a pod id or a cache key
that is the same number in both test databases must not meet in one Redis database."""
import os

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ... in an xdist worker; unset otherwise
# Redis databases: 13-15 for a plain run; 3-5, 6-8, 9-11 for xdist workers gw0, gw1, gw2 (0-2 are the site's own;
# Redis has 16 by default, so three workers at most)
_REDIS_BASES = {"": 13, "gw0": 3, "gw1": 6, "gw2": 9}
if _worker not in _REDIS_BASES:
    raise RuntimeError(f"tests/isolation.py: no Redis databases set aside for xdist worker {_worker} (at most three workers)")
_base = _REDIS_BASES[_worker]
_ours = {
    "MTG_CHANNEL_PREFIX": f"mtgtest{os.getpid()}",
    "CELERY_DEFAULT_QUEUE": f"mtgtest{os.getpid()}",
    "REDIS_CACHE_URL": f"redis://127.0.0.1:6379/{_base}",
    "REDIS_CHANNELS_URL": f"redis://127.0.0.1:6379/{_base + 1}",
    "REDIS_URL": f"redis://127.0.0.1:6379/{_base + 2}",
}
# An xdist worker inherits the environment of the process that started it, this module's defaults included:
# the keys this module chose there (listed in MTG_TEST_DEFAULTS) are chosen again for the worker; a key the
# person running the tests set stays theirs.
_chosen_by_us = set(filter(None, os.environ.get("MTG_TEST_DEFAULTS", "").split(",")))
for _key, _value in _ours.items():
    if _key not in os.environ or _key in _chosen_by_us:
        os.environ[_key] = _value
        _chosen_by_us.add(_key)
os.environ["MTG_TEST_DEFAULTS"] = ",".join(sorted(_chosen_by_us))
if _worker:
    # the worker's own var folder: its SQLite files, cached arrays and model files never meet the other's
    _root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ.setdefault("MTG_VAR_DIR", os.path.join(_root, "var", f"xdist-{_worker}"))
    os.makedirs(os.environ["MTG_VAR_DIR"], exist_ok=True)
# Set in this process only while a browser test's Playwright runs (tests/browser.py), never for the
# whole run: inherited from the shell, it would let a blocking database call in async code pass here.
os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
# the abuse limits (plumbing/limits.py) are off for the suite, whose one test client would pass every
# quota; the limits' own tests turn them on
os.environ.setdefault("MTG_LIMIT_ENABLED", "0")
