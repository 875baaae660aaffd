"""A judge reads only allow-listed key variables and calls only approved hosts; records hold no secret.

The hostile case is real: a judge whose config named `api_key_env=WAREHOUSE_DEMO_PG_URL`
and a `base_url` on a local listener sent the warehouse DSN as a bearer token. Here the
listener is a real HTTP server on a free port that records what it is sent and answers
401 echoing the bearer token back, as a hostile (or careless) endpoint would.
"""

import http.server
import json
import logging
import socket
import sys
import threading

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from judges.backends import get_backend
from judges.models import Judge, JudgeVersion, Verdict
from judges.services import judge_create, judge_live_query, judge_version_create
from judges.tests.factories import simulated_version
from judges.vendor_access import RedactSecretsFilter, base_url_allowed
from labelling.models import Query

pytestmark = pytest.mark.django_db

WAREHOUSE_DSN = "postgresql://docket_reader:warehouse-pass-4711@127.0.0.1:5432/shop"
FAKE_KEY = "sk-ant-test-0123456789abcdef"
VERSION_FIELDS = {"backend": "anthropic", "family": "anthropic", "model": "claude-x"}


class EchoingListener(http.server.BaseHTTPRequestHandler):
    """Answer every POST with a 401 whose message repeats the caller's Authorization header."""

    def do_POST(self):  # noqa: N802 - the http.server naming
        self.server.seen.append({name.lower(): value for name, value in self.headers.items()})
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        presented = self.headers.get("x-api-key") or self.headers.get("Authorization") or ""
        body = json.dumps({"type": "error", "error": {"type": "authentication_error", "message": presented}})
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


@pytest.fixture
def listener():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), EchoingListener)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def secrets_in_environment(monkeypatch, settings):
    monkeypatch.setenv("WAREHOUSE_SHOP_URL", WAREHOUSE_DSN)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    settings.ANTHROPIC_API_KEY = FAKE_KEY  # what settings read from that variable at start-up


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def version_saved_earlier(**config) -> JudgeVersion:
    """A version stored as it was before the allow-lists existed (no service checks it)."""
    judge = Judge.objects.create(name="old-judge")
    return JudgeVersion.objects.create(
        judge=judge, number=1, **VERSION_FIELDS, config={"max_retries": 0, "timeout_s": 2, **config}
    )


def live_query():
    return Query.objects.create(question="How many orders?", sql="SELECT COUNT(*) FROM orders", external_id="q-1")


def assert_no_secret_in(text: str):
    for secret in (WAREHOUSE_DSN, "warehouse-pass-4711", FAKE_KEY):
        assert secret not in text


# --- At save time ----------------------------------------------------------------------------


def test_a_key_variable_off_the_allow_list_is_refused_when_a_judge_is_saved():
    with pytest.raises(ValidationError) as refused:
        judge_create(name="thief", **VERSION_FIELDS, config={"api_key_env": "WAREHOUSE_DEMO_PG_URL"})
    assert "WAREHOUSE_DEMO_PG_URL" in str(refused.value) and "JUDGE_API_KEY_VARS" in str(refused.value)
    assert not Judge.objects.filter(name="thief").exists()


def test_an_allowed_key_variable_is_accepted():
    judge = judge_create(name="keyed", **VERSION_FIELDS, config={"api_key_env": "OPENAI_API_KEY"})
    assert judge.latest_version.config["api_key_env"] == "OPENAI_API_KEY"


def test_the_judge_form_shows_the_refusal_and_saves_nothing(client_for):
    response = client_for("ml_engineer").post(
        reverse("judges:judge_create"),
        {
            "name": "thief",
            **VERSION_FIELDS,
            "temperature": "0",
            "max_tokens": "256",
            "price_input_per_mtok": "0",
            "price_output_per_mtok": "0",
            "price_cache_read_per_mtok": "0",
            "price_cache_write_per_mtok": "0",
            "config": '{"api_key_env": "DATABASE_URL"}',
        },
    )
    assert response.status_code == 200
    assert "DATABASE_URL" in response.content.decode() and "not an allowed key variable" in response.content.decode()
    assert not Judge.objects.filter(name="thief").exists()


def test_a_base_url_off_the_allow_list_is_refused_even_for_an_admin(role_users, settings):
    admin_user = role_users["admin"]
    settings.JUDGE_BASE_URLS = ["https://llm.internal.example/v1"]
    for url in (
        "http://127.0.0.1:9999",
        "https://llm.internal.example.evil.test/v1",
        "https://u:p@llm.internal.example/v1",
    ):
        with pytest.raises(ValidationError, match="not an allowed base URL"):
            judge_create(name="elsewhere", user=admin_user, **VERSION_FIELDS, config={"base_url": url})
    judge = judge_create(
        name="internal", user=admin_user, **VERSION_FIELDS, config={"base_url": "https://llm.internal.example/v1/"}
    )
    assert judge.latest_version.config["base_url"] == "https://llm.internal.example/v1/"


def test_the_simulator_url_is_allowed_while_the_simulator_is_enabled(settings):
    settings.JUDGE_BASE_URLS = []
    assert base_url_allowed(settings.VENDOR_SIMULATOR_URL)
    assert base_url_allowed(settings.VENDOR_SIMULATOR_URL.rstrip("/") + "/v1")
    assert not base_url_allowed("http://127.0.0.1:1")


def test_only_an_admin_sets_or_changes_a_base_url(role_users, settings):
    settings.JUDGE_BASE_URLS = ["https://llm.internal.example", "https://other.example"]
    engineer, admin = role_users["ml_engineer"], role_users["admin"]
    with pytest.raises(ValidationError, match="only an admin"):
        judge_create(name="mine", user=engineer, **VERSION_FIELDS, config={"base_url": "https://llm.internal.example"})
    judge = judge_create(
        name="theirs", user=admin, **VERSION_FIELDS, config={"base_url": "https://llm.internal.example"}
    )
    # The engineer may still make new versions that keep the admin's URL...
    kept = judge_version_create(
        judge=judge,
        user=engineer,
        **VERSION_FIELDS,
        prompt_template="Be strict.",
        config={"base_url": "https://llm.internal.example"},
    )
    assert kept.number == 2
    # ...but neither change it nor drop it.
    for config in ({"base_url": "https://other.example"}, {}):
        with pytest.raises(ValidationError, match="only an admin"):
            judge_version_create(judge=judge, user=engineer, **VERSION_FIELDS, config=config)
    assert judge_version_create(judge=judge, user=admin, **VERSION_FIELDS, config={"base_url": "https://other.example"})


def test_an_engineer_editing_a_judge_cannot_point_it_elsewhere(client_for, settings):
    settings.JUDGE_BASE_URLS = ["https://llm.internal.example"]
    version = simulated_version(name="edited")
    response = client_for("ml_engineer").post(
        reverse("judges:judge_edit", args=[version.judge.pk]),
        {
            **VERSION_FIELDS,
            "temperature": "0",
            "max_tokens": "256",
            "price_input_per_mtok": "0",
            "price_output_per_mtok": "0",
            "price_cache_read_per_mtok": "0",
            "price_cache_write_per_mtok": "0",
            "config": '{"base_url": "https://llm.internal.example"}',
        },
    )
    assert response.status_code == 200 and "only an admin" in response.content.decode()
    assert version.judge.versions.count() == 1


# --- At call time ------------------------------------------------------------------------------


def test_a_stored_judge_naming_a_dsn_variable_is_an_error_verdict_and_calls_nothing(
    listener, secrets_in_environment, settings, caplog
):
    settings.JUDGE_BASE_URLS = [listener.url]
    version = version_saved_earlier(api_key_env="WAREHOUSE_SHOP_URL", base_url=listener.url)
    caplog.set_level(logging.DEBUG)
    verdict = judge_live_query(judge_version=version, query=live_query())
    assert verdict.decision == "error"
    assert "WAREHOUSE_SHOP_URL" in verdict.reason and "not an allowed key variable" in verdict.reason
    assert listener.seen == [], "the DSN must never leave the process"
    assert_no_secret_in(json.dumps(Verdict.objects.filter(pk=verdict.pk).values().get(), default=str))
    assert_no_secret_in(caplog.text)


def test_a_stored_judge_whose_host_is_no_longer_allowed_is_an_error_verdict(listener, secrets_in_environment):
    version = version_saved_earlier(base_url=listener.url)  # JUDGE_BASE_URLS does not list it
    result = get_backend(version).judge(live_query())
    assert result.decision == "error" and "not an allowed base URL" in result.reason
    assert listener.seen == []


@pytest.mark.parametrize("backend", ["self_consistency", "hypothesis_probe"])
def test_judges_wrapping_a_vendor_are_held_to_the_same_lists(listener, secrets_in_environment, backend):
    judge = Judge.objects.create(name=f"wrapped-{backend}")
    version = JudgeVersion.objects.create(
        judge=judge, number=1, backend=backend, config={"api_key_env": "WAREHOUSE_SHOP_URL", "base_url": listener.url}
    )
    result = get_backend(version).judge(live_query())
    assert result.decision == "error"
    assert listener.seen == []


# --- Nothing secret in verdicts or logs ----------------------------------------------------------


def test_a_failing_call_to_an_approved_host_records_neither_the_key_nor_a_dsn(
    listener, secrets_in_environment, settings, caplog
):
    settings.JUDGE_BASE_URLS = [listener.url]
    version = version_saved_earlier(api_key_env="ANTHROPIC_API_KEY", base_url=listener.url)
    caplog.set_level(logging.DEBUG)
    verdict = judge_live_query(judge_version=version, query=live_query())
    presented = listener.seen[0].get("x-api-key") or listener.seen[0].get("authorization")
    assert FAKE_KEY in presented, "the approved host got the key"
    assert verdict.decision == "error" and "401" in verdict.reason
    assert "[redacted]" in verdict.reason, "the endpoint echoed the key; the verdict must not keep it"
    assert_no_secret_in(json.dumps(Verdict.objects.filter(pk=verdict.pk).values().get(), default=str))
    assert_no_secret_in(caplog.text)


@pytest.mark.parametrize("backend", ["anthropic", "openai_compatible"])
def test_a_call_to_a_closed_port_records_neither_the_key_nor_a_dsn(
    secrets_in_environment, settings, caplog, monkeypatch, backend
):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    url = f"http://127.0.0.1:{closed_port()}"
    settings.JUDGE_BASE_URLS = [url]
    judge = Judge.objects.create(name="closed")
    version = JudgeVersion.objects.create(
        judge=judge,
        number=1,
        backend=backend,
        model="m",
        config={"base_url": url, "max_retries": 1, "retry_base_delay_s": 0.01, "timeout_s": 1},
    )
    caplog.set_level(logging.DEBUG)
    verdict = judge_live_query(judge_version=version, query=live_query())
    assert verdict.decision == "error" and "Connection" in verdict.reason
    assert_no_secret_in(json.dumps(Verdict.objects.filter(pk=verdict.pk).values().get(), default=str))
    assert_no_secret_in(caplog.text)


def test_the_console_log_handler_redacts_a_dsn_in_a_message_and_a_traceback(secrets_in_environment):
    handlers = [h for h in logging.getLogger().handlers if any(isinstance(f, RedactSecretsFilter) for f in h.filters)]
    assert handlers, "settings.LOGGING puts the redacting filter on the console handler"
    handler = handlers[0]
    try:
        raise RuntimeError(f"could not connect to {WAREHOUSE_DSN}")
    except RuntimeError:
        record = logging.LogRecord("t", logging.ERROR, __file__, 1, "key %s failed", (FAKE_KEY,), sys.exc_info())
    assert handler.filter(record)
    text = handler.format(record)
    assert "[redacted]" in text and "could not connect to" in text
    assert_no_secret_in(text)
