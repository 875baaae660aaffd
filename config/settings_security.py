"""Deployment hardening, imported by `config/settings.py`: production unless told otherwise.

`DJANGO_ENV` says where Docket runs: `production` (the default outside the tests) or `local`
(`make run`, `make worker`, `make bench` and the tests set it: plain http on 127.0.0.1, the
vendor simulator on). Production turns on HTTPS redirects, HSTS and secure cookies, and
turns the simulator off; each setting can still be overridden from the environment, so a
deployment that terminates TLS elsewhere says so explicitly. The Content-Security-Policy,
the frame and referrer policies and the login throttle apply everywhere: the browser tests
run under the policy production serves. `manage.py check --deploy --fail-level WARNING`
passes with `DJANGO_ENV=production` (`config/tests/test_deploy_check.py`); README
"Serving in production" lists each setting.
"""

import sys
from datetime import timedelta

from csp.constants import NONE, SELF

from config.audit import AUDITED_MODELS
from config.env import env_bool, env_non_negative_int, env_positive_int, env_setting

TESTING = "pytest" in sys.modules or env_bool("DOCKET_TESTING", False)
ENVIRONMENTS = ("production", "local")


def _parse_environment(raw: str) -> str:
    if raw.lower() not in ENVIRONMENTS:
        raise ValueError(raw)
    return raw.lower()


def _parse_proxy_header(raw: str) -> tuple[str, str]:
    """Turn a header name such as X-Forwarded-Proto into Django's ("HTTP_X_FORWARDED_PROTO", "https")."""
    name = raw.strip()
    if not name or not all(part.isalnum() for part in name.split("-")):
        raise ValueError(raw)
    return "HTTP_" + name.upper().replace("-", "_"), "https"


DJANGO_ENV = env_setting("DJANGO_ENV", "local" if TESTING else "production", _parse_environment, "production or local")
PRODUCTION = DJANGO_ENV == "production"
DEBUG = env_bool("DEBUG", False)

# --- HTTPS -------------------------------------------------------------------------------
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", PRODUCTION)
# A load balancer's health check may speak plain http to the app.
SECURE_REDIRECT_EXEMPT = [r"^health/$"]
SECURE_HSTS_SECONDS = env_non_negative_int("SECURE_HSTS_SECONDS", 31_536_000 if PRODUCTION else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", PRODUCTION)
# The header only allows a submission to the browsers' preload lists; nothing is submitted.
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", PRODUCTION)
# Behind a proxy that terminates TLS: the header the proxy sets to "https" (and strips from
# what clients send), e.g. X-Forwarded-Proto. Unset, a request is secure only if it came
# over TLS to Django itself; set wrongly, a client could claim https for a plain request.
SECURE_PROXY_SSL_HEADER = env_setting(
    "SECURE_PROXY_SSL_HEADER", None, _parse_proxy_header, "a header name such as X-Forwarded-Proto"
)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", PRODUCTION)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", PRODUCTION)
# No script reads either cookie: pages put the CSRF token in the htmx headers themselves.
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True

# --- What a browser may do with a page ------------------------------------------------------
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Scripts, styles, images and fonts from Docket's own static files only: no inline script,
# no inline style (not even a style="" attribute), no eval, no plugin, never framed.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# --- The vendor simulator ------------------------------------------------------------------
# The simulator's URL is a local port: a judge may be bound to it only where it is enabled
# (judges/vendor_access.py), and it is only ever sent the simulator's own key.
VENDOR_SIMULATOR_ENABLED = env_bool("VENDOR_SIMULATOR_ENABLED", not PRODUCTION)

# --- Login throttling (django-axes) ----------------------------------------------------------
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses a locked-out login before the password is checked
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_positive_int("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_positive_int("AXES_COOLOFF_MINUTES", 15))
# A username from one address: an attacker cannot lock a user out from elsewhere, and one
# address cannot guess at a user beyond the limit.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Behind proxies, how many of them append to X-Forwarded-For (config/throttling.py).
TRUSTED_PROXY_COUNT = env_non_negative_int("TRUSTED_PROXY_COUNT", 0)
AXES_CLIENT_IP_CALLABLE = "config.throttling.client_ip"

# --- The audit log (django-auditlog; config/audit.py lists the models) -------------------------
AUDITLOG_INCLUDE_TRACKING_MODELS = AUDITED_MODELS
AUDITLOG_STORE_JSON_CHANGES = True
