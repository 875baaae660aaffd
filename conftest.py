"""Shared pytest setup: role users, service requirements, and a real Celery worker."""

from tests.support.services import database_is_postgres

pytest_plugins = ["tests.support.fixtures"]


def pytest_collection_modifyitems(config, items):
    """Deselect PostgreSQL-only tests on a SQLite run (a configuration, not a missing service).

    When DATABASE_URL names PostgreSQL and the server is down, those tests run and fail.
    """
    if database_is_postgres():
        return
    kept, dropped = [], []
    for item in items:
        (dropped if item.get_closest_marker("postgres") else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
