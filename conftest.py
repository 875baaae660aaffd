"""Shared pytest setup: role users, service requirements, and a real Celery worker."""

from django.conf import settings
from django.test import TransactionTestCase

from config.local_state import local_state_prepare
from labelling.immutability import allow_flush
from tests.support.services import database_is_postgres

pytest_plugins = ["tests.support.fixtures"]


def pytest_configure(config):
    """Make var/ and the secret key file the worker and command subprocesses read."""
    local_state_prepare()
    admit_published_versions_in_teardown_flush()


def admit_published_versions_in_teardown_flush():
    """Let a transactional test's teardown empty published gold-set versions too.

    Django's `flush` between transactional tests issues DELETEs on SQLite, which the
    immutability triggers refuse for published versions outside `allow_flush()` (what
    `reset_demo` uses). `manage.py flush` itself stays Django's own.
    """
    teardown = TransactionTestCase._fixture_teardown

    def fixture_teardown(self):
        with allow_flush():
            return teardown(self)

    TransactionTestCase._fixture_teardown = fixture_teardown


def pytest_collection_modifyitems(config, items):
    """Deselect tests of a configuration this run does not have (not of a missing service).

    PostgreSQL-only tests are deselected on a SQLite run (when DATABASE_URL names PostgreSQL
    and the server is down, they run and fail), and the embedded broker's tests on a run
    whose CELERY_BROKER_URL names a real broker: they test the broker `make run` uses.
    """
    on_postgres = database_is_postgres()
    on_filesystem_broker = settings.CELERY_BROKER_URL.startswith("filesystem://")
    kept, dropped = [], []
    for item in items:
        unwanted = (item.get_closest_marker("postgres") and not on_postgres) or (
            item.get_closest_marker("filesystem_broker") and not on_filesystem_broker
        )
        (dropped if unwanted else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
