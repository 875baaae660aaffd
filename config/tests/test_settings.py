"""Settings fail loudly on bad values and never expose secrets."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_check(**env_overrides):
    env = {**os.environ, **env_overrides}
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_malformed_boolean_stops_start_up_with_its_name():
    result = run_check(DEBUG="maybe")
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_a_malformed_database_url_stops_start_up():
    result = run_check(DATABASE_URL="nonsense://x")
    assert result.returncode != 0


def test_a_non_positive_timeout_is_refused():
    result = run_check(WAREHOUSE_STATEMENT_TIMEOUT_S="-1")
    assert result.returncode != 0
    assert "must be positive" in result.stderr


def test_defaults_start_with_nothing_set(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY"}}
    env["DOCKET_VAR_DIR"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "secret_key").exists()
