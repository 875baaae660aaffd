"""A refused request prints one WARNING line on the `make run` console, not two (issue 31).

`make run` serves with `runserver` under LOG_LEVEL=WARNING: Django's `django.request` says
"Forbidden (…): /path", and runserver's `django.server` used to add '"GET /path" 403' as well.
This runs the same command on the test database and counts the lines each refusal prints.
"""

import socket
import sys
import time
import urllib.error
import urllib.request

import pytest

from tests.support.fixtures import WorkerProcess

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def make_run_web():
    """`runserver` as `bin/run-local` starts it (LOG_LEVEL=WARNING, DJANGO_ENV=local); yields (url, process)."""
    port = free_port()
    command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--skip-checks"]
    web = WorkerProcess(command=command, extra_env={"LOG_LEVEL": "WARNING", "DJANGO_ENV": "local"}, name="web")
    web.start(purge=False)
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or web.process.poll() is not None:
                web.discard()
                pytest.fail(f"runserver did not start:\n{web.output()}")
            time.sleep(0.3)
    yield f"http://127.0.0.1:{port}", web
    web.discard()


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a redirect (to the login page) is an answer here, not a page to follow


def status_of(url: str, session: str) -> int:
    request = urllib.request.Request(url, headers={"Cookie": f"sessionid={session}"})
    try:
        with urllib.request.build_opener(NoRedirects).open(request, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def console_lines(web, path: str) -> list[str]:
    """The lines at WARNING or above that name `path`."""
    time.sleep(0.5)  # the server writes its lines after the response
    return [line for line in web.output().splitlines() if path in line and (" WARNING " in line or " ERROR " in line)]


def test_a_refused_request_prints_one_warning_line_and_an_ordinary_one_none(client, role_users, make_run_web):
    url, web = make_run_web
    client.force_login(role_users["labeller"])
    session = client.cookies["sessionid"].value
    assert status_of(f"{url}/judges/", session) == 403  # a labeller may not see the judges
    assert status_of(f"{url}/no-such-page/", session) == 404
    assert status_of(f"{url}/labelling/", session) == 200
    forbidden, missing = console_lines(web, "/judges/"), console_lines(web, "/no-such-page/")
    assert len(forbidden) == 1 and "Forbidden" in forbidden[0], web.output()
    assert len(missing) == 1 and "Not Found" in missing[0], web.output()
    assert console_lines(web, "/labelling/") == []
