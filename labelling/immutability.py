"""Database-level immutability of published gold set versions.

Migration 0003 installs triggers (PostgreSQL and SQLite) that refuse any INSERT, UPDATE
or DELETE touching a frozen version or its items, whatever code path issues it. The only
sanctioned exception is wiping the whole database (`manage.py reset_demo`, and the test
harness's teardown): on PostgreSQL Django's `flush` uses TRUNCATE, which row triggers do
not see; on SQLite it issues plain DELETEs, so the SQLite triggers consult
`docket_flush_allowed()`, a function `labelling.signals.register_sqlite_function` registers
on every Django SQLite connection and which answers 1 only inside `allow_flush()`. Django's own `manage.py flush`
is left as Django ships it, so on SQLite it refuses to delete published versions.
A connection that lacks the function (the sqlite3 shell) cannot delete the rows at all.
In Python, the models' querysets (`FrozenVersionQuerySet`, `FrozenItemQuerySet`) refuse a bulk
update or delete that would touch a frozen version, with `ImmutableVersionError`.
"""

import contextlib
import threading

from django.db import models

_state = threading.local()

REFUSAL = "labelling: a published gold set version is immutable"


class ImmutableVersionError(Exception):
    """Raised when code tries to change a published (frozen) gold set version."""


class FrozenVersionQuerySet(models.QuerySet):
    """Refuse bulk updates and deletes that would touch a frozen version (the DB refuses too)."""

    frozen_lookup = "is_frozen"

    def _touches_frozen(self) -> bool:
        return self.filter(**{self.frozen_lookup: True}).exists()

    def update(self, **kwargs):
        if self._touches_frozen():
            raise ImmutableVersionError("A published gold set version cannot be changed.")
        return super().update(**kwargs)

    def delete(self):
        if self._touches_frozen():
            raise ImmutableVersionError("A published gold set version cannot be deleted.")
        return super().delete()


class FrozenItemQuerySet(FrozenVersionQuerySet):
    frozen_lookup = "version__is_frozen"


def flush_allowed() -> int:
    return 1 if getattr(_state, "flushing", False) else 0


@contextlib.contextmanager
def allow_flush():
    """Let the SQLite triggers admit the whole-database wipe that `flush` performs."""
    _state.flushing = True
    try:
        yield
    finally:
        _state.flushing = False


SQLITE_TRIGGERS = [
    f"""CREATE TRIGGER labelling_version_refuse_update BEFORE UPDATE ON labelling_goldsetversion
    WHEN OLD.is_frozen = 1 BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END;""",
    f"""CREATE TRIGGER labelling_version_refuse_delete BEFORE DELETE ON labelling_goldsetversion
    WHEN OLD.is_frozen = 1 AND docket_flush_allowed() = 0 BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END;""",
    f"""CREATE TRIGGER labelling_versionitem_refuse_insert BEFORE INSERT ON labelling_goldsetversionitem
    WHEN (SELECT is_frozen FROM labelling_goldsetversion WHERE id = NEW.version_id) = 1
    BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END;""",
    f"""CREATE TRIGGER labelling_versionitem_refuse_update BEFORE UPDATE ON labelling_goldsetversionitem
    WHEN (SELECT is_frozen FROM labelling_goldsetversion WHERE id = OLD.version_id) = 1
      OR (SELECT is_frozen FROM labelling_goldsetversion WHERE id = NEW.version_id) = 1
    BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END;""",
    f"""CREATE TRIGGER labelling_versionitem_refuse_delete BEFORE DELETE ON labelling_goldsetversionitem
    WHEN (SELECT is_frozen FROM labelling_goldsetversion WHERE id = OLD.version_id) = 1
      AND docket_flush_allowed() = 0
    BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END;""",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS labelling_version_refuse_update;",
    "DROP TRIGGER IF EXISTS labelling_version_refuse_delete;",
    "DROP TRIGGER IF EXISTS labelling_versionitem_refuse_insert;",
    "DROP TRIGGER IF EXISTS labelling_versionitem_refuse_update;",
    "DROP TRIGGER IF EXISTS labelling_versionitem_refuse_delete;",
]

# 23000 = integrity_constraint_violation, so Django raises IntegrityError on both vendors.
POSTGRES_TRIGGERS = [
    f"""CREATE FUNCTION labelling_refuse_frozen_version() RETURNS trigger AS $$
    BEGIN
      IF OLD.is_frozen THEN
        RAISE EXCEPTION '{REFUSAL}' USING ERRCODE = '23000';
      END IF;
      IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql;""",
    """CREATE TRIGGER labelling_version_immutable BEFORE UPDATE OR DELETE ON labelling_goldsetversion
    FOR EACH ROW EXECUTE FUNCTION labelling_refuse_frozen_version();""",
    f"""CREATE FUNCTION labelling_refuse_frozen_item() RETURNS trigger AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') AND EXISTS (
           SELECT 1 FROM labelling_goldsetversion WHERE id = OLD.version_id AND is_frozen) THEN
        RAISE EXCEPTION '{REFUSAL}' USING ERRCODE = '23000';
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') AND EXISTS (
           SELECT 1 FROM labelling_goldsetversion WHERE id = NEW.version_id AND is_frozen) THEN
        RAISE EXCEPTION '{REFUSAL}' USING ERRCODE = '23000';
      END IF;
      IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql;""",
    """CREATE TRIGGER labelling_versionitem_immutable BEFORE INSERT OR UPDATE OR DELETE
    ON labelling_goldsetversionitem FOR EACH ROW EXECUTE FUNCTION labelling_refuse_frozen_item();""",
]
POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS labelling_versionitem_immutable ON labelling_goldsetversionitem;",
    "DROP TRIGGER IF EXISTS labelling_version_immutable ON labelling_goldsetversion;",
    "DROP FUNCTION IF EXISTS labelling_refuse_frozen_item();",
    "DROP FUNCTION IF EXISTS labelling_refuse_frozen_version();",
]


def install_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = {"sqlite": SQLITE_TRIGGERS, "postgresql": POSTGRES_TRIGGERS}.get(vendor, [])
    for sql in statements:
        schema_editor.execute(sql)


def drop_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = {"sqlite": SQLITE_DROP, "postgresql": POSTGRES_DROP}.get(vendor, [])
    for sql in statements:
        schema_editor.execute(sql)
