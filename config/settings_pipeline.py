"""Settings of the live pipeline and of calibration runs, imported by `config/settings.py`.

Kept apart so the settings module stays readable; each value is read from the environment by
`config/env.py`'s helpers, like every other setting, and fails loudly on a bad value.
"""

from config.env import env_non_negative_float, env_positive_float, env_positive_int, env_text

# The key each webhook's signing secret is derived from (triage/webhooks.py); empty: SECRET_KEY.
# Changing it changes every webhook's secret (run add_webhook again for each receiver).
ALERT_WEBHOOK_KEY = env_text("ALERT_WEBHOOK_KEY")
# Where alert e-mails and their links come from.
ALERT_EMAIL_FROM = env_text("ALERT_EMAIL_FROM", "docket-alerts@localhost")
ALERT_SITE_URL = env_text("ALERT_SITE_URL", "http://127.0.0.1:8000")
# Django's e-mail backend for alert e-mails (the test run uses its outbox instead).
EMAIL_BACKEND = env_text("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_text("EMAIL_HOST", "localhost")
EMAIL_PORT = env_positive_int("EMAIL_PORT", 25)
TRIAGE_API_MAX_BODY_BYTES = env_positive_int("TRIAGE_API_MAX_BODY_BYTES", 4 * 1024 * 1024)
# How long a web process trusts a token it has looked up; a revocation takes this long
# to reach the other processes (the revoking one drops it at once).
TRIAGE_API_TOKEN_CACHE_SECONDS = env_positive_float("TRIAGE_API_TOKEN_CACHE_SECONDS", 5)
# A live query still `processing` after this long was left by a worker that died; the
# sweeper re-sends it and the next worker takes it over. Longer than any pipeline run
# (judge timeouts and retries included), or a slow run would be judged twice.
TRIAGE_PROCESSING_TIMEOUT_S = env_positive_float("TRIAGE_PROCESSING_TIMEOUT_S", 600)
# A web process publishes the pipeline's work at most this often, from a background
# thread; under load the posts of one interval share a broker message
# (triage/publishing.py). 0 publishes in the request, after commit. The test suite runs
# the production path too; a test that must see the publish (or its failure) when the
# request returns asks for the `synchronous_publish` fixture.
TRIAGE_PUBLISH_INTERVAL_MS = env_non_negative_float("TRIAGE_PUBLISH_INTERVAL_MS", 50)
# Threads per worker process that call live judges; shared by every pipeline task.
TRIAGE_JUDGE_THREADS = env_positive_int("TRIAGE_JUDGE_THREADS", 32)
# Database connections one process may hold: its task's own thread plus at most this many
# minus one of the threads it starts (live judges; config/db_budget.py). Processes × this
# must stay within the server's max_connections (README.md, "Production").
DB_MAX_CONNECTIONS_PER_PROCESS = env_positive_int("DB_MAX_CONNECTIONS_PER_PROCESS", 8)
# Pipeline runs a live query gets (a run that raised, or whose worker died, counts one);
# then it is `failed`, with its last error, on the unjudged page until someone requeues it.
TRIAGE_MAX_ATTEMPTS = env_positive_int("TRIAGE_MAX_ATTEMPTS", 5)
# A calibration chunk's lease: its worker renews it at every flush (about each second); a
# lease not renewed this long means the worker died, and another may take the chunk.
# Longer than any one vendor call with its retries, or a slow call would lose its chunk.
JUDGES_CHUNK_LEASE_S = env_positive_float("JUDGES_CHUNK_LEASE_S", 300)

# Django's caches, each in a process's own memory. "calibration" keeps the dashboard's loaded
# verdict arrays (judges/calibration_cache.py), an entry up to tens of megabytes: it holds a
# few selections, apart from the small entries (tokens, catalogues) of "default".
CALIBRATION_CACHE_ENTRIES = env_positive_int("CALIBRATION_CACHE_ENTRIES", 8)
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "docket-default"},
    "calibration": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "docket-calibration",
        "OPTIONS": {"MAX_ENTRIES": CALIBRATION_CACHE_ENTRIES},
    },
}
