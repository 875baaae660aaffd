"""What must not change: a warehouse's state seen from a second connection, before and after each text.

Table checksums and write counters, sequences, large objects, relations, a victim session
still alive and no other session left behind, files in the server's data directory and
/tmp, settings, locks, statistics reset times, the reader's role.
"""

import time
from pathlib import Path

import psycopg

from probes.tests import shop

PWNED_PREFIX = "docket-probes-pwned"


def tmp_pwned_files() -> list[str]:
    return sorted(p.name for p in Path("/tmp").iterdir() if p.name.startswith(PWNED_PREFIX))


class PostgresWatch:
    """A second connection (the owner's) that sees the warehouse, and a victim session."""

    def __init__(self, owner_dsn: str, reader_role: str):
        self.owner_dsn, self.reader_role = owner_dsn, reader_role
        self.monitor = psycopg.connect(owner_dsn, autocommit=True)
        self.victim = psycopg.connect(owner_dsn, autocommit=True, application_name="docket-victim")
        self.victim_pid = self.victim.info.backend_pid

    def state(self) -> dict:
        state = shop.postgres_state(self.owner_dsn)
        run = self.monitor.execute
        state["data_dir"] = run("SELECT array_agg(f ORDER BY f) FROM pg_ls_dir('.') f").fetchone()[0]
        state["tmp_files"] = tmp_pwned_files()
        state["auto_conf"] = run("SELECT md5(pg_read_file('postgresql.auto.conf'))").fetchone()[0]
        state["server_settings"] = run(
            "SELECT md5(string_agg(name || '=' || coalesce(setting, ''), ',' ORDER BY name)) FROM pg_settings "
            "WHERE context IN ('postmaster', 'sighup', 'superuser-backend', 'backend')"
        ).fetchone()[0]
        state["role_settings"] = run(
            "SELECT md5(coalesce(string_agg(setdatabase || ':' || setrole || ':' || setconfig::text, ',' "
            "ORDER BY setdatabase, setrole), '')) FROM pg_db_role_setting"
        ).fetchone()[0]
        state["sequences"] = run(
            "SELECT coalesce(string_agg(sequencename || ':' || coalesce(last_value, 0), ',' "
            "ORDER BY sequencename), '') FROM pg_sequences"
        ).fetchone()[0]
        state["locks"] = run(
            "SELECT count(*) FROM pg_locks WHERE pid <> pg_backend_pid() "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()[0]
        state["stats_reset"] = run(
            "SELECT (SELECT stats_reset FROM pg_stat_database WHERE datname = current_database())::text, "
            "(SELECT stats_reset FROM pg_stat_bgwriter)::text, (SELECT stats_reset FROM pg_stat_archiver)::text"
        ).fetchone()
        state["reader_role"] = run(
            "SELECT rolsuper, rolcreaterole, rolcreatedb, rolbypassrls, rolreplication, "
            "(SELECT count(*) FROM pg_auth_members m WHERE m.member = r.oid) FROM pg_roles r WHERE rolname = %s",
            [self.reader_role],
        ).fetchone()
        return state

    def problems_after(self, before: dict) -> tuple[list[str], dict]:
        """What changed since `before` (seen from the monitor), and the state now."""
        problems = []
        try:
            self.victim.execute("SELECT 1")
        except Exception as exc:  # noqa: BLE001 - any failure means the victim was hurt
            problems.append(f"the victim session died: {exc}")
        leftovers = self._sessions_left()
        if leftovers:
            problems.append(f"sessions left running: {leftovers}")
        after = self.state()
        problems += [f"{key} changed: {before[key]!r} -> {after[key]!r}" for key in before if before[key] != after[key]]
        return problems, after

    def _sessions_left(self) -> list:
        """Client sessions on the warehouse other than the monitor and the victim (give exits 2 s)."""
        deadline = time.monotonic() + 2
        while True:
            rows = self.monitor.execute(
                "SELECT pid, state, left(query, 80) FROM pg_stat_activity WHERE datname = current_database() "
                "AND backend_type = 'client backend' AND pid NOT IN (pg_backend_pid(), %s)",
                [self.victim_pid],
            ).fetchall()
            if not rows or time.monotonic() > deadline:
                return rows
            time.sleep(0.05)

    def close(self):
        self.monitor.close()
        self.victim.close()


class SqliteWatch:
    def __init__(self, path: Path):
        self.path = path

    def state(self) -> dict:
        return {
            "file": shop.sqlite_fingerprint(self.path),
            "directory": sorted(p.name for p in self.path.parent.iterdir()),
            "tmp_files": tmp_pwned_files(),
        }

    def problems_after(self, before: dict) -> tuple[list[str], dict]:
        after = self.state()
        return [
            f"{key} changed: {before[key]!r} -> {after[key]!r}" for key in before if before[key] != after[key]
        ], after

    def close(self):
        pass
