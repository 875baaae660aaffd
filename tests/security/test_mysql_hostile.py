"""Issue 34: the hostile corpus's MySQL family against the demo on MariaDB, as reader and as root.

Every text goes through `run_readonly` (the guard, the grants check, the server's read-only
session, statement time and caps). Checked from outside the command, through root's own
connection: the demo tables' checksums, the file an INTO OUTFILE would write, the server's
global settings, users, and the sessions left running; and the memory of this process, which
ran the SQL. Root is refused at registration; with WAREHOUSE_ALLOW_UNSAFE_ROLE=1 the guard
alone holds.
"""

import resource
from pathlib import Path

import pytest

from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import TABLES
from probes.guard import guard_sql
from probes.models import Warehouse
from probes.mysql_demo import register_mysql_demo
from probes.role_check import UnsafeWarehouseRole
from probes.tests.hostile import mysql as family
from probes.tests.hostile.run_family import family_problems
from probes.tests.mariadb import admin_statement, mariadb_demo
from probes.warehouses import warehouse_register

__all__ = ["mariadb_demo"]
WATCHED_SETTINGS = (
    "general_log",
    "general_log_file",
    "max_statement_time",
    "max_connections",
    "read_only",
    "sql_mode",
    "secure_file_priv",
    "local_infile",
    "slow_query_log",
)
KINDS = {f for f, _, _ in family.REFUSED + family.CAPPED + family.BENIGN}


def test_the_family_has_every_attack_kind_and_the_guard_refuses_each_text():
    assert {"write", "multi_statement", "lexer_differential", "side_effect_function", "file_network"} <= KINDS
    assert {"sql_in_string", "role_setting_escape", "lock", "catalogue_read", "time_bomb", "huge_result"} <= KINDS
    allowed = [
        name for _, name, sql in family.REFUSED if guard_sql(sql.replace("{outfile}", "/tmp/x"), "mysql").allowed
    ]
    assert allowed == []
    refused = [name for _, name, sql in family.CAPPED + family.BENIGN if not guard_sql(sql, "mysql").allowed]
    assert refused == []


def watch(admin: str, outfile: Path) -> dict:
    """What a harmful text would change, read through root's own connection."""
    checksums = admin_statement(admin, "CHECKSUM TABLE " + ", ".join(f"`{t}`" for t in TABLES))
    names = ", ".join(f"'{name}'" for name in WATCHED_SETTINGS)
    settings = admin_statement(
        admin,
        f"SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES "
        f"WHERE LOWER(VARIABLE_NAME) IN ({names}) ORDER BY 1",
    )
    users = admin_statement(admin, "SELECT User, Host FROM mysql.user ORDER BY 1, 2")
    locks = admin_statement(admin, "SELECT IS_USED_LOCK('docket')")
    return {
        "checksums": [(t.split(".")[-1], c) for t, c in checksums],
        "settings": settings,
        "users": users,
        "locks": locks,
        "outfile": outfile.exists(),
    }


def running_sessions(admin: str, login: str) -> int:
    rows = admin_statement(
        admin,
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = %s AND COMMAND = 'Query' AND ID <> "
        "CONNECTION_ID()",
        [login],
    )
    return rows[0][0]


def corpus_pass(warehouse: Warehouse, admin: str, login: str, outfile: Path) -> list[str]:
    """Run every text; return what went wrong (empty when the walls held)."""
    before = watch(admin, outfile)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    problems = family_problems(warehouse, family, outfile)
    after = watch(admin, outfile)
    problems += [f"changed: {key}" for key in before if before[key] != after[key]]
    if running_sessions(admin, login):
        problems.append("a session of the login still runs a statement")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    if grown_mb > 256:
        problems.append(f"the process that ran the SQL grew by {grown_mb:.0f} MB")
    return problems


@pytest.mark.mariadb
@pytest.mark.django_db
def test_the_mysql_family_holds_as_the_reader(mariadb_demo, tmp_path, settings):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    warehouse = register_mysql_demo(mariadb_demo["reader"])
    catalogue_refresh(warehouse=warehouse)
    assert corpus_pass(warehouse, mariadb_demo["admin"], mariadb_demo["login"], tmp_path / "out.csv") == []


@pytest.mark.mariadb
@pytest.mark.django_db
def test_root_is_refused_and_with_unsafe_roles_allowed_the_guard_alone_holds(mariadb_demo, tmp_path, settings):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    with pytest.raises(UnsafeWarehouseRole, match="ALL PRIVILEGES"):
        warehouse_register(name="root-demo", dialect="mysql", dsn=mariadb_demo["admin"])
    settings.WAREHOUSE_ALLOW_UNSAFE_ROLE = True
    warehouse = warehouse_register(name="root-demo", dialect="mysql", dsn=mariadb_demo["admin"])
    catalogue_refresh(warehouse=warehouse)
    assert corpus_pass(warehouse, mariadb_demo["admin"], "root", tmp_path / "out.csv") == []
