"""Issue 34: MySQL / MariaDB warehouses behind the same two walls as PostgreSQL.

On the machine's MariaDB: the demo built by `load_demo_warehouse --dsn mysql://root@...` and
read by its `docket_reader` login; registration of root or of a login with FILE or a write
privilege refused naming it; execution read-only under the statement timeout, the caps and
KILL QUERY; the catalogue, the verifier's EXPLAIN FORMAT=JSON and the fan-out probe.
"""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from probes.catalogue import catalogue_refresh
from probes.execution import execute_on_dsn, run_readonly
from probes.fanout import fanout_probe
from probes.models import Warehouse
from probes.mysql_demo import register_mysql_demo
from probes.mysql_grants import grant_findings, mysql_role_check
from probes.mysql_plan import mysql_cross_join
from probes.outcome import OutcomeKind, execution_outcome
from probes.role_check import UnsafeWarehouseRole
from probes.tests.mariadb import admin_statement, mariadb_demo
from probes.verifier import verify
from probes.warehouses import warehouse_dsn, warehouse_register

pytestmark = [pytest.mark.mariadb, pytest.mark.django_db]
__all__ = ["mariadb_demo"]


@pytest.fixture
def demo(mariadb_demo):
    """The demo registered as its reader (the module built it once), with a catalogue."""
    warehouse = register_mysql_demo(mariadb_demo["reader"])
    catalogue_refresh(warehouse=warehouse)
    return warehouse


def test_load_demo_warehouse_builds_the_demo_and_registers_a_reader_that_can_only_select(mariadb_demo):
    out = io.StringIO()
    call_command(
        "load_demo_warehouse", "--dsn", mariadb_demo["admin"], "--reader-role", mariadb_demo["login"], stdout=out
    )
    assert "orders 3000" in out.getvalue()
    assert f"login {mariadb_demo['login']} may SELECT the demo tables and nothing else" in out.getvalue()
    demo = Warehouse.objects.get(name="demo")
    assert demo.dialect == "mysql"
    mariadb_demo["reader"] = warehouse_dsn(demo)  # the command gave the reader a new password
    catalogue_refresh(warehouse=demo)
    check = demo.catalogues.get().role_check
    assert check["applicable"] and check["safe"], check
    assert check["login_role"].startswith(mariadb_demo["login"] + "@")
    grants = admin_statement(mariadb_demo["admin"], f"SHOW GRANTS FOR '{mariadb_demo['login']}'@'%'")
    granted = " ".join(line for (line,) in grants)
    assert "GRANT SELECT ON" in granted and "INSERT" not in granted and "*.* TO" in granted  # USAGE on *.*


def test_root_is_refused_at_registration_naming_its_privileges(mariadb_demo):
    with pytest.raises(UnsafeWarehouseRole) as refused:
        warehouse_register(name="as-root", dialect="mysql", dsn=mariadb_demo["admin"])
    assert "ALL PRIVILEGES on *.*" in str(refused.value) and "GRANT OPTION" in str(refused.value)
    assert not Warehouse.objects.filter(name="as-root").exists()


@pytest.mark.parametrize(
    ("grant", "named"),
    [
        ("GRANT FILE ON *.* TO {user}", "FILE"),
        ("GRANT SELECT, INSERT ON `{db}`.`regions` TO {user}", "INSERT"),
        ("GRANT UPDATE (region_name) ON `{db}`.`regions` TO {user}", "UPDATE"),
        ("GRANT SELECT ON `{db}`.* TO {user} WITH GRANT OPTION", "GRANT OPTION"),
        ("GRANT SELECT ON *.* TO {user}", "global privileges"),
        ("GRANT SELECT ON `mysql`.* TO {user}", "mysql schema"),
        ("GRANT PROCESS ON *.* TO {user}", "PROCESS"),
        ("GRANT CREATE TEMPORARY TABLES ON `{db}`.* TO {user}", "CREATE TEMPORARY TABLES"),
        ("GRANT EXECUTE ON `{db}`.* TO {user}", "EXECUTE"),
    ],
)
def test_a_login_with_more_than_select_is_refused_naming_the_privilege(mariadb_demo, grant, named):
    login = "docket_wide_" + mariadb_demo["login"].rsplit("_", 1)[-1]
    user = f"'{login}'@'%'"
    admin = mariadb_demo["admin"]
    admin_statement(admin, f"DROP USER IF EXISTS {user}")
    admin_statement(admin, f"CREATE USER {user} IDENTIFIED BY 'pw-{login}'")
    try:
        admin_statement(admin, f"GRANT SELECT ON `{mariadb_demo['database']}`.`orders` TO {user}")
        admin_statement(admin, grant.format(user=user, db=mariadb_demo["database"]))
        dsn = f"mysql://{login}:pw-{login}@127.0.0.1:3306/{mariadb_demo['database']}"
        with pytest.raises(UnsafeWarehouseRole) as refused:
            warehouse_register(name="wide", dialect="mysql", dsn=dsn)
        assert named in str(refused.value)
    finally:
        admin_statement(admin, f"DROP USER IF EXISTS {user}")


def test_a_role_granted_to_the_login_is_checked_too():
    findings, roles = grant_findings("GRANT `analyst`,`loader` TO `docket_reader`@`%`")
    assert findings == [] and roles == ["analyst", "loader"]
    assert grant_findings("GRANT SELECT, SHOW VIEW ON `shop`.* TO `r`@`%`") == ([], [])
    assert grant_findings("GRANT USAGE ON *.* TO `r`@`%`") == ([], [])


def test_the_catalogue_has_keys_foreign_keys_estimates_comments_and_samples(demo):
    snapshot = demo.catalogues.get().snapshot
    assert snapshot["dialect"] == "mysql"
    assert set(snapshot["tables"]) >= {"orders", "customers", "payments", "order_items", "daily_sales"}
    orders = snapshot["tables"]["orders"]
    assert orders["primary_key"] == ["order_id"] and orders["row_estimate"] > 1000
    assert {"columns": ["customer_id"], "ref_table": "customers", "ref_columns": ["customer_id"]} in orders[
        "foreign_keys"
    ]
    assert ["email"] in snapshot["tables"]["customers"]["unique"]
    assert [c["nullable"] for c in orders["columns"] if c["name"] == "shipped_date"] == [True]
    assert snapshot["comments"]["orders"][""].startswith("One row per order")
    assert snapshot["samples"]["orders"]["status"] == ["cancelled", "completed", "pending", "refunded"]


def test_run_readonly_answers_and_caps_rows(demo):
    result = run_readonly(warehouse=demo, sql="SELECT status, COUNT(*) AS n FROM orders GROUP BY status")
    assert result.executed and sorted(row[0] for row in result.rows) == [
        "cancelled",
        "completed",
        "pending",
        "refunded",
    ]
    assert sum(row[1] for row in result.rows) == 3000
    capped = run_readonly(warehouse=demo, sql="SELECT * FROM order_items", row_cap=7)
    assert capped.executed and len(capped.rows) == 7 and capped.truncated_by == "row_cap"


def test_a_query_past_its_time_is_killed_and_gone(demo):
    result = run_readonly(
        warehouse=demo, sql="SELECT COUNT(*) FROM order_items a JOIN order_items b JOIN order_items c", timeout_s=1
    )
    assert result.timed_out and result.error_code == "timeout" and result.backend_gone is True
    assert execution_outcome(result).kind is OutcomeKind.FAULT


@pytest.mark.parametrize("as_root", [False, True])
def test_without_the_guard_the_server_still_refuses_to_write(mariadb_demo, as_root):
    dsn = mariadb_demo["admin"] if as_root else mariadb_demo["reader"]
    before = admin_statement(mariadb_demo["admin"], "CHECKSUM TABLE regions")
    result = execute_on_dsn(dialect="mysql", dsn=dsn, sql="DELETE FROM regions", row_cap=1, timeout_s=5)
    assert not result.executed and result.error_code == "refused_by_database"
    assert ("READ ONLY" in result.error) if as_root else ("DELETE command denied" in result.error)
    assert admin_statement(mariadb_demo["admin"], "CHECKSUM TABLE regions") == before


def test_the_verifier_finds_unknown_names_and_reads_the_plan(demo):
    catalogue = demo.catalogues.get()
    wrong = verify("SELECT o.order_id, o.shipped_at FROM orders o LIMIT 5", catalogue, warehouse=demo)
    assert wrong.outcome.kind is OutcomeKind.FAILED and wrong.outcome.failure_class == "unknown_object"
    right = verify(
        "SELECT c.customer_name, SUM(o.order_total) FROM orders o JOIN customers c ON c.customer_id = o.customer_id "
        "WHERE o.status = 'completed' GROUP BY c.customer_name ORDER BY 2 DESC LIMIT 5",
        catalogue,
        warehouse=demo,
    )
    assert right.outcome.kind is OutcomeKind.PASSED, right.as_dict()
    # A name the catalogue has but the server does not know any more: the EXPLAIN says so.
    snapshot = catalogue.snapshot
    snapshot["tables"]["orders"]["columns"].append({"name": "gone_column", "type": "int", "nullable": True})
    stale = verify("SELECT gone_column FROM orders LIMIT 5", snapshot, warehouse=demo)
    assert stale.outcome.failure_class == "unknown_object" and "(1054)" in stale.message


def test_a_plan_with_a_block_nested_loop_and_no_condition_is_a_cross_join(demo):
    dsn = warehouse_dsn(demo)
    result = execute_on_dsn(
        dialect="mysql",
        dsn=dsn,
        sql="EXPLAIN FORMAT=JSON SELECT o.order_id, c.customer_name FROM orders o, customers c LIMIT 5",
        row_cap=1,
        timeout_s=5,
        cap_cells=False,
    )
    found = mysql_cross_join(json.loads(result.rows[0][0]))
    assert found and "cross join between" in found


def test_the_fanout_probe_counts_on_mysql(demo):
    run = fanout_probe(
        sql="SELECT o.order_id, SUM(o.order_total) FROM orders o JOIN payments p ON p.order_id = o.order_id "
        "GROUP BY o.order_id",
        warehouse=demo,
    )
    assert run.outcome == "confirmed", run.message
    assert run.figures["total_rows"] > run.figures["distinct_keys"]


def test_load_demo_warehouse_refuses_a_reader_name_someone_else_uses(mariadb_demo):
    login = "docket_busy_" + mariadb_demo["login"].rsplit("_", 1)[-1]
    admin_statement(mariadb_demo["admin"], f"CREATE USER IF NOT EXISTS '{login}'@'%' IDENTIFIED BY 'x'")
    try:
        admin_statement(mariadb_demo["admin"], f"GRANT FILE ON *.* TO '{login}'@'%'")
        with pytest.raises(CommandError, match="can do more than read"):
            call_command(
                "load_demo_warehouse", "--dsn", mariadb_demo["admin"], "--reader-role", login, stdout=io.StringIO()
            )
    finally:
        admin_statement(mariadb_demo["admin"], f"DROP USER IF EXISTS '{login}'@'%'")


def test_mysql_role_check_of_the_reader_is_safe(mariadb_demo):
    assert mysql_role_check(mariadb_demo["reader"]).safe
