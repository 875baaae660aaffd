"""What a task may retry on: a lost or busy database or broker connection, and nothing else.

Retrying a bug only repeats it; these are the errors that can be gone on the next try
("only retry for things that might be okay on the next try").
"""

from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerOperationalError

TRANSIENT_ERRORS = (OperationalError, InterfaceError, BrokerOperationalError)
# Backoff doubles from 1 s (with jitter) up to a minute; five tries cover a database restart.
RETRY_BACKOFF_MAX_S = 60
MAX_RETRIES = 5
