# Docket: two commands. `make run` serves the demo; `make test` runs lint + the whole suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
SIMULATOR_PORT ?= 8765
# Commands that need var/ and the generated secret key make them (importing settings never does).
PREPARE := $(PY) -c 'from config.local_state import local_state_prepare; local_state_prepare()'
# Docket's own modules, compiled ahead: where PYTHONDONTWRITEBYTECODE is set (as on these CI
# machines) every process a test or bench starts (a worker, a command, a server) would compile
# them again, about 0.2 s of a command's start-up (issue 33). Only changed files are rewritten.
COMPILE := $(PY) -m compileall -q -j0 manage.py config judges labelling loops probes triage simulator tests >/dev/null
export DJANGO_SETTINGS_MODULE := config.settings
# These targets run Docket on this machine: plain http, the vendor simulator on. A deployment
# leaves DJANGO_ENV unset (production; README "Serving in production").
export DJANGO_ENV ?= local

.PHONY: run test lint bench worker migrate seed clean

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Docket needs Python 3.11 or newer")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	@touch $@

migrate: $(VENV)/.installed-dev
	$(PY) manage.py migrate --noinput

seed: migrate
	$(PY) manage.py seed_demo

run: $(VENV)/.installed-dev
	@$(COMPILE)
	@PORT=$(PORT) SIMULATOR_PORT=$(SIMULATOR_PORT) PY=$(PY) bin/run-local

worker: $(VENV)/.installed-dev
	@$(COMPILE)
	@$(PREPARE)
	$(PY) -m celery -A config worker --beat --loglevel=INFO

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	@$(COMPILE)
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.installed-dev
	@$(COMPILE)
	@$(PREPARE)
	$(PY) -m tests.bench.run_all

clean:
	rm -rf var/test-broker var/test_docket.sqlite3*
