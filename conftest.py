"""Shared pytest setup: role users, service requirements, and a real Celery worker."""

import os

import pytest
from django.conf import settings
from django.test import TransactionTestCase

from config.local_state import local_state_prepare
from labelling.immutability import allow_flush
from tests.support.services import database_is_postgres

pytest_plugins = ["tests.support.fixtures"]

# The tests run locally, over plain http, with the vendor simulator: so do the workers,
# servers and commands they start, which inherit this (this process itself is `local`
# because it runs under pytest; config/settings_security.py).
os.environ.setdefault("DJANGO_ENV", "local")


def pytest_configure(config):
    """Make var/ and the secret key file the worker and command subprocesses read."""
    local_state_prepare()
    share_the_secret_key_with_subprocesses()
    admit_published_versions_in_teardown_flush()


def share_the_secret_key_with_subprocesses():
    """Sign with the key the workers and servers this suite starts will read.

    On a fresh clone settings were read before var/secret_key existed, so this process drew a
    key of its own; a session it made was then refused (302 to login) by a `runserver` it
    started, and a webhook signed by a worker would not verify here.
    """
    if not os.environ.get("SECRET_KEY"):
        settings.SECRET_KEY = settings.SECRET_KEY_FILE.read_text().strip()


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
    ci_share = os.environ.get("DOCKET_CI_SHARE", "")
    kept, dropped = [], []
    for item in items:
        if item.get_closest_marker("postgres") and item.get_closest_marker("any_app_database"):
            # The SQLite pass deselects the one, the PostgreSQL pass the other: it would never run in CI.
            raise pytest.UsageError(f"{item.nodeid} is marked both postgres and any_app_database")
        unwanted = (
            (item.get_closest_marker("postgres") and not on_postgres)
            or (item.get_closest_marker("filesystem_broker") and not on_filesystem_broker)
            or not ci_share_keeps(item, ci_share)
        )
        (dropped if unwanted else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


# Fixtures through which a test reaches the app database (directly, or through a server).
DATABASE_FIXTURES = {
    "db",
    "transactional_db",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
    "live_server",
}


def uses_app_database(item) -> bool:
    """True for a test that reaches the app database, itself or through a worker or browser."""
    if DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    test_class = getattr(item, "cls", None)
    if test_class is not None and issubclass(test_class, TransactionTestCase):  # Django's TestCase too
        return True
    return any(item.get_closest_marker(name) for name in ("django_db", "worker", "browser", "postgres"))


def ci_share_keeps(item, share: str) -> bool:
    """CI runs `make test` twice at once; DOCKET_CI_SHARE gives each pass its share of what
    does not depend on the app database, so that is run once, not twice.

    "sqlite": the browser journeys are left to the PostgreSQL pass (which drives them against
    PostgreSQL, Redis and a real worker), but for those marked `any_app_database` (the sweeps
    of every page's markup), which run here instead. "postgres": tests that never touch the app database
    (pure functions, commands on scratch databases, the local supervisor) are left to the
    SQLite pass, and so are tests marked `any_app_database` (what they test is a warehouse or
    a broker, e.g. the guard's corpus on a SQLite warehouse; the app database only holds
    their records, so running them on both would repeat minutes for nothing). Unset
    (`make test` anywhere else), every test runs.
    """
    if item.get_closest_marker("mariadb"):
        # The MySQL warehouse's tests run once, in the SQLite pass: the PostgreSQL pass, with
        # the browser journeys, is the longer of the two (19.9 min against 14.8 in CI).
        return share != "postgres"
    if share == "sqlite":
        # Browser journeys marked `any_app_database` (every page's markup under axe and the
        # CSP: ~70 s) run here, balancing the passes (PostgreSQL 789 s against 652 in CI).
        return not item.get_closest_marker("browser") or bool(item.get_closest_marker("any_app_database"))
    if share == "postgres":
        return uses_app_database(item) and not item.get_closest_marker("any_app_database")
    return True
