"""Settings for the MTG AI site, read only from environment variables.

Two stacks share one code path (see README "Stacks"):

* ``MTG_STACK=embedded`` (the default): SQLite, in-memory cache and channel layer,
  Celery tasks run eagerly in-process. Nothing to install.
* ``MTG_STACK=services``: PostgreSQL, Redis (Celery broker + result store, cache,
  channel layer), separate Celery worker and Daphne processes.
"""
import os
import warnings
import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from common.device import CHOICES as DEVICE_CHOICES

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name, default=None):
    return os.environ.get(name, default)


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


STACK = env("MTG_STACK", "embedded")
if STACK not in {"embedded", "services"}:
    raise RuntimeError(f"MTG_STACK must be 'embedded' or 'services', not {STACK!r}")

# Debug pages (every URL pattern on a 404, tracebacks on a 500) only when asked for: `make run` asks
# for them (DJANGO_DEBUG=1, printed at start); everything else (tests, Docker, a bare daphne) runs without.
DEBUG = env_bool("DJANGO_DEBUG", False)
# DJANGO_SECURE=1 (the Docker set-up): HTTPS only, secure cookies, HSTS; `manage.py check --deploy` clean.
SECURE = env_bool("DJANGO_SECURE", False)


def local_secret_key(path: Path) -> str:
    """A key made once for this checkout and kept in ``path`` (var/secret_key, mode 0600, git-ignored):
    every process of a local run (Daphne, Celery workers, manage.py, the tests and their children)
    reads the same one, so sessions and signed values stay valid across them and across restarts.
    The file appears whole (written aside, then linked into place), so a process starting at the
    same moment reads either nothing (and makes its own, which loses the race) or the whole key."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        aside = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secrets.token_urlsafe(50) + "\n")
        try:
            os.link(aside, path)
        except FileExistsError:
            pass  # another process made it first: its key is the one
        finally:
            aside.unlink()
    return path.read_text(encoding="ascii").strip()


SECRET_KEY = env("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if SECURE:
        raise ImproperlyConfigured("DJANGO_SECURE=1 needs DJANGO_SECRET_KEY (50+ random characters, kept secret)")
    SECRET_KEY = local_secret_key(BASE_DIR / "var" / "secret_key")
ALLOWED_HOSTS = [h for h in env("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",") if h]
CSRF_TRUSTED_ORIGINS = [o for o in env("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

# Sent on every response (Django's defaults, spelled out): no MIME sniffing, no framing, no referrer
# to other sites.
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
if SECURE:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(env("DJANGO_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    # Plain HTTP is redirected to HTTPS; behind a TLS proxy that redirects itself, DJANGO_SSL_REDIRECT=0.
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", True)
# Behind a TLS-terminating proxy: the header it sets on HTTPS requests, "HTTP_X_FORWARDED_PROTO" (value
# "https") or "NAME=value". Only set it when the proxy always sets (or strips) that header.
_proxy_header = env("DJANGO_PROXY_SSL_HEADER", "")
if _proxy_header:
    _name, _, _value = _proxy_header.partition("=")
    SECURE_PROXY_SSL_HEADER = (_name.strip(), _value.strip() or "https")

# Real data lives outside the repo (../shared/data by default).
_default_data = BASE_DIR.parent / "shared" / "data"
MTG_DATA_DIR = Path(env("MTG_DATA_DIR", str(_default_data)))
VAR_DIR = Path(env("MTG_VAR_DIR", str(BASE_DIR / "var")))
# Trained model versions (safetensors) and cached training arrays; the shipped defaults live in ml/weights/.
MTG_MODEL_DIR = Path(env("MTG_MODEL_DIR", str(VAR_DIR / "models")))
# The torch device of the workers and commands (MTG_DEVICE): auto (cuda when torch sees a GPU, else cpu), cpu or
# cuda (a worker or command asked for cuda without a GPU stops at start-up with the reason). Resolved by
# plumbing.device.device().
MTG_DEVICE = env("MTG_DEVICE", "auto").strip().lower()
if MTG_DEVICE not in DEVICE_CHOICES:
    raise ImproperlyConfigured(f"MTG_DEVICE must be one of {', '.join(DEVICE_CHOICES)}, not {MTG_DEVICE!r}")
MTG_MODEL_UPLOAD_MAX_BYTES = int(env("MTG_MODEL_UPLOAD_MAX_BYTES", str(64 * 1024 * 1024)))
# How often a training run writes its progress, metric and log tail to its row (seconds).
MTG_TRAINING_REPORT_SECONDS = float(env("MTG_TRAINING_REPORT_SECONDS", "0.5"))
# Deck completions one inference task claims and samples as one batch.
COMPLETION_BATCH_SIZE = int(env("COMPLETION_BATCH_SIZE", "8"))
# A completion job queued or running longer than this (its worker died) counts against nobody's in-flight cap.
COMPLETION_STALE_SECONDS = int(env("COMPLETION_STALE_SECONDS", "900"))
MTG_DATASET_DIR = Path(env("MTG_DATASET_DIR", str(VAR_DIR / "datasets")))
# card ratings from simulated pods (python -m bench.draft_games), shown beside the draft pick suggestions
MTG_SIM_RATINGS = Path(env("MTG_SIM_RATINGS", str(BASE_DIR / "bench" / "results" / "draft_games.json")))

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "channels",
    "decks",
    "drafts",
    "gameplay",
    "ml",
    "mtgsite",  # the site's own management commands (setup_site)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "plumbing.middleware.DatabaseUnavailableMiddleware",  # a lost database connection: 503 and Retry-After
]

ROOT_URLCONF = "mtgsite.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "plumbing.context.site",
            ],
        },
    },
]
WSGI_APPLICATION = None
ASGI_APPLICATION = "mtgsite.asgi.application"

# --- databases -------------------------------------------------------------
if STACK == "services":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": env("POSTGRES_DB", "mtg"),
            "USER": env("POSTGRES_USER", "postgres"),
            "PASSWORD": env("POSTGRES_PASSWORD", ""),
            "HOST": env("POSTGRES_HOST", "127.0.0.1"),
            "PORT": env("POSTGRES_PORT", "5432"),
            "CONN_MAX_AGE": int(env("POSTGRES_CONN_MAX_AGE", "0")),
            # a kept connection that PostgreSQL dropped (a restart, pg_terminate_backend) is replaced before reuse
            "CONN_HEALTH_CHECKS": True,
            "TEST": {"NAME": env("POSTGRES_TEST_DB", "test_mtg")},
        }
    }
    # The pod sockets' database thread keeps its connection this long (drafts/consumers.py); the
    # rest of the site keeps CONN_MAX_AGE (0: Django's advice under ASGI, one thread per request).
    POD_DB_CONN_MAX_AGE = int(env("POD_DB_CONN_MAX_AGE", "300"))
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env("SQLITE_PATH", str(VAR_DIR / "mtg.sqlite3")),
            "OPTIONS": {"timeout": 30, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"},
            # A file (not :memory:) so that a Daphne subprocess in the tests sees the same data.
            "TEST": {"NAME": env("SQLITE_TEST_PATH", str(VAR_DIR / "test_mtg.sqlite3"))},
        }
    }
    POD_DB_CONN_MAX_AGE = 0  # SQLite: the pod sockets' thread keeps no connection of its own
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- redis: cache, channel layer, celery -------------------------------------
REDIS_URL = env("REDIS_URL", "redis://127.0.0.1:6379/0")
# The services stack's channel layer (MTG_CHANNEL_LAYER): "pubsub", channels_redis' pub/sub layer (a group message
# is one PUBLISH each subscribed process gets once; plumbing/channel_layer.py closes the sockets of a lost Redis
# connection), or "core", its sorted-set queue per channel. pubsub held more pods under 200 ms (docs/reliability.md).
CHANNEL_LAYER_BACKENDS = {"pubsub": "plumbing.channel_layer.RedisPubSubChannelLayer",
                          "core": "channels_redis.core.RedisChannelLayer"}
MTG_CHANNEL_LAYER = env("MTG_CHANNEL_LAYER", "pubsub")
if MTG_CHANNEL_LAYER not in CHANNEL_LAYER_BACKENDS:
    raise ImproperlyConfigured(f"MTG_CHANNEL_LAYER must be one of {sorted(CHANNEL_LAYER_BACKENDS)}, not {MTG_CHANNEL_LAYER!r}")
if STACK == "services":
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": env("REDIS_CACHE_URL", "redis://127.0.0.1:6379/1")}}
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": CHANNEL_LAYER_BACKENDS[MTG_CHANNEL_LAYER],
            # socket_timeout=None: redis-py 8 times reads out after 5 s by default, which kills idle
            # consumers in channels_redis 4.3 (django/channels_redis#422).
            "CONFIG": {
                "hosts": [{"address": env("REDIS_CHANNELS_URL", "redis://127.0.0.1:6379/2"), "socket_timeout": None}],
                "prefix": env("MTG_CHANNEL_PREFIX", "mtg"),
            },
        }
    }
    CELERY_BROKER_URL = env("CELERY_BROKER_URL", REDIS_URL)
    CELERY_RESULT_BACKEND = env("CELERY_RESULT_BACKEND", REDIS_URL)
    CELERY_TASK_ALWAYS_EAGER = False
    # A task's message stays unacknowledged while it runs (late acks, below); when its worker dies
    # (kill -9, out of memory) Redis hands it to another worker once it has been out this long. Longer
    # than any task that is not guarded against running twice (advice: 180 s at most; pick timers: 120 s);
    # a copy of a longer job (training, a gauntlet game, a completion batch) finds its row taken and
    # stops. Every worker looks for such messages every CELERY_UNACKED_RESTORE_INTERVAL seconds.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": int(env("CELERY_VISIBILITY_TIMEOUT", "600")),
        "unacked_restore_interval": int(env("CELERY_UNACKED_RESTORE_INTERVAL", "10")),
        "unacked_restore_throttle": 1,
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "mtg"}}
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_RESULT_BACKEND = "cache+memory://"
    CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_DEFAULT_QUEUE = env("CELERY_DEFAULT_QUEUE", "default")
# Model work has its own queues: `training` (training and evaluation runs, long) and `inference`
# (deck completion; GPU workers take it with `-Q inference`). Their names follow the default
# queue's (a test run's `mtgtest123` gives `mtgtest123.training`), so test runs stay apart.
CELERY_QUEUE_PREFIX = env("CELERY_QUEUE_PREFIX", "" if CELERY_TASK_DEFAULT_QUEUE == "default" else f"{CELERY_TASK_DEFAULT_QUEUE}.")
CELERY_TRAINING_QUEUE = env("CELERY_TRAINING_QUEUE", f"{CELERY_QUEUE_PREFIX}training")
CELERY_INFERENCE_QUEUE = env("CELERY_INFERENCE_QUEUE", f"{CELERY_QUEUE_PREFIX}inference")
CELERY_ALL_QUEUES = [CELERY_TASK_DEFAULT_QUEUE, CELERY_TRAINING_QUEUE, CELERY_INFERENCE_QUEUE]
# A worker started without -Q consumes all three.
CELERY_TASK_QUEUES = [__import__("kombu").Queue(q, routing_key=q) for q in CELERY_ALL_QUEUES]
CELERY_TASK_ROUTES = {
    "ml.train": {"queue": CELERY_TRAINING_QUEUE, "routing_key": CELERY_TRAINING_QUEUE},
    "ml.evaluate": {"queue": CELERY_TRAINING_QUEUE, "routing_key": CELERY_TRAINING_QUEUE},
    "decks.complete_deck": {"queue": CELERY_INFERENCE_QUEUE, "routing_key": CELERY_INFERENCE_QUEUE},
    "ml.loaded_version": {"queue": CELERY_INFERENCE_QUEUE, "routing_key": CELERY_INFERENCE_QUEUE},
}
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A pool process killed mid-task: its message goes back to the queue only for tasks that say it is
# safe to run again (reject_on_worker_lost=True: a completion batch, a gauntlet game, advice).
CELERY_TASK_REJECT_ON_WORKER_LOST = False
# Jobs that outlive a killed worker (plumbing/recovery.py, docs/reliability.md#faults): a running job's
# row gets a heartbeat every MTG_JOB_HEARTBEAT_SECONDS; one without a heartbeat for MTG_JOB_STALE_SECONDS
# was left by a dead worker, and the sweep every worker queues every MTG_JOB_SWEEP_SECONDS runs it again
# (deck completions and gauntlet games, MTG_JOB_MAX_ATTEMPTS runs in all) or fails it with the reason.
MTG_JOB_HEARTBEAT_SECONDS = float(env("MTG_JOB_HEARTBEAT_SECONDS", "10"))
MTG_JOB_STALE_SECONDS = float(env("MTG_JOB_STALE_SECONDS", "60"))
MTG_JOB_SWEEP_SECONDS = float(env("MTG_JOB_SWEEP_SECONDS", "30"))
MTG_JOB_MAX_ATTEMPTS = int(env("MTG_JOB_MAX_ATTEMPTS", "3"))
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- auth, i18n, static -------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/accounts/login/"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
WHITENOISE_USE_FINDERS = True
# Without collectstatic (make run, the tests) WhiteNoise serves from the finders and would warn, on every
# start, that STATIC_ROOT does not exist yet; the docker image collects into it.
warnings.filterwarnings("ignore", message=r"No directory at: .*", category=UserWarning)
WHITENOISE_AUTOREFRESH = DEBUG

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "MTG AI site API",
    "DESCRIPTION": "Cards, decks and (as they land) deck completion, drafts and game advice.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", "WARNING")},
}

# --- game advice (gameplay.play) ---------------------------------------------------
# The advisor's search budget is capped: over the websocket (a Celery task) and in the synchronous
# POST /api/games/advice, where a request must come back in a few seconds.
GAME_ADVICE_MAX_SECONDS = float(env("GAME_ADVICE_MAX_SECONDS", "30"))
GAME_API_ADVICE_MAX_SECONDS = float(env("GAME_API_ADVICE_MAX_SECONDS", "5"))
# Root parallelism across Celery workers for long advice budgets (gameplay.tasks.advice_spread): a
# search of at least GAME_ADVICE_SPREAD_MIN_SECONDS sends this many extra parts to other workers and
# sums their root statistics with its own. Off on the embedded stack (eager tasks would run in turn).
GAME_ADVICE_SPREAD_PARTS = int(env("GAME_ADVICE_SPREAD_PARTS", "1" if STACK == "services" else "0"))
GAME_ADVICE_SPREAD_MIN_SECONDS = float(env("GAME_ADVICE_SPREAD_MIN_SECONDS", "10"))
# The game review (gameplay.review, gameplay.core.matches.decision_review.ReviewSettings): the advisor level and search budget
# of each reviewed decision (seconds, simulations per candidate move), how many decisions at most, and the value
# gap that marks a mistake.
GAME_REVIEW_JUDGE = env("GAME_REVIEW_JUDGE", "ensemble")  # or "search": the old advisor-search judge
GAME_REVIEW_COPIES = int(env("GAME_REVIEW_COPIES", "6"))  # the ensemble judge: VeryHard on this many honest copies
GAME_REVIEW_SETTLE = int(env("GAME_REVIEW_SETTLE", "4"))  # ...stopping once this many agree
GAME_REVIEW_WORKERS = int(env("GAME_REVIEW_WORKERS", "2"))  # ...asked this many at once (threads)
GAME_REVIEW_LEVEL = env("GAME_REVIEW_LEVEL", "flat")
GAME_REVIEW_SECONDS = float(env("GAME_REVIEW_SECONDS", "6"))
GAME_REVIEW_SIMULATIONS = int(env("GAME_REVIEW_SIMULATIONS", "2"))  # per candidate move
GAME_REVIEW_MAX_DECISIONS = int(env("GAME_REVIEW_MAX_DECISIONS", "40"))
GAME_REVIEW_MISTAKE_MARGIN = float(env("GAME_REVIEW_MISTAKE_MARGIN", "0.1"))

# --- abuse limits (plumbing/limits.py; docs/operations.md#limits) ------------------------------------------
# Per client (the account, else the guest session, else the address): "N/period" rates (period s, min, hour or
# day; "off" for none), "<name>_concurrent" caps on unfinished work, and the completion queue's depth (503 past
# it). Every entry is overridden by MTG_LIMIT_<NAME>, e.g. MTG_LIMIT_COMPLETION=20/min, MTG_LIMIT_ENABLED=0.
_LIMIT_DEFAULTS = {
    "enabled": "1",
    "completion": "10/min", "completion_concurrent": "2",
    "completion_queue_max": "50", "completion_queue_retry_after": "30",
    "advice": "20/min", "advice_concurrent": "1",
    "simulate": "10/min", "simulate_concurrent": "1",
    "pod_create": "10/hour", "game_create": "20/hour", "game_create_concurrent": "2",
    "deck_import": "30/min", "deck_import_concurrent": "2",
    "analysis": "30/min", "signup": "5/hour",
    "guest_ip_factor": "4",  # guests of one address share a bucket of this many times each rate (0: off)
    "busy_retry_after": "5",  # Retry-After of a refusal for work in progress
    "forwarded_hops": "0",  # proxies in front of the site whose X-Forwarded-For is trusted (0: REMOTE_ADDR only)
}
MTG_LIMITS = {name: env(f"MTG_LIMIT_{name.upper()}", value) for name, value in _LIMIT_DEFAULTS.items()}
