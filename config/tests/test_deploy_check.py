"""A deployment that passes `manage.py check --deploy`: production settings, HTTPS, headers, CSP.

`DJANGO_ENV=production` (the default outside the tests) is what a deployment runs; the
check runs in a subprocess with it, as an operator would, with DEBUG off.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]


def manage(*args, **env_overrides) -> subprocess.CompletedProcess:
    # The browser tests' DJANGO_ALLOW_ASYNC_UNSAFE (for Playwright in the test process) is no
    # part of a deployment: check --deploy refuses it (async.E001).
    test_only = {"DOCKET_TESTING", "DJANGO_ENV", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env = {k: v for k, v in os.environ.items() if k not in test_only}
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def production_settings(*names, **env_overrides) -> dict:
    code = (
        "import json; from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n) for n in {list(names)}}}, default=str))"
    )
    result = manage("shell", "-c", code, **env_overrides)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_check_deploy_passes_at_warning_level_under_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_fails_under_local_settings_so_the_check_means_something():
    result = manage("check", "--deploy", "--fail-level", "WARNING", DJANGO_ENV="local")
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stdout + result.stderr


def test_production_is_the_default_and_turns_the_simulator_off():
    found = production_settings(
        "DJANGO_ENV",
        "DEBUG",
        "VENDOR_SIMULATOR_ENABLED",
        "SECURE_SSL_REDIRECT",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SECURE_HSTS_SECONDS",
        "SECURE_PROXY_SSL_HEADER",
    )
    assert found == {
        "DJANGO_ENV": "production",
        "DEBUG": False,
        "VENDOR_SIMULATOR_ENABLED": False,
        "SECURE_SSL_REDIRECT": True,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_HSTS_SECONDS": 31_536_000,
        "SECURE_PROXY_SSL_HEADER": None,
    }


def test_behind_a_proxy_the_operator_names_its_header():
    found = production_settings("SECURE_PROXY_SSL_HEADER", SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto")
    assert found == {"SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"]}
    refused = manage("check", SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto: https")
    assert refused.returncode != 0 and "SECURE_PROXY_SSL_HEADER" in refused.stderr


def test_an_unknown_environment_stops_start_up():
    result = manage("check", DJANGO_ENV="staging")
    assert result.returncode != 0 and "DJANGO_ENV='staging' is not valid: expected production or local" in result.stderr


@pytest.mark.django_db
def test_plain_http_is_redirected_to_https_but_the_health_check_is_not(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    login = client.get(reverse("login"))
    assert login.status_code == 301 and login["Location"].startswith("https://")
    assert client.get(reverse("health")).status_code == 200


@pytest.mark.django_db
def test_a_proxy_that_says_https_is_believed_once_named(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_HSTS_SECONDS = 3600
    response = client.get(reverse("login"), HTTP_X_FORWARDED_PROTO="https")
    assert response.status_code == 200
    assert response["Strict-Transport-Security"].startswith("max-age=")


@pytest.mark.django_db
def test_every_page_carries_the_frame_referrer_and_content_security_policies(client):
    response = client.get(reverse("login"))
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Content-Type-Options"] == "nosniff"
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy
