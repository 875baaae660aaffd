# Docket: two commands. `make run` serves the demo; `make test` runs lint + the whole suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export DJANGO_SETTINGS_MODULE := config.settings

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
	@PORT=$(PORT) PY=$(PY) bin/run-local

worker: $(VENV)/.installed-dev
	$(PY) -m celery -A config worker --beat --loglevel=INFO

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(PY) -m pytest $(PYTEST_ARGS)

bench: $(VENV)/.installed-dev
	$(PY) -m tests.bench.run_all

clean:
	rm -rf var/test-broker var/test_docket.sqlite3*
