"""The hostile corpus against real warehouses, through every entry point that runs SQL.

Three passes: SQLite, PostgreSQL as this run's read-only reader (the way Docket is meant to
run), and PostgreSQL as a superuser — whose registration is refused, so that pass runs
with WAREHOUSE_ALLOW_UNSAFE_ROLE=1 to show the guard alone also holds. Every corpus text
goes through `run_sql` in each pass; one refused and one allowed text per family also go
through the labelling preview, the verifier, the hypothesis judge's probe and the triage
pipeline (posted through the API).

The SQL runs in a separate process (`tests.security.executor`) so that its peak resident
memory is measured on the process that ran it, and on every process under it (a SQLite
query's own child); PostgreSQL's backends are sampled too. After each text a second
connection checks that nothing changed: table checksums and write counters, sequences, large
objects, relations, a victim session still alive and no other session left behind, files
in the server's data directory and /tmp, settings, locks, statistics reset times, the
reader's role; and what it cost: temporary bytes written, and whether an answer names an
object the reader was never granted (`probes.tests.shop.POSTGRES_CANARIES`, SQLite's schema
text). Each call must answer within its statements' timeouts + 2 s: a security bound (a text
that could hold a worker longer is a denial of service), not a speed benchmark. Benign
analytics texts of the same families must be allowed and must run.
"""

import os
import uuid
from collections import defaultdict

import psycopg
import pytest
from django.conf import settings
from psycopg import sql

from labelling.models import Query, QuerySource
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import create_reader_role
from probes.role_check import UnsafeWarehouseRole
from probes.tests import shop
from probes.tests.hostile.corpus import CORPUS, FAMILIES
from probes.warehouses import warehouse_register
from tests.security.executor_process import TIMEOUT_S, Executor
from tests.security.watches import PostgresWatch, SqliteWatch, leaked_names
from tests.support.services import require_postgres_server
from triage.policy import policy_publish
from triage.tokens import api_token_issue

# The bound past a call's statement timeouts. PostgreSQL checks for a cancel between rows and
# inside most functions, but not inside every one (translate, btrim, length over 1 GB): the
# guard bounds what such a call is given (issue 27), and a SQLite query's process is killed at
# its deadline, so nothing is left to run long after the timeout.
SLACK_S = 2.0
RSS_LIMIT_MB = 300
# A PostgreSQL backend's own memory: work_mem and hash_mem_multiplier bound sorts and hashes;
# what an aggregate builds from table data grows only as fast as rows arrive (~50-100 MB/s).
BACKEND_RSS_LIMIT_MB = 300
# Statements each entry point may run on the warehouse, each under its own timeout: the
# verifier's EXPLAIN and empty-result probe; the triage pipeline's verifier (two), fan-out
# probe and result preview; the labelling preview's first rows and its count.
STATEMENT_BUDGET_S = {
    "run_sql": TIMEOUT_S,
    "preview": 2 * TIMEOUT_S,
    "verify": 2 * TIMEOUT_S,
    "probe": TIMEOUT_S,
    "triage": 4 * TIMEOUT_S,
}
# How many statements each entry point may run on the warehouse (the same count as above).
STATEMENTS = {"run_sql": 1, "preview": 2, "verify": 2, "probe": 1, "triage": 4}
OTHER_ENTRY_POINTS = ("preview", "verify", "probe", "triage")

pytestmark = pytest.mark.django_db(transaction=True)


def texts_for(dialect: str) -> list:
    return [text for text in CORPUS if dialect in text.dialects]


def one_refused_and_one_allowed_per_family(dialect: str) -> list:
    """The first text the guard must refuse and the first it may allow, of every family."""
    chosen = {}
    for text in texts_for(dialect):
        chosen.setdefault((text.family, text.guard_must_refuse), text)
    return list(chosen.values())


@pytest.mark.any_app_database
def test_the_corpus_covers_every_family_with_at_least_150_texts():
    assert len(CORPUS) >= 400
    assert {text.family for text in CORPUS} == set(FAMILIES)
    assert len({text.name for text in CORPUS}) == len(CORPUS)
    for dialect in ("sqlite", "postgres"):
        families = {text.family for text in texts_for(dialect)}
        assert {text.family for text in one_refused_and_one_allowed_per_family(dialect)} == families


# --- the passes ---------------------------------------------------------------------------------


# What an answer must never show: the never-granted objects' marker, and SQLite's schema text.
LEAK_MARKERS = {"postgres": (shop.CANARY,), "sqlite": ("create table", "create index")}


def check_answer(entry: str, text, answer: dict, dialect: str) -> list[str]:
    """What is wrong with one answer, apart from the warehouse's state."""
    problems = []
    if "crash" in answer:
        return [f"crashed: {answer['crash']}"]
    bound = STATEMENT_BUDGET_S[entry] + SLACK_S
    if answer["elapsed_s"] > bound:
        problems.append(f"answered in {answer['elapsed_s']:.2f}s, past {bound:.1f}s")
    peak = max(answer["peak_rss_mb"], answer.get("tree_peak_mb", 0))
    if peak >= RSS_LIMIT_MB:
        problems.append(f"the executing process reached {peak:.0f} MB")
    if answer.get("backend_peak_mb", 0) >= BACKEND_RSS_LIMIT_MB:
        problems.append(f"the PostgreSQL backend reached {answer['backend_peak_mb']:.0f} MB")
    leaked = leaked_names(answer.get("shown", ""), text.sql, LEAK_MARKERS[dialect])
    if leaked:
        problems.append(f"the answer names what the reader was never granted: {leaked}")
    if text.must_run:
        problems += benign_problems(entry, answer)
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


def benign_problems(entry: str, answer: dict) -> list[str]:
    """A benign text must be allowed and must run where it is run for its rows."""
    if entry == "run_sql" and not (answer["allowed"] and answer["executed"] and not answer["error"]):
        return [f"benign SQL did not run: {answer['reason'] or answer['error']}"]
    if entry == "preview" and not answer["ok"]:
        return [f"benign SQL did not preview: {answer['message']}"]
    return []


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
        peak = max(answer.get("peak_rss_mb") or 0, answer.get("tree_peak_mb") or 0)
        record.append((entry, text.name, answer.get("elapsed_s"), peak, answer.get("backend_peak_mb") or 0))
        changed, before = watch.problems_after(before, STATEMENTS[entry])
        found = check_answer(entry, text, answer, dialect) + changed
        if found:
            problems[f"{entry} {text.family}/{text.name}"] += found
    report_pass(warehouse_name, record, problems)
    return dict(problems)


def report_pass(warehouse_name: str, record: list, problems: dict) -> None:
    """Print what the pass measured: calls, the slowest, peak memory, and each text that did harm."""
    slowest = max(record, key=lambda r: r[2] or 0)
    peak, backend = max(r[3] for r in record), max(r[4] for r in record)
    harmful = sorted({where.split(" ", 1)[1] for where in problems})
    print(
        f"\n{warehouse_name}: {len(record)} calls, slowest {slowest[:3]}, peak executing RSS {peak:.0f} MB, "
        f"peak backend {backend:.0f} MB, {len(harmful)} texts with a problem"
    )
    for where, found in problems.items():
        print(f"  PROBLEM {where}: {found}")


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


def corpus_pass(tmp_path, warehouse, watch, dialect, extra_env, database=None):
    entry_texts, token, queries = prepare_entry_points(warehouse, dialect)
    executor = Executor(tmp_path, extra_env, database)
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
    admin = require_postgres_server()
    suffix = f"{os.getpid()}_{uuid.uuid4().hex[:6]}"
    database, reader_role = f"hostile_shop_{suffix}", f"hostile_reader_{suffix}"
    tenant_role = f"tenant_{shop.CANARY}_{suffix}"  # another tenant's login: never to be seen
    owner_dsn = shop.create_postgres(admin, database)
    reader_dsn = create_reader_role(owner_dsn, role=reader_role, tables=shop.TABLES)
    shop.add_postgres_canaries(owner_dsn, reader_role, tenant_role)
    yield {"owner": owner_dsn, "reader": reader_dsn, "reader_role": reader_role, "database": database}
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
        for role in (reader_role, tenant_role):
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


@pytest.mark.any_app_database
def test_the_corpus_leaves_a_sqlite_warehouse_unchanged(tmp_path, secrets_file):
    path = tmp_path / "warehouse" / "shop.sqlite3"
    path.parent.mkdir()
    warehouse = warehouse_register(name="hostile-lite", dialect="sqlite", dsn=shop.create_sqlite(path))
    catalogue_refresh(warehouse=warehouse)
    problems = corpus_pass(tmp_path, warehouse, SqliteWatch(path), "sqlite", {})
    assert problems == {}


# The PostgreSQL warehouse is PostgreSQL whatever the app database, so each warehouse pass
# runs once in CI: the reader's in the PostgreSQL run of the suite (the way Docket is meant to
# run, end to end), the superuser's and the SQLite warehouse's in the SQLite run
# (`any_app_database`), which keeps the two runs about the same length.
@pytest.mark.postgres
def test_the_corpus_leaves_postgres_unchanged_as_the_read_only_reader(tmp_path, secrets_file, shop_database):
    warehouse = warehouse_register(name="hostile-reader", dialect="postgres", dsn=shop_database["reader"])
    assert catalogue_refresh(warehouse=warehouse).role_check["safe"]
    watch = PostgresWatch(shop_database["owner"], shop_database["reader_role"])
    problems = corpus_pass(tmp_path, warehouse, watch, "postgres", {}, shop_database["database"])
    assert problems == {}


@pytest.mark.any_app_database
def test_a_superuser_is_refused_and_the_guard_alone_holds_when_it_is_allowed(
    tmp_path, secrets_file, shop_database, settings
):
    with pytest.raises(UnsafeWarehouseRole, match="superuser"):
        warehouse_register(name="hostile-owner", dialect="postgres", dsn=shop_database["owner"])
    settings.WAREHOUSE_ALLOW_UNSAFE_ROLE = True
    warehouse = warehouse_register(name="hostile-owner", dialect="postgres", dsn=shop_database["owner"])
    assert not catalogue_refresh(warehouse=warehouse).role_check["safe"]
    watch = PostgresWatch(shop_database["owner"], shop_database["reader_role"])
    problems = corpus_pass(
        tmp_path, warehouse, watch, "postgres", {"WAREHOUSE_ALLOW_UNSAFE_ROLE": "1"}, shop_database["database"]
    )
    assert problems == {}


@pytest.mark.any_app_database
def test_the_memory_bound_is_measured_on_the_process_that_ran_the_sql(tmp_path, secrets_file):
    """The harness's RSS reading must see memory the SQL uses: a 200 MB string shows up."""
    path = tmp_path / "shop.sqlite3"
    warehouse = warehouse_register(name="rss-lite", dialect="sqlite", dsn=shop.create_sqlite(path))
    catalogue_refresh(warehouse=warehouse)
    grow = "'xx'"
    for _ in range(8):
        grow = f"replace({grow}, 'x', 'xxxxxxxxxx')"
    limits = {
        "WAREHOUSE_SQLITE_MAX_LENGTH": str(400_000_000),
        "WAREHOUSE_SQLITE_HEAP_LIMIT": str(2**31),
        "WAREHOUSE_SQLITE_PROCESS_MEMORY": str(2**31),
        "WAREHOUSE_MAX_SQL_WIDTH": str(10**9),
        # The 200 MB string takes a second on a quiet core and more on a loaded CI one: this test
        # is about what the reading sees, so the harness's 1 s deadline must not stop the SQL.
        "WAREHOUSE_STATEMENT_TIMEOUT_S": "30",
    }
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
    assert max(small["peak_rss_mb"], small["tree_peak_mb"]) < RSS_LIMIT_MB
    assert big["executed"], big
    assert big["tree_peak_mb"] >= max(small["peak_rss_mb"], small["tree_peak_mb"]) + 150
