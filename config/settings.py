"""Docket settings: one module, read from the environment with safe local defaults.

Every value that can differ between a laptop, CI and production comes from an
environment variable. Defaults let `make run` work on a machine with nothing but
Python: SQLite under `var/`, kombu's filesystem broker under `var/`, and the local
vendor simulator when no vendor key is set. A malformed value fails loudly at start-up.
"""

import logging
import os
import secrets
import sys
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.env import (
    env_bool,
    env_list,
    env_non_negative_int,
    env_path,
    env_positive_float,
    env_positive_int,
    env_setting,
    env_text,
    parse_choice,
    parse_database_url,
)
from config.settings_pipeline import (  # noqa: F401 — settings Django reads by name
    ALERT_EMAIL_FROM,
    ALERT_SITE_URL,
    ALERT_WEBHOOK_KEY,
    CACHES,
    DB_MAX_CONNECTIONS_PER_PROCESS,
    EMAIL_BACKEND,
    EMAIL_HOST,
    EMAIL_PORT,
    JUDGES_CHUNK_LEASE_S,
    TRIAGE_API_MAX_BODY_BYTES,
    TRIAGE_API_TOKEN_CACHE_SECONDS,
    TRIAGE_JUDGE_THREADS,
    TRIAGE_MAX_ATTEMPTS,
    TRIAGE_PROCESSING_TIMEOUT_S,
    TRIAGE_PUBLISH_INTERVAL_MS,
)
from config.settings_security import (  # noqa: F401 — settings Django reads by name
    AUDITLOG_INCLUDE_TRACKING_MODELS,
    AUDITLOG_STORE_JSON_CHANGES,
    AUTHENTICATION_BACKENDS,
    AXES_CLIENT_IP_CALLABLE,
    AXES_COOLOFF_TIME,
    AXES_FAILURE_LIMIT,
    AXES_LOCKOUT_PARAMETERS,
    AXES_LOCKOUT_TEMPLATE,
    AXES_RESET_ON_SUCCESS,
    CONTENT_SECURITY_POLICY,
    CSRF_COOKIE_HTTPONLY,
    CSRF_COOKIE_SECURE,
    DEBUG,
    DJANGO_ENV,
    PRODUCTION,
    SECURE_CONTENT_TYPE_NOSNIFF,
    SECURE_CROSS_ORIGIN_OPENER_POLICY,
    SECURE_HSTS_INCLUDE_SUBDOMAINS,
    SECURE_HSTS_PRELOAD,
    SECURE_HSTS_SECONDS,
    SECURE_PROXY_SSL_HEADER,
    SECURE_REDIRECT_EXEMPT,
    SECURE_REFERRER_POLICY,
    SECURE_SSL_REDIRECT,
    SESSION_COOKIE_HTTPONLY,
    SESSION_COOKIE_SECURE,
    TESTING,
    TRUSTED_PROXY_COUNT,
    VENDOR_SIMULATOR_ENABLED,
    X_FRAME_OPTIONS,
)
from config.settings_warehouses import (  # noqa: F401 — settings Django reads by name
    WAREHOUSE_ALLOW_UNSAFE_ROLE,
    WAREHOUSE_CELL_MAX_BYTES,
    WAREHOUSE_DUCKDB_MEMORY_LIMIT_MB,
    WAREHOUSE_DUCKDB_THREADS,
    WAREHOUSE_MAX_RECURSIVE_ROWS,
    WAREHOUSE_MAX_SQL_BYTES,
    WAREHOUSE_MAX_SQL_CTES,
    WAREHOUSE_MAX_SQL_DEPTH,
    WAREHOUSE_MAX_SQL_GROUPING_SETS,
    WAREHOUSE_MAX_SQL_JOINS,
    WAREHOUSE_MAX_SQL_LITERAL_BYTES,
    WAREHOUSE_MAX_SQL_NODES,
    WAREHOUSE_MAX_SQL_PATTERN_BYTES,
    WAREHOUSE_MAX_SQL_WIDTH,
    WAREHOUSE_PG_COLLAPSE_LIMIT,
    WAREHOUSE_PG_GEQO_THRESHOLD,
    WAREHOUSE_PG_HASH_MEM_MULTIPLIER,
    WAREHOUSE_PG_ROLE_STATEMENT_TIMEOUT_S,
    WAREHOUSE_PG_TEMP_FILE_LIMIT_KB,
    WAREHOUSE_PG_WORK_MEM_KB,
    WAREHOUSE_RESULT_MAX_BYTES,
    WAREHOUSE_SQLITE_HEAP_LIMIT,
    WAREHOUSE_SQLITE_MAX_LENGTH,
    WAREHOUSE_SQLITE_PROCESS_MEMORY,
)

BASE_DIR = Path(__file__).resolve().parent.parent
# Where local state lives; importing settings creates it not (manage.py does: config/local_state.py).
VAR_DIR = env_path("DOCKET_VAR_DIR", BASE_DIR / "var")
SECRET_KEY_FILE = VAR_DIR / "secret_key"


def _secret_key() -> str:
    """Use SECRET_KEY from the environment, else the one generated once into var/secret_key."""
    from_env = env_text("SECRET_KEY")
    if from_env:
        return from_env
    if SECRET_KEY_FILE.exists():
        return SECRET_KEY_FILE.read_text().strip()
    if TESTING:
        return secrets.token_urlsafe(50)  # pytest reads settings before anything could write a key
    raise ImproperlyConfigured(
        f"SECRET_KEY is not set and {SECRET_KEY_FILE} does not exist: set SECRET_KEY, "
        "or run `manage.py` once to generate the file."
    )


SECRET_KEY = _secret_key()

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "drf_spectacular",
    "django_filters",
    "csp",
    "axes",
    "auditlog",
    "config",
    "probes",
    "labelling",
    "judges",
    "triage",
    "loops",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.middleware.MethodNotAllowedPageMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    # Who made a change, for the audit log (config/audit.py).
    "auditlog.middleware.AuditlogMiddleware",
    # Last, as django-axes asks: turns a locked-out login into its page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "config.roles.role_context",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

# --- Database -------------------------------------------------------------------------
DEFAULT_SQLITE_PATH = VAR_DIR / "docket.sqlite3"


DATABASES = {
    "default": env_setting(
        "DATABASE_URL",
        parse_database_url(f"sqlite:///{DEFAULT_SQLITE_PATH}"),
        parse_database_url,
        "a database URL such as postgresql://user@host:5432/name or sqlite:////path/to/file",
    )
}
# Keep a connection per thread for ten minutes (`?conn_max_age=` in DATABASE_URL overrides):
# a new PostgreSQL connection per request would cost more than an ingestion post itself.
# A connection that broke meanwhile is noticed and replaced before a request uses it.
# Not under `runserver`, which starts a thread per request: each would keep its own
# connection for ten minutes, and a busy page exhausts the server's max_connections (the
# Django documentation says not to combine the two). Tests close them too, so that threads
# a test started leave none open on a server other suites share.
RUNSERVER = sys.argv[1:2] == ["runserver"]
DATABASES["default"].setdefault("CONN_MAX_AGE", 0 if TESTING or RUNSERVER else 600)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file-backed test database lets a real Celery worker process see test data.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test_docket.sqlite3")}
    DATABASES["default"]["OPTIONS"] = {
        # WAL lets the web server and the worker write without "database is locked".
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
else:
    # Each test run creates its own database, named after the run, and drops only that:
    # two suites on one server never drop each other's (TEST_DATABASE_NAME overrides).
    DATABASES["default"]["TEST"] = {
        "NAME": env_text("TEST_DATABASE_NAME")
        or f"test_{DATABASES['default']['NAME']}_{env_text('DOCKET_TEST_RUN', str(os.getpid()))}"
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# Under pytest: fast password hashing (test users are created by the hundred).
if TESTING:
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

DATA_UPLOAD_MAX_MEMORY_SIZE = env_non_negative_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 2_621_440)

# --- Celery ---------------------------------------------------------------------------
# The default broker is kombu's filesystem transport: no server, works on a fresh machine.
# Tests get their own folder, so a running `make run` worker never eats their tasks.
# Under pytest-xdist (`-n 2`) each test process has its own folder and queue too, and so
# do the worker processes it starts (they inherit PYTEST_XDIST_WORKER).
XDIST_WORKER = env_text("PYTEST_XDIST_WORKER")
TEST_BROKER_NAME = f"test-broker-{XDIST_WORKER}" if XDIST_WORKER else "test-broker"
BROKER_DIR = env_path("DOCKET_BROKER_DIR", VAR_DIR / (TEST_BROKER_NAME if TESTING else "broker"))
CELERY_BROKER_URL = env_text("CELERY_BROKER_URL", "filesystem://")
# Parsed whatever the broker, so a bad value stops start-up even where it is not used yet.
BROKER_POLL_S = env_positive_float("DOCKET_BROKER_POLL_S", 0.05)
# One queue per app, so a deployment can give an app's work workers of its own
# (`celery -A config worker -Q judges`); config's own tasks (the ping) use the default
# queue. Every worker started without `-Q` consumes all of them (CELERY_TASK_QUEUES).
QUEUE_SUFFIX = f"-{XDIST_WORKER}" if XDIST_WORKER else ""
CELERY_TASK_DEFAULT_QUEUE = f"celery{QUEUE_SUFFIX}"
APP_QUEUES = {app: f"{app}{QUEUE_SUFFIX}" for app in ("probes", "labelling", "judges", "triage")}
CELERY_TASK_ROUTES = {f"{app}.*": {"queue": queue} for app, queue in APP_QUEUES.items()}
CELERY_TASK_QUEUES = {
    name: {"exchange": name, "routing_key": name} for name in (CELERY_TASK_DEFAULT_QUEUE, *APP_QUEUES.values())
}
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's filesystem transport with whole-or-nothing messages (config/transport.py:
    # kombu's own can hand a reader a half-written file, which stops the worker). It makes
    # its folders when it first connects.
    CELERY_BROKER_TRANSPORT = "config.transport:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "in"),
        "data_folder_out": str(BROKER_DIR / "in"),
        "processed_folder": str(BROKER_DIR / "processed"),
        # kombu's exchange tables; by default a `control/` folder in the working directory.
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        # How often an idle worker looks for new files (a task waits half of it on average):
        # twenty a second cost an idle worker ~0.6% of a core, and a run starts sooner.
        "polling_interval": BROKER_POLL_S,
    }
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = TIME_ZONE
# Triage: nothing accepted by the API is lost (sweep pending), judges are re-measured hourly.
CELERY_BEAT_SCHEDULE = {
    "triage-requeue-pending": {"task": "triage.requeue_pending", "schedule": 60.0},
    "triage-monitor-judges": {"task": "triage.monitor_judges", "schedule": 3600.0},
    # The queue's SLA, live failures and failed runs (drift stays hourly, above).
    "triage-check-alerts": {"task": "triage.check_alerts", "schedule": 60.0},
    # A chunk whose worker died mid-run is leased again, so a killed run finishes by itself.
    "judges-requeue-stale-chunks": {"task": "judges.requeue_stale_chunks", "schedule": 60.0},
}
# --- Vendors ----------------------------------------------------------------------------
# Keys come only from the environment; they are never stored in the database or shown.
ANTHROPIC_API_KEY = env_text("ANTHROPIC_API_KEY")
ANTHROPIC_BASE_URL = env_text("ANTHROPIC_BASE_URL")
OPENAI_API_KEY = env_text("OPENAI_API_KEY")
OPENAI_BASE_URL = env_text("OPENAI_BASE_URL")
# Where the local vendor simulator listens; judges may use it only when
# VENDOR_SIMULATOR_ENABLED is on (config/settings_security.py: on locally, off in production).
VENDOR_SIMULATOR_URL = env_text("VENDOR_SIMULATOR_URL", "http://127.0.0.1:8765")

# --- Warehouses -----------------------------------------------------------------------
# DSNs come from WAREHOUSE_<NAME>_URL or from this file (JSON: {"name": "dsn"}), never
# from the application database.
WAREHOUSES_FILE = env_path("WAREHOUSES_FILE", VAR_DIR / "warehouses.json")
WAREHOUSE_STATEMENT_TIMEOUT_S = env_positive_float("WAREHOUSE_STATEMENT_TIMEOUT_S", 5.0)
WAREHOUSE_ROW_CAP = env_positive_int("WAREHOUSE_ROW_CAP", 1000)


REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    # JSON only: the browsable HTML page reads a user's groups, which a token client has not (a 500).
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Docket API",
    "DESCRIPTION": "Live query ingestion and triage status.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
}

# --- Logging --------------------------------------------------------------------------
LOG_LEVEL = env_setting(
    "LOG_LEVEL", "INFO", parse_choice(tuple(logging.getLevelNamesMapping())), "DEBUG, INFO, WARNING, ERROR or CRITICAL"
)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    # A refused request (403, 404) is the client's doing: one line, not a traceback.
    "filters": {
        "no_client_error_tracebacks": {"()": "config.log_filters.NoClientErrorTracebacks"},
        "one_line_per_refusal": {"()": "config.log_filters.OneLinePerRefusal"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["no_client_error_tracebacks"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # One INFO line per vendor call (httpx) is noise; its warnings and errors still show.
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        # django-axes' banner at every start; its lockouts are warnings and still show.
        "axes.apps": {"level": "WARNING"},
        # runserver's line per request, at INFO: shown at LOG_LEVEL=INFO, not under `make run`.
        # A refusal's line is django.request's; runserver's own for a 4xx is dropped (one line each).
        "django.server": {
            "handlers": ["console"],
            "level": LOG_LEVEL,
            "propagate": False,
            "filters": ["one_line_per_refusal"],
        },
    },
}

# --- Judge vendor access (issue 13) ------------------------------------------------------
# A judge may read only these environment variables as its API key, and send it only to
# these base URLs (a judge's base_url must equal one or lie under it; the simulator's
# VENDOR_SIMULATOR_URL is allowed while VENDOR_SIMULATOR_ENABLED is on). Set by an admin; see judges/vendor_access.py.
JUDGE_API_KEY_VARS = env_list("JUDGE_API_KEY_VARS", ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"])
JUDGE_BASE_URLS = env_list("JUDGE_BASE_URLS", [])
for _name in JUDGE_API_KEY_VARS:
    if not _name.isidentifier():
        raise ImproperlyConfigured(f"JUDGE_API_KEY_VARS: {_name!r} is not an environment variable name.")
for _url in JUDGE_BASE_URLS:
    if not _url.startswith(("http://", "https://")) or "@" in _url:
        raise ImproperlyConfigured(f"JUDGE_BASE_URLS: {_url!r} is not an http(s) URL without credentials.")
# No key or DSN the process holds is written to a log.
LOGGING["filters"]["redact_secrets"] = {"()": "judges.vendor_access.RedactSecretsFilter"}
LOGGING["handlers"]["console"]["filters"].append("redact_secrets")
# --- end judge vendor access -------------------------------------------------------------
