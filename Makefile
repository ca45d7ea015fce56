# The two commands: `make run` (the site with real data) and `make test` (both stacks + browser).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# auto: the services stack when PostgreSQL and Redis answer, else the embedded one.
STACK ?= auto
# `make run` is for local use: Django's debug pages on unless DJANGO_DEBUG=0 (the settings default is off).
RUN_DEBUG := $(if $(DJANGO_DEBUG),$(DJANGO_DEBUG),1)
export MTG_PROGRESS ?= 1
# pytest-xdist workers per stack (each with its own database, Redis databases, queue and var folder:
# tests/isolation.py; three at most); 0 runs the suite in one process. Three on two cores: a test waits on
# Chromium, Daphne, a Celery worker or PostgreSQL much of its time; with three the runs kept 1.66-1.74 cores busy
# (user + system time over wall time, 2026-11-28). bench/results/ci_time.md: the time of a clean-clone run.
TEST_WORKERS ?= 3
# One BLAS/OpenMP thread per process: the xdist workers plus their Celery workers and Daphnes already fill both
# cores. On a quiet machine it made no measurable difference (torch-heavy tests, 2 workers: 110 s against 113 s);
# it keeps torch from starting a thread per core in every process when the machine is busy.
PYTEST := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m pytest -q -p no:cacheprovider $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile) --durations 15

# The stack `make run` and `make staff` use: STACK, or with auto the services stack when PostgreSQL and Redis answer
# (started when installed but down), else the embedded one. Sets the shell variable `stack`.
PICK_STACK = stack=$(STACK); \
	if [ "$$stack" = auto ]; then \
	  if bash scripts/ensure-services.sh >/dev/null 2>&1; then stack=services; else stack=embedded; fi; \
	fi

.PHONY: run staff test venv services migrate data worker web test-embedded test-services bench clean

venv: $(VENV)/bin/python
	@bash scripts/install-python.sh requirements-dev.txt

$(VENV)/bin/python:
	@bash scripts/install-python.sh requirements-dev.txt

services:
	@bash scripts/ensure-services.sh

run: venv
	@$(PICK_STACK); \
	echo "== stack: $$stack"; export MTG_STACK=$$stack; \
	export DJANGO_DEBUG=$(RUN_DEBUG); \
	case "$(RUN_DEBUG)" in 1|true|yes|on) echo "== debug: on (DJANGO_DEBUG=1, local use only)";; \
	  *) echo "== debug: off (DJANGO_DEBUG=$(RUN_DEBUG))";; esac; \
	if [ $$stack = services ]; then bash scripts/ensure-services.sh; fi; \
	mkdir -p var && $(PY) manage.py migrate --noinput --skip-checks && \
	echo "== data: importing what is missing (setup_site)" && $(PY) manage.py setup_site && \
	if [ $$stack = services ]; then \
	  $(VENV)/bin/celery -A mtgsite worker --loglevel INFO --concurrency 2 >var/worker.log 2>&1 & \
	  echo "== celery worker started (log: var/worker.log)"; \
	fi; \
	echo "== serving on http://$(HOST):$(PORT)/"; \
	exec $(VENV)/bin/daphne -b $(HOST) -p $(PORT) mtgsite.asgi:application

# A staff account (the models pages, the gauntlet) on the stack `make run` uses: asks for a name and a password.
staff: venv
	@$(PICK_STACK); \
	echo "== stack: $$stack"; \
	export MTG_STACK=$$stack; mkdir -p var && $(PY) manage.py migrate --noinput --skip-checks >/dev/null && \
	$(PY) manage.py createsuperuser

test: venv
	@bash scripts/ensure-services.sh
	@bash scripts/ensure-chromium.sh
	@mkdir -p var
	@echo "== ruff (ruff.toml) and the layering (tests/test_structure.py)"
	$(VENV)/bin/ruff check .
	@echo "== tests on the embedded stack (SQLite, in-memory layers, eager Celery)"
	MTG_STACK=embedded $(PYTEST)
	@echo "== tests on the services stack (PostgreSQL, Redis, Celery worker and Daphne processes)"
	MTG_STACK=services $(PYTEST)

bench: venv
	$(PY) -m bench.import

clean:
	rm -rf var staticfiles .pytest_cache .hypothesis
