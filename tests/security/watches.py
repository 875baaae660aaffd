"""What must not change, and what a text may cost, seen from outside the command.

Before and after each text, from a second connection: table checksums and write counters,
sequences, large objects, relations, a victim session still alive and no other session left
behind, files in the server's data directory and /tmp, settings, locks, statistics reset
times, the reader's role, and the temporary bytes the database wrote (`temp_bytes`). During
each text (`MemorySampler`): the memory of the executing process tree and of the warehouse's
backends. After it: whether an answer names something the reader was never granted
(`leaked_names`).
"""

import contextlib
import threading
import time
from pathlib import Path

import psycopg
from django.conf import settings

from probes.tests import shop

PWNED_PREFIX = "docket-probes-pwned"
# Temporary bytes one statement may make the database write: the reader role's
# temp_file_limit (a superuser's session sets the same), and a little for the file being
# written when it hit.
TEMP_BYTES_LIMIT = (settings.WAREHOUSE_PG_TEMP_FILE_LIMIT_KB + 16 * 1024) * 1024


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
        # The settings that reach the reader's and the owner's sessions: global, this database's, theirs.
        # Other suites on the same server create roles of their own with settings, so the whole
        # catalogue is not the warehouse's to watch.
        state["role_settings"] = run(
            "SELECT md5(coalesce(string_agg(setdatabase || ':' || setrole || ':' || setconfig::text, ',' "
            "ORDER BY setdatabase, setrole), '')) FROM pg_db_role_setting "
            "WHERE setdatabase IN (0, (SELECT oid FROM pg_database WHERE datname = current_database())) "
            "AND setrole IN (0, (SELECT oid FROM pg_roles WHERE rolname = %s), "
            "(SELECT oid FROM pg_roles WHERE rolname = current_user))",
            [self.reader_role],
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
        state["temp_bytes"] = run(
            "SELECT temp_bytes FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()[0]
        state["reader_role"] = run(
            "SELECT rolsuper, rolcreaterole, rolcreatedb, rolbypassrls, rolreplication, "
            "(SELECT count(*) FROM pg_auth_members m WHERE m.member = r.oid) FROM pg_roles r WHERE rolname = %s",
            [self.reader_role],
        ).fetchone()
        return state

    def problems_after(self, before: dict, statements: int = 1) -> tuple[list[str], dict]:
        """What changed since `before` (seen from the monitor), and the state now.

        `statements` is how many statements the call may run, each under its own
        temp_file_limit.
        """
        problems = []
        try:
            self.victim.execute("SELECT 1")
        except Exception as exc:  # noqa: BLE001 - any failure means the victim was hurt
            problems.append(f"the victim session died: {exc}")
        leftovers = self._sessions_left()
        if leftovers:
            problems.append(f"sessions left running: {leftovers}")
        self.monitor.execute("SELECT pg_stat_clear_snapshot()")
        after = self.state()
        written = after["temp_bytes"] - before["temp_bytes"]
        if written > TEMP_BYTES_LIMIT * statements:
            problems.append(f"wrote {written / 2**20:.0f} MB of temporary files")
        problems += [
            f"{key} changed: {before[key]!r} -> {after[key]!r}"
            for key in before
            if key != "temp_bytes" and before[key] != after[key]
        ]
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

    def problems_after(self, before: dict, statements: int = 1) -> tuple[list[str], dict]:
        after = self.state()
        return [
            f"{key} changed: {before[key]!r} -> {after[key]!r}" for key in before if before[key] != after[key]
        ], after

    def close(self):
        pass


# --- what the SQL cost, measured from outside: memory of the processes that ran it ----------


def _status(pid: int) -> dict[str, int]:
    """The kB figures of /proc/<pid>/status (VmHWM, VmRSS, RssAnon), {} if it is gone."""
    figures = {}
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmHWM", "VmRSS", "RssAnon", "PPid"):
                    figures[key] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        return {}
    return figures


def _processes() -> dict[int, tuple[int, str]]:
    """Every process: pid -> (parent pid, command line)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        found[int(entry.name)] = (parent, command)
    return found


class MemorySampler:
    """Sample, while a call runs, the executor's process tree and the warehouse's backends.

    The tree's figure is VmHWM (a high-water mark: a late sample still sees the peak) of the
    executor and every process under it (the SQLite fork server and each query's child);
    a PostgreSQL backend's is its private memory (RssAnon, shared buffers left out), by the
    database name in its command line. Sampled every `PERIOD_S`: a process that grows and
    dies between two samples could be missed, which `test_the_memory_bound_is_measured...`
    shows is not the case for what the corpus builds.
    """

    PERIOD_S = 0.01

    def __init__(self, root_pid: int, database: str | None = None):
        self.root_pid, self.database = root_pid, database
        self._stop = threading.Event()
        self.tree_kb = self.backend_kb = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        # Each call's own peak: reset the high-water marks of the tree (Linux: "5" > clear_refs).
        for pid in self._tree(_processes()):
            with contextlib.suppress(OSError):
                Path(f"/proc/{pid}/clear_refs").write_text("5")
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self):
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.PERIOD_S)

    def _tree(self, processes: dict[int, tuple[int, str]]) -> set[int]:
        tree, grew = {self.root_pid}, True
        while grew:
            grew = False
            for pid, (parent, _command) in processes.items():
                if parent in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        return tree

    def _sample(self):
        processes = _processes()
        for pid in self._tree(processes):
            self.tree_kb = max(self.tree_kb, _status(pid).get("VmHWM", 0))
        if self.database:
            marker = f" {self.database} "
            for pid, (_parent, command) in processes.items():
                if command.startswith("postgres: ") and marker in command:
                    self.backend_kb = max(self.backend_kb, _status(pid).get("RssAnon", 0))

    @property
    def tree_mb(self) -> float:
        return self.tree_kb / 1024

    @property
    def backend_mb(self) -> float:
        return self.backend_kb / 1024


def leaked_names(text: str, sql: str, markers: tuple[str, ...]) -> list[str]:
    """The markers of never-granted names an answer shows that its SQL text did not name."""
    lowered, asked = text.lower(), sql.lower()
    return [marker for marker in markers if marker in lowered and marker not in asked]
