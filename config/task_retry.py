"""The one retry policy of Docket's Celery tasks: `@shared_task(..., **RETRY_ON_TRANSIENT)`.

A task retries on a lost or busy database or broker connection, and nothing else: retrying a
bug only repeats it ("only retry for things that might be okay on the next try"). Every task
acknowledges its message late, so a worker that dies mid-task leaves it to be redelivered.
"""

from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerOperationalError

TRANSIENT_ERRORS = (OperationalError, InterfaceError, BrokerOperationalError)
# Backoff doubles from 1 s (with jitter) up to a minute; five tries cover a database restart.
RETRY_BACKOFF_MAX_S = 60
MAX_RETRIES = 5
RETRY_ON_TRANSIENT = {
    "acks_late": True,
    "autoretry_for": TRANSIENT_ERRORS,
    "retry_backoff": True,
    "retry_backoff_max": RETRY_BACKOFF_MAX_S,
    "retry_jitter": True,
    "max_retries": MAX_RETRIES,
}
