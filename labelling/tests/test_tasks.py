"""The labelling task: routed to the labelling queue, retried on transient errors only."""

from celery.exceptions import Retry

from labelling.tasks import query_fingerprint_fill


def test_the_fingerprint_task_retries_lost_connections_and_nothing_else():
    names = {f"{error.__module__}.{error.__name__}" for error in query_fingerprint_fill.autoretry_for}
    assert names == {
        "django.db.utils.OperationalError",
        "django.db.utils.InterfaceError",
        "kombu.exceptions.OperationalError",
    }
    assert query_fingerprint_fill.retry_backoff and query_fingerprint_fill.max_retries == 5
    assert not issubclass(ValueError, query_fingerprint_fill.autoretry_for)
    assert Retry not in query_fingerprint_fill.autoretry_for
