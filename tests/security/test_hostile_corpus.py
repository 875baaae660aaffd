"""The hostile corpus against real warehouses, through every entry point that runs SQL.

Three passes: SQLite, PostgreSQL as this run's read-only reader (the way Docket is meant to
run), and PostgreSQL as a superuser — whose registration is refused, so that pass runs
with WAREHOUSE_ALLOW_UNSAFE_ROLE=1 to show the guard alone also holds. Every corpus text
goes through `run_sql` in each pass; one refused and one allowed text per family also go
through the labelling preview, the verifier, the hypothesis judge's probe and the triage
pipeline (posted through the API).

The SQL runs in a separate process (`tests.security.executor`) so that its peak resident
memory is measured on the process that ran it. After each text a second connection checks
that nothing changed: table checksums and write counters, sequences, large objects,
relations, a victim session still alive and no other session left behind, files in the
server's data directory and /tmp, settings, locks, statistics reset times, the reader's
role. Each call must answer within its statements' timeouts + 2 s: a security bound (a
text that could hold a worker longer is a denial of service), not a speed benchmark.
"""

import json
import os
import select
import subprocess
import sys
import uuid
from collections import defaultdict
from pathlib import Path

import pytest
from django.conf import settings

from labelling.models import Query, QuerySource
from labelling.preview import PREVIEW_TIMEOUT_S
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import create_reader_role
from probes.role_check import UnsafeWarehouseRole
from probes.tests import shop
from probes.tests.hostile_corpus import CORPUS, FAMILIES
from probes.warehouses import warehouse_register
from tests.support.fixtures import database_url_for_worker
from tests.support.services import require_postgres_server
from triage.policy import policy_publish
from triage.tokens import api_token_issue

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 1.0
SLACK_S = 2.0
RSS_LIMIT_MB = 300
# Statements each entry point may run on the warehouse, each under its own timeout: the
# verifier's EXPLAIN and empty-result probe; the triage pipeline's verifier (two), fan-out
# probe and result preview. The labelling preview has its own fixed timeout.
STATEMENT_BUDGET_S = {
    "run_sql": TIMEOUT_S,
    "preview": PREVIEW_TIMEOUT_S,
    "verify": 2 * TIMEOUT_S,
    "probe": TIMEOUT_S,
    "triage": 4 * TIMEOUT_S,
}
OTHER_ENTRY_POINTS = ("preview", "verify", "probe", "triage")
PWNED_PREFIX = "docket-probes-pwned"

pytestmark = pytest.mark.django_db(transaction=True)


def texts_for(dialect: str) -> list:
    return [text for text in CORPUS if dialect in text.dialects]


def one_refused_and_one_allowed_per_family(dialect: str) -> list:
    """The first text the guard must refuse and the first it may allow, of every family."""
    chosen = {}
    for text in texts_for(dialect):
        chosen.setdefault((text.family, text.guard_must_refuse), text)
    return list(chosen.values())


def test_the_corpus_covers_every_family_with_at_least_150_texts():
    assert len(CORPUS) >= 150
    assert {text.family for text in CORPUS} == set(FAMILIES)
    assert len({text.name for text in CORPUS}) == len(CORPUS)
    for dialect in ("sqlite", "postgres"):
        families = {text.family for text in texts_for(dialect)}
        assert {text.family for text in one_refused_and_one_allowed_per_family(dialect)} == families


# --- the process that runs the SQL ------------------------------------------------------------


class Executor:
    """`tests.security.executor` in its own process, on the test database and given DSNs."""

    ANSWER_WAIT_S = 120

    def __init__(self, tmp_path: Path, extra_env: dict):
        env = dict(os.environ)
        env.update(
            {
                "DATABASE_URL": database_url_for_worker(),
                "DJANGO_SETTINGS_MODULE": "config.settings",
                # Settings write nothing: a process in a fresh var folder needs the key given.
                "SECRET_KEY": settings.SECRET_KEY,
                "WAREHOUSES_FILE": str(settings.WAREHOUSES_FILE),
                "WAREHOUSE_STATEMENT_TIMEOUT_S": str(TIMEOUT_S),
                "CELERY_TASK_ALWAYS_EAGER": "true",
                "TRIAGE_PUBLISH_INTERVAL_MS": "0",
                "DOCKET_VAR_DIR": str(tmp_path / "executor-var"),
            }
        )
        env.update(extra_env)
        self.log = (tmp_path / "executor.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.security.executor"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )

    def run(self, request: dict) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], self.ANSWER_WAIT_S)
        if not ready:
            self.close()
            pytest.fail(f"the executor gave no answer in {self.ANSWER_WAIT_S}s for {request['entry']}")
        line = self.process.stdout.readline()
        if not line:
            self.close()
            pytest.fail(f"the executor died on {request['entry']}: see {self.log.name}")
        return json.loads(line)

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


# --- what must not change ---------------------------------------------------------------------


def tmp_pwned_files() -> list[str]:
    return sorted(p.name for p in Path("/tmp").iterdir() if p.name.startswith(PWNED_PREFIX))


class PostgresWatch:
    """A second connection (the owner's) that sees the warehouse, and a victim session."""

    def __init__(self, owner_dsn: str, reader_role: str):
        import psycopg

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
        import time

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


# --- the passes ---------------------------------------------------------------------------------


def check_answer(entry: str, text, answer: dict) -> list[str]:
    """What is wrong with one answer, apart from the warehouse's state."""
    problems = []
    if "crash" in answer:
        return [f"crashed: {answer['crash']}"]
    bound = STATEMENT_BUDGET_S[entry] + SLACK_S
    if answer["elapsed_s"] > bound:
        problems.append(f"answered in {answer['elapsed_s']:.2f}s, past {bound:.1f}s")
    if answer["peak_rss_mb"] >= RSS_LIMIT_MB:
        problems.append(f"the executing process reached {answer['peak_rss_mb']:.0f} MB")
    cap = settings.WAREHOUSE_RESULT_MAX_BYTES + 64 * 1024  # the capped result plus its JSON wrapping
    if answer.get("stored_bytes", 0) > cap:
        problems.append(f"stored {answer['stored_bytes']} bytes, past the byte cap")
    if entry == "run_sql" and text.guard_must_refuse and answer["allowed"]:
        problems.append("the guard allowed it")
    if entry == "probe" and text.guard_must_refuse and answer["outcome"] != "refused":
        problems.append(f"the probe was not refused: {answer['outcome']} {answer['message']}")
    if entry == "verify" and text.guard_must_refuse and answer["passed"]:
        problems.append("the verifier passed it")
    if entry == "preview" and text.guard_must_refuse and answer["ok"]:
        problems.append("the preview ran it")
    if entry == "triage":
        if answer.get("status") not in (200, 202):
            problems.append(f"the API did not take the query: {answer}")
        elif text.guard_must_refuse and answer["preview_allowed"]:
            problems.append("the triage preview ran it")
    return problems


def run_pass(executor, watch, warehouse_name: str, dialect: str, *, entry_texts, token: str, queries: dict):
    """Run the corpus through run_sql and the chosen texts through the other entry points."""
    problems, record = defaultdict(list), []
    calls = [("run_sql", text) for text in texts_for(dialect)]
    calls += [(entry, text) for text in entry_texts for entry in OTHER_ENTRY_POINTS]
    before = watch.state()
    for entry, text in calls:
        request = {"entry": entry, "warehouse": warehouse_name, "sql": text.sql}
        if entry == "preview":
            request["query_id"] = queries[text.name]
        if entry == "triage":
            request |= {"token": token, "external_id": f"{warehouse_name}-{text.name}-{uuid.uuid4().hex[:6]}"}
        answer = executor.run(request)
        record.append((entry, text.name, answer.get("elapsed_s"), answer.get("peak_rss_mb")))
        changed, before = watch.problems_after(before)
        found = check_answer(entry, text, answer) + changed
        if found:
            problems[f"{entry} {text.family}/{text.name}"] += found
    slowest = max(record, key=lambda r: r[2] or 0)
    peak = max(r[3] or 0 for r in record)
    print(f"\n{warehouse_name}: {len(record)} calls, slowest {slowest}, peak RSS {peak:.0f} MB")
    for where, found in problems.items():
        print(f"  PROBLEM {where}: {found}")
    return dict(problems)


def prepare_entry_points(warehouse, dialect: str) -> tuple[list, str, dict]:
    """Queries for the preview, an API token and a policy that runs the verifier and detector."""
    entry_texts = one_refused_and_one_allowed_per_family(dialect)
    queries = {
        text.name: Query.objects.create(
            question=f"hostile {text.name}",
            sql=text.sql,
            dialect=dialect,
            warehouse=warehouse,
            source=QuerySource.GOLD,
            external_id=f"hostile-{warehouse.name}-{text.name}",
        ).pk
        for text in entry_texts
    }
    _, token = api_token_issue(client=f"hostile-{warehouse.name}", scopes=["ingest", "read"])
    policy_publish(changes={"run_verifier": True, "run_fanout_detector": True, "audit_share": 0.0}, judge_versions=[])
    return entry_texts, token, queries


def corpus_pass(tmp_path, warehouse, watch, dialect, extra_env):
    entry_texts, token, queries = prepare_entry_points(warehouse, dialect)
    executor = Executor(tmp_path, extra_env)
    try:
        return run_pass(executor, watch, warehouse.name, dialect, entry_texts=entry_texts, token=token, queries=queries)
    finally:
        executor.close()
        watch.close()


@pytest.fixture
def secrets_file(settings, tmp_path):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    return settings.WAREHOUSES_FILE


@pytest.fixture(scope="module")
def shop_database():
    """A fresh shop database with this run's own reader; both dropped afterwards."""
    import psycopg
    from psycopg import sql

    admin = require_postgres_server()
    suffix = f"{os.getpid()}_{uuid.uuid4().hex[:6]}"
    database, reader_role = f"hostile_shop_{suffix}", f"hostile_reader_{suffix}"
    owner_dsn = shop.create_postgres(admin, database)
    reader_dsn = create_reader_role(owner_dsn, role=reader_role, tables=shop.TABLES)
    yield {"owner": owner_dsn, "reader": reader_dsn, "reader_role": reader_role}
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
        conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(reader_role)))


def test_the_corpus_leaves_a_sqlite_warehouse_unchanged(tmp_path, secrets_file):
    path = tmp_path / "warehouse" / "shop.sqlite3"
    path.parent.mkdir()
    warehouse = warehouse_register(name="hostile-lite", dialect="sqlite", dsn=shop.create_sqlite(path))
    catalogue_refresh(warehouse=warehouse)
    problems = corpus_pass(tmp_path, warehouse, SqliteWatch(path), "sqlite", {})
    assert problems == {}


# The PostgreSQL warehouse passes run once, in the PostgreSQL run of the suite (the warehouse
# is PostgreSQL whatever the app database, so running them on the SQLite run too would only
# repeat the same minutes of CI).
@pytest.mark.postgres
def test_the_corpus_leaves_postgres_unchanged_as_the_read_only_reader(tmp_path, secrets_file, shop_database):
    warehouse = warehouse_register(name="hostile-reader", dialect="postgres", dsn=shop_database["reader"])
    assert catalogue_refresh(warehouse=warehouse).role_check["safe"]
    watch = PostgresWatch(shop_database["owner"], shop_database["reader_role"])
    problems = corpus_pass(tmp_path, warehouse, watch, "postgres", {})
    assert problems == {}


@pytest.mark.postgres
def test_a_superuser_is_refused_and_the_guard_alone_holds_when_it_is_allowed(
    tmp_path, secrets_file, shop_database, settings
):
    with pytest.raises(UnsafeWarehouseRole, match="superuser"):
        warehouse_register(name="hostile-owner", dialect="postgres", dsn=shop_database["owner"])
    settings.WAREHOUSE_ALLOW_UNSAFE_ROLE = True
    warehouse = warehouse_register(name="hostile-owner", dialect="postgres", dsn=shop_database["owner"])
    assert not catalogue_refresh(warehouse=warehouse).role_check["safe"]
    watch = PostgresWatch(shop_database["owner"], shop_database["reader_role"])
    problems = corpus_pass(tmp_path, warehouse, watch, "postgres", {"WAREHOUSE_ALLOW_UNSAFE_ROLE": "1"})
    assert problems == {}


def test_the_memory_bound_is_measured_on_the_process_that_ran_the_sql(tmp_path, secrets_file):
    """The harness's RSS reading must see memory the SQL uses: a 200 MB string shows up."""
    path = tmp_path / "shop.sqlite3"
    warehouse = warehouse_register(name="rss-lite", dialect="sqlite", dsn=shop.create_sqlite(path))
    catalogue_refresh(warehouse=warehouse)
    grow = "'xx'"
    for _ in range(8):
        grow = f"replace({grow}, 'x', 'xxxxxxxxxx')"
    limits = {"WAREHOUSE_SQLITE_MAX_LENGTH": str(400_000_000), "WAREHOUSE_SQLITE_HEAP_LIMIT": str(2**31)}
    # A large parent (pytest late in a full run) must not show up in the executor's reading:
    # Linux keeps ru_maxrss across fork and exec, so the harness reads the process's own VmHWM.
    ballast = b"x" * (400 * 2**20)
    executor = Executor(tmp_path, limits)
    del ballast
    try:
        small = executor.run({"entry": "run_sql", "warehouse": "rss-lite", "sql": "SELECT 1"})
        big = executor.run({"entry": "run_sql", "warehouse": "rss-lite", "sql": f"SELECT length({grow})"})
    finally:
        executor.close()
    assert small["peak_rss_mb"] < RSS_LIMIT_MB
    assert big["executed"], big
    assert big["peak_rss_mb"] >= small["peak_rss_mb"] + 150
