"""The WSGI entry point sends exactly the machine endpoints to the lean handler, which still protects them.

These call `config.wsgi.application`'s construction (`machine_or_site`) as gunicorn does, not
Django's test client, whose handler always runs the site's whole middleware stack.
"""

import io
import json
import sys

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.test import override_settings

from config import machine
from triage.models import LiveQuery
from triage.tests import factories

pytestmark = pytest.mark.django_db(transaction=True)
ROW = {"external_id": "m-1", "question": "How many?", "sql": "SELECT 1", "warehouse": "shop"}


def call(app, method, path, body=None, token=None, **extra):
    """Call a WSGI application as a server would; return (status code, headers, body)."""
    data = json.dumps(body).encode() if body is not None else b""
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "HTTP_HOST": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(data),
        "wsgi.errors": sys.stderr,
        "CONTENT_LENGTH": str(len(data)),
        "CONTENT_TYPE": "application/json",
    } | extra
    if token:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    answer = {}

    def start_response(status, headers, exc_info=None):
        answer["status"], answer["headers"] = int(status[:3]), dict(headers)

    chunks = app(environ, start_response)
    content = b"".join(chunks)
    chunks.close()
    return answer["status"], answer["headers"], content


@pytest.fixture
def app():
    return machine.machine_or_site(WSGIHandler())


@pytest.fixture
def token():
    factories.warehouse("shop")
    return factories.token()[1]


@pytest.mark.parametrize(
    "path", ["/health/", "/api/v1/queries", "/api/v1/queries/12", "/v1/traces"], ids=lambda p: p.strip("/")
)
def test_the_machine_paths_are_matched_whole(path):
    assert machine.MACHINE_PATHS.fullmatch(path)


@pytest.mark.parametrize(
    "path",
    ["/api/docs/", "/api/schema/", "/api/v1/queries/", "/api/v1/queries/12/../../../admin/", "/health", "/admin/"],
)
def test_every_other_path_takes_the_sites_stack(path):
    assert not machine.MACHINE_PATHS.fullmatch(path)


def test_a_post_through_the_machine_handler_is_stored_with_the_sites_security_headers(app, token):
    status, headers, content = call(app, "POST", "/api/v1/queries", ROW, token=token)
    assert status == 202, content
    assert LiveQuery.objects.filter(external_id="m-1").exists()
    site_policy = call(app, "GET", "/accounts/login/")[1]["Content-Security-Policy"]
    directives = set(headers["Content-Security-Policy"].split("; "))
    assert directives == set(site_policy.split("; ")) and "frame-ancestors 'none'" in directives
    assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff"
    assert "Set-Cookie" not in headers  # no session, no CSRF cookie
    assert headers["Content-Length"] == str(len(content))  # not chunked


def test_the_machine_handler_still_refuses_a_bad_token_and_a_missing_scope(app, token):
    assert call(app, "POST", "/api/v1/queries", ROW, token="dkt_nope")[0] == 401
    _, read_only = factories.token(scopes=("read",), client="reader")
    assert call(app, "POST", "/api/v1/queries", ROW, token=read_only)[0] == 403
    assert call(app, "POST", "/v1/traces", {"resourceSpans": []}, token="dkt_nope")[0] == 401
    assert not LiveQuery.objects.exists()


def test_the_machine_handler_still_gives_field_errors_and_body_limits(app, token):
    status, _, content = call(app, "POST", "/api/v1/queries", ROW | {"question": ""}, token=token)
    assert status == 400 and json.loads(content)["errors"] == {"question": ["This field may not be blank."]}
    with override_settings(TRIAGE_API_MAX_BODY_BYTES=100):
        assert call(app, "POST", "/api/v1/queries", ROW | {"sql": "SELECT " + "1" * 200}, token=token)[0] == 413
    assert not LiveQuery.objects.exists()


def test_health_and_status_answer_on_the_machine_handler(app, token):
    assert call(app, "GET", "/health/")[0] == 200
    _, _, content = call(app, "POST", "/api/v1/queries", ROW, token=token)
    status, _, body = call(app, "GET", f"/api/v1/queries/{json.loads(content)['id']}", token=token)
    assert status == 200 and json.loads(body)["external_id"] == "m-1"


def test_the_docs_page_which_reads_the_signed_in_user_is_served_by_the_sites_stack(app):
    status, _, content = call(app, "GET", "/api/docs/")
    assert status == 200 and b"/api/v1/queries" in content  # without the session middleware: a 500


@override_settings(SECURE_SSL_REDIRECT=True)
def test_plain_http_to_the_api_is_redirected_to_https_as_on_the_site(token):
    app = machine.machine_or_site(WSGIHandler())  # middleware reads its settings when built
    status, headers, _ = call(app, "POST", "/api/v1/queries", ROW, token=token)
    assert status == 301 and headers["Location"].startswith("https://")
    assert call(app, "GET", "/health/")[0] == 200  # exempt, for load balancers
    assert not LiveQuery.objects.exists()
