"""The verifier's three outcomes on real warehouses: a fault of the check is never a failure of the SQL.

Each fault is made for real — the SQLite file removed or not a database, a PostgreSQL DSN
pointing at a closed port, the reader role's SELECT revoked, a lock the EXPLAIN waits on past
its timeout — and `verify_sql --format json` says `"outcome": "fault"` with its cause.
"""

import io
import json
import socket
from urllib.parse import urlparse, urlunparse

import psycopg
import pytest
from django.core.management import call_command
from psycopg import sql

from probes.demo_warehouse import create_reader_role
from probes.outcome import OutcomeKind
from probes.selectors import catalogue_get_latest
from probes.tests import shop
from probes.tests.conftest import drop_role, register, unique_name
from probes.verifier import verify
from tests.support.services import require_postgres_server

CONTRACT_KEYS = {
    "passed",
    "outcome",
    "failure_class",
    "cause",
    "message",
    "findings",
    "verifier_version",
    "catalogue_version",
    "rules",
}
CLEAN = "SELECT o.order_id, o.total FROM orders o WHERE o.status = 'paid' LIMIT 5"


def check(warehouse, text, **rules):
    return verify(text, catalogue_get_latest(warehouse_id=warehouse.pk), warehouse=warehouse, rules=rules or None)


def verify_sql_json(warehouse, text, tmp_path) -> dict:
    path = tmp_path / "query.sql"
    path.write_text(text)
    out = io.StringIO()
    call_command("verify_sql", "--warehouse", warehouse.name, "--sql-file", str(path), "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def with_port(dsn: str, port: int) -> str:
    parts = urlparse(dsn)
    credentials = parts.netloc.rpartition("@")[0]
    return urlunparse(parts._replace(netloc=f"{credentials}@127.0.0.1:{port}"))


# --- the JSON contract ---------------------------------------------------------------------------


def test_verify_sql_json_says_passed_failed_or_fault_and_keeps_every_key(shop_sqlite, tmp_path):
    passed = verify_sql_json(shop_sqlite, CLEAN, tmp_path)
    failed = verify_sql_json(shop_sqlite, "SELECT * FROM orders, customers LIMIT 3", tmp_path)
    shop_sqlite.path.unlink()
    fault = verify_sql_json(shop_sqlite, CLEAN, tmp_path)
    for data in (passed, failed, fault):
        assert set(data) == CONTRACT_KEYS
    assert (passed["outcome"], passed["passed"], passed["failure_class"], passed["cause"]) == (
        "passed",
        True,
        None,
        None,
    )
    assert (failed["outcome"], failed["passed"], failed["failure_class"]) == ("failed", False, "timeout")
    assert (fault["outcome"], fault["passed"], fault["failure_class"], fault["cause"]) == (
        "fault",
        False,
        None,
        "transport",
    )
    assert fault["findings"][0]["outcome"] == "fault"
    assert (
        fault["message"]
        == "the database could not check the query: transport: the sqlite warehouse file does not exist"
    )


# --- the cost rules are failures of the SQL ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rules"),
    [
        ("SELECT * FROM orders, customers LIMIT 3", {}),
        ("SELECT * FROM orders", {"require_limit": True}),
        ("SELECT status, COUNT(*) FROM order_items JOIN orders USING (order_id) GROUP BY status", {"max_scan_rows": 3}),
    ],
)
def test_the_cost_rules_are_failed_with_class_timeout(shop_sqlite, text, rules):
    outcome = check(shop_sqlite, text, **rules).outcome
    assert (outcome.kind, outcome.failure_class) == (OutcomeKind.FAILED, "timeout")


def test_a_catalogue_failure_stays_a_failure_while_the_warehouse_is_stopped(shop_sqlite):
    shop_sqlite.path.unlink()
    result = check(shop_sqlite, "SELECT o.totl FROM orders o LIMIT 1")
    assert (result.outcome.kind, result.failure_class) == (OutcomeKind.FAILED, "unknown_object")
    assert [f["outcome"] for f in result.findings] == ["failed", "fault"]


# --- SQLite faults ---------------------------------------------------------------------------------


def test_a_sqlite_file_that_is_not_a_database_is_a_fault(shop_sqlite):
    shop_sqlite.path.write_bytes(b"this is not a database file" * 200)
    outcome = check(shop_sqlite, CLEAN).outcome
    assert (outcome.kind, outcome.cause) == (OutcomeKind.FAULT, "database_error")


def test_a_sqlite_server_limit_is_a_fault(shop_sqlite, settings):
    settings.WAREHOUSE_SQLITE_MAX_LENGTH = 200
    outcome = check(shop_sqlite, "SELECT order_id FROM orders WHERE status = '" + "x" * 300 + "' LIMIT 1").outcome
    assert (outcome.kind, outcome.cause) == (OutcomeKind.FAULT, "limit")


@pytest.mark.parametrize(
    ("setting", "value", "text"),
    [
        ("WAREHOUSE_MAX_SQL_BYTES", 40, CLEAN),
        (
            "WAREHOUSE_MAX_SQL_JOINS",
            1,
            "SELECT 1 FROM orders o JOIN customers c USING (customer_id) JOIN order_items USING (order_id)",
        ),
        ("WAREHOUSE_MAX_SQL_DEPTH", 5, "SELECT ((((((1)))))) FROM orders LIMIT 1"),
    ],
)
def test_docket_refusing_a_text_on_its_own_size_limits_is_a_fault(shop_sqlite, settings, setting, value, text):
    setattr(settings, setting, value)
    outcome = check(shop_sqlite, text).outcome
    assert (outcome.kind, outcome.cause) == (OutcomeKind.FAULT, "size_limit")
    assert setting in outcome.message


def test_a_sqlite_ambiguous_column_is_a_failure_of_the_sql(shop_sqlite):
    result = check(
        shop_sqlite,
        "SELECT order_id FROM orders JOIN order_items USING (order_id) "
        "JOIN shipments s ON s.order_id = orders.order_id LIMIT 1",
        unknown_object=False,
    )
    assert (result.outcome.kind, result.failure_class) == (OutcomeKind.FAILED, "dialect")


# --- PostgreSQL faults and failures ---------------------------------------------------------------


def test_a_postgres_warehouse_on_a_closed_port_is_a_fault(shop_postgres, monkeypatch, tmp_path):
    monkeypatch.setenv("WAREHOUSE_SHOP_PG_URL", with_port(shop_postgres.reader_dsn, closed_port()))
    data = verify_sql_json(shop_postgres, CLEAN, tmp_path)
    assert (data["outcome"], data["cause"], data["failure_class"]) == ("fault", "transport", None)


@pytest.fixture
def stripped_reader(db, shop_postgres_dsns, monkeypatch):
    """A warehouse whose own reader role is registered, introspected, then has SELECT revoked."""
    admin = require_postgres_server()
    owner_dsn = shop_postgres_dsns[0]
    role = unique_name("probes_stripped")
    reader = create_reader_role(owner_dsn, role=role, tables=shop.TABLES)
    warehouse = register(monkeypatch, "shop-stripped", "postgres", reader)
    with psycopg.connect(owner_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("REVOKE SELECT ON ALL TABLES IN SCHEMA public FROM {}").format(sql.Identifier(role)))
    yield warehouse
    with psycopg.connect(owner_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
    drop_role(admin, role)


def test_a_reader_whose_select_is_revoked_is_a_fault(stripped_reader, tmp_path):
    assert catalogue_get_latest(warehouse_id=stripped_reader.pk) is not None
    data = verify_sql_json(stripped_reader, CLEAN, tmp_path)
    assert (data["outcome"], data["cause"], data["failure_class"]) == ("fault", "privilege", None)
    assert "permission denied" in data["message"]


def test_an_explain_that_runs_out_of_time_is_a_fault(shop_postgres, settings):
    settings.WAREHOUSE_STATEMENT_TIMEOUT_S = 0.5
    with psycopg.connect(shop_postgres.dsn) as holder:
        holder.execute("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE")  # the EXPLAIN waits on it
        outcome = check(shop_postgres, CLEAN).outcome
        holder.rollback()
    assert (outcome.kind, outcome.cause) == (OutcomeKind.FAULT, "timeout")


def test_a_sqlstate_not_known_to_mean_wrong_sql_is_a_fault(shop_postgres):
    # The planner folds the constant and overflows: 22003, a data error, not a known SQL mistake.
    outcome = check(shop_postgres, "SELECT order_id FROM orders WHERE order_id > 2147483647::int + 1 LIMIT 1").outcome
    assert (outcome.kind, outcome.cause) == (OutcomeKind.FAULT, "database_error")


@pytest.mark.parametrize(
    "text",
    [
        "SELECT status, total FROM orders GROUP BY status",  # 42803 grouping error
        "SELECT order_id FROM orders o JOIN order_items i ON i.order_id = o.order_id LIMIT 1",  # 42702 ambiguous
        "SELECT order_id FROM orders WHERE status > 1 LIMIT 1",  # 42883 no operator text > integer
        "SELECT CASE WHEN total > 1 THEN 1 ELSE 'x'::text END FROM orders LIMIT 1",  # 42804 datatype mismatch
    ],
)
def test_sqlstates_that_mean_the_sql_is_wrong_are_failures(shop_postgres, text):
    result = check(shop_postgres, text, unknown_object=False)
    assert result.outcome.kind is OutcomeKind.FAILED, result.as_dict()
    assert result.failure_class == "dialect"
    assert result.message.startswith("the database refused the query:")


def test_verify_sql_text_says_the_check_could_not_decide(shop_sqlite, tmp_path):
    path = tmp_path / "query.sql"
    path.write_text(CLEAN)
    shop_sqlite.path.unlink()
    out = io.StringIO()
    call_command("verify_sql", "--warehouse", "shop", "--sql-file", str(path), stdout=out)
    assert out.getvalue().startswith("could not check (transport): the database could not check the query:")
