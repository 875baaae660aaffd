"""Settings fail loudly on bad values and never expose secrets."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_check(**env_overrides):
    env = {**os.environ, **env_overrides}
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_malformed_boolean_stops_start_up_with_its_name():
    result = run_check(DEBUG="maybe")
    assert result.returncode != 0
    assert "DEBUG='maybe' is not valid: expected a boolean" in result.stderr


def test_a_malformed_database_url_stops_start_up():
    result = run_check(DATABASE_URL="nonsense://x")
    assert result.returncode != 0


def test_a_non_positive_timeout_is_refused():
    result = run_check(WAREHOUSE_STATEMENT_TIMEOUT_S="-1")
    assert result.returncode != 0
    assert "WAREHOUSE_STATEMENT_TIMEOUT_S='-1' is not valid: expected a positive number" in result.stderr


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("TRIAGE_PUBLISH_INTERVAL_MS", "abc", "a number, 0 or more"),
        ("TRIAGE_PUBLISH_INTERVAL_MS", "-5", "a number, 0 or more"),
        ("DATA_UPLOAD_MAX_MEMORY_SIZE", "1.5e6", "a whole number, 0 or more"),
        ("WAREHOUSE_ROW_CAP", "2.9", "a whole number, 1 or more"),
        ("LOG_LEVEL", "LOUD", "DEBUG, INFO, WARNING, ERROR or CRITICAL"),
        ("TRIAGE_JUDGE_THREADS", "0", "a whole number, 1 or more"),
        ("DOCKET_BROKER_POLL_S", "nan", "a positive number"),
        ("DATABASE_URL", "nonsense://x", "a database URL"),
    ],
)
def test_a_bad_value_stops_start_up_naming_the_variable_and_the_form_it_should_take(name, value, expected):
    result = run_check(**{name: value})
    assert result.returncode != 0
    assert f"ImproperlyConfigured: {name}={value!r} is not valid: expected {expected}" in result.stderr


def test_good_values_of_the_same_variables_start():
    result = run_check(
        TRIAGE_PUBLISH_INTERVAL_MS="0",
        DATA_UPLOAD_MAX_MEMORY_SIZE="1500000",
        WAREHOUSE_ROW_CAP="3",
        LOG_LEVEL="warning",
    )
    assert result.returncode == 0, result.stderr


def test_importing_settings_writes_nothing(tmp_path):
    var_dir = tmp_path / "var"
    env = {**os.environ, "DOCKET_VAR_DIR": str(var_dir), "SECRET_KEY": "a-key-for-this-test", "DATABASE_URL": ""}
    code = "import django; django.setup(); from django.conf import settings; print(settings.STATIC_ROOT)"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(var_dir / "static")
    assert not var_dir.exists()


def test_without_a_secret_key_settings_refuse_to_start_and_say_how_to_get_one(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env.update(DOCKET_VAR_DIR=str(tmp_path / "var"), DJANGO_SETTINGS_MODULE="config.settings")
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr
    assert not (tmp_path / "var").exists()


def test_defaults_start_with_nothing_set(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY"}}
    env["DOCKET_VAR_DIR"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "secret_key").exists()
