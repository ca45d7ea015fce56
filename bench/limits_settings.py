"""Settings of bench/limits.py on the embedded stack: SQLite and the local-memory cache as usual, but deck
completions go through a real queue to a separate Celery worker, as on the services stack, without Redis: kombu's
filesystem transport in BENCH_QUEUE_DIR."""
import os

from mtgsite.settings import *  # noqa: F403 - the site's settings, three of them changed below

CELERY_BROKER_URL = "filesystem://"
_QUEUE = os.environ["BENCH_QUEUE_DIR"]
CELERY_BROKER_TRANSPORT_OPTIONS = {"data_folder_in": _QUEUE, "data_folder_out": _QUEUE, "polling_interval": 0.05,
                                   "control_folder": os.path.join(_QUEUE, "control")}
CELERY_TASK_ALWAYS_EAGER = False
