"""The machine endpoints' Django handler: token-authenticated and health requests skip the site's middleware.

The site's middleware stack (sessions, CSRF, login, messages, htmx, the audit log's actor,
django-axes, a Content-Security-Policy built per response) serves people in a browser. The
ingestion API, its status endpoint, OTLP's `/v1/traces` and `/health/` serve programs: each
authenticates its caller with an API token, or answers nothing secret, and sets no cookie.
For them that stack was half the CPU of a one-query post (README, "Ingestion speed"), so
`config/wsgi.py` sends exactly these paths to a second handler whose middleware keeps what
still protects an API: `SecurityMiddleware` (the https redirect, HSTS, nosniff, referrer and
opener policies), `CommonMiddleware`, `X-Frame-Options`, and the site's Content-Security-Policy,
built once.
The paths are matched whole, never as prefixes: any other path, the API's docs page and
schema included, takes the site's stack and its login. Django's test client and `config/asgi.py`
run every path through the site's stack; `config/tests/test_machine_handler.py` calls this one.
"""

import re

from csp.constants import HEADER as CSP_HEADER
from csp.utils import build_policy
from django.core.handlers.exception import convert_exception_to_response
from django.core.handlers.wsgi import WSGIHandler
from django.utils.module_loading import import_string

MACHINE_PATHS = re.compile(r"/(?:health/|api/v1/queries(?:/[0-9]+)?|v1/traces)")
MACHINE_MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Content-Length on every answer (without it gunicorn sends HTTP/1.1 bodies chunked), and the
    # site's refusal of DISALLOWED_USER_AGENTS.
    "django.middleware.common.CommonMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.machine.SitePolicyMiddleware",
]


class SitePolicyMiddleware:
    """Set the site's Content-Security-Policy (it needs no nonce, so one string serves every response)."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.policy = build_policy()

    def __call__(self, request):
        response = self.get_response(request)
        if self.policy:
            response.headers.setdefault(CSP_HEADER, self.policy)
        return response


class MachineHandler(WSGIHandler):
    """Django's WSGI handler over MACHINE_MIDDLEWARE instead of settings.MIDDLEWARE (synchronous only)."""

    def load_middleware(self, is_async=False):
        self._view_middleware = []
        self._template_response_middleware = []
        self._exception_middleware = []
        handler = convert_exception_to_response(self._get_response)
        for path in reversed(MACHINE_MIDDLEWARE):
            middleware = import_string(path)(handler)
            if hasattr(middleware, "process_view"):
                self._view_middleware.insert(0, middleware.process_view)
            if hasattr(middleware, "process_exception"):
                self._exception_middleware.append(middleware.process_exception)
            handler = convert_exception_to_response(middleware)
        self._middleware_chain = handler


def machine_or_site(site):
    """Return the WSGI application: MACHINE_PATHS to a `MachineHandler`, every other path to `site`."""
    machine = MachineHandler()

    def application(environ, start_response):
        handler = machine if MACHINE_PATHS.fullmatch(environ.get("PATH_INFO", "")) else site
        return handler(environ, start_response)

    return application
