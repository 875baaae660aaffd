"""Point this process's Celery publisher at another broker, e.g. a closed port for an outage."""

import contextlib
import os

from kombu import pools

from config.celery import app

# Nothing listens on port 1: every publish fails at once with "connection refused".
CLOSED_PORT_BROKER = "redis://127.0.0.1:1/0"


def reset_publisher_pools() -> None:
    """Drop pooled connections and producers so the next publish connects afresh."""
    pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


@contextlib.contextmanager
def broker_at(url):
    """Point this process's Celery publisher at another broker URL, then restore it."""
    previous, previous_env = app.conf.broker_url, os.environ.get("CELERY_BROKER_URL")
    # Celery reads CELERY_BROKER_URL from the environment before its own setting.
    os.environ["CELERY_BROKER_URL"] = app.conf.broker_url = url
    reset_publisher_pools()
    try:
        yield
    finally:
        app.conf.broker_url = previous
        if previous_env is None:
            os.environ.pop("CELERY_BROKER_URL", None)
        else:
            os.environ["CELERY_BROKER_URL"] = previous_env
        reset_publisher_pools()
