"""The login role check: a PostgreSQL warehouse whose role can do more than read runs nothing."""

from urllib.parse import urlparse

import psycopg
import pytest
from psycopg import sql

from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import reader_dsn
from probes.execution import run_readonly
from probes.models import Warehouse
from probes.role_check import UnsafeWarehouseRole, postgres_role_check
from probes.selectors import catalogue_get_latest
from probes.tests.conftest import unique_name
from probes.tests.test_execution_caps import pg_run
from probes.verifier import verify
from probes.warehouses import dsn_env_var, warehouse_register


@pytest.fixture
def make_role(shop_postgres):
    """Create login roles with this run's unique prefix in the shop database; drop them after."""
    created = []

    def make(*statements: str) -> str:
        role = unique_name("probes_role")
        created.append(role)
        with psycopg.connect(shop_postgres.dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
            conn.execute(sql.SQL("GRANT SELECT ON orders TO {}").format(sql.Identifier(role)))
            for statement in statements:
                names = {"role": sql.Identifier(role), "other": sql.Identifier(role + "_g")}
                conn.execute(sql.SQL(statement).format(db=sql.Identifier(conn.info.dbname), **names))
        return reader_dsn(shop_postgres.dsn, role, "unused")

    yield make
    with psycopg.connect(shop_postgres.dsn, autocommit=True) as conn:
        for role in created:
            for name in (role, role + "_g"):
                exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name]).fetchone()
                if exists:
                    conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
                    conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


def test_the_reader_role_passes_the_check_and_is_stored_on_the_catalogue(shop_postgres):
    check = catalogue_get_latest(warehouse_id=shop_postgres.pk).role_check
    assert check["safe"] and check["findings"] == [] and check["applicable"]
    assert check["login_role"] == reader_role_of(shop_postgres)


def reader_role_of(warehouse) -> str:

    return urlparse(warehouse.reader_dsn).username


def test_a_superuser_dsn_is_refused_at_registration_naming_the_finding(shop_postgres):
    with pytest.raises(UnsafeWarehouseRole, match="superuser") as refused:
        warehouse_register(name="owner-pg", dialect="postgres", dsn=shop_postgres.dsn)
    assert "pg_read_server_files" in str(refused.value) and "CREATE on the database" in str(refused.value)
    assert not Warehouse.objects.filter(name="owner-pg").exists()


@pytest.mark.parametrize(
    ("grants", "finding"),
    [
        (["ALTER ROLE {role} CREATEDB"], "is CREATEDB"),
        (["ALTER ROLE {role} CREATEROLE"], "is CREATEROLE"),
        (["ALTER ROLE {role} BYPASSRLS"], "is BYPASSRLS"),
        (["ALTER ROLE {role} REPLICATION"], "is REPLICATION"),
        (["GRANT pg_signal_backend TO {role}"], "member of pg_signal_backend"),
        (
            ["CREATE ROLE {other}", "GRANT pg_read_server_files TO {other}", "GRANT {other} TO {role}"],
            "member of pg_read_server_files",
        ),
        (["CREATE ROLE {other}", "GRANT pg_monitor TO {other}", "GRANT {other} TO {role}"], "member of pg_monitor"),
        (["CREATE ROLE {other} CREATEDB", "GRANT {other} TO {role}"], "_g', which is CREATEDB"),
        (["GRANT CREATE ON SCHEMA public TO {role}"], "CREATE on schema public"),
        (["GRANT CREATE ON DATABASE {db} TO {role}"], "CREATE on the database"),
        (["CREATE SCHEMA {role} AUTHORIZATION {role}"], "owns objects in the warehouse"),
        (["GRANT pg_read_all_data TO {role}"], "member of pg_read_all_data"),
        (["CREATE ROLE {other}", "GRANT pg_read_all_stats TO {other}", "GRANT {other} TO {role}"], "pg_read_all_stats"),
        (["GRANT pg_stat_scan_tables TO {role}"], "member of pg_stat_scan_tables"),
        (["GRANT INSERT, DELETE ON shipments TO {role}"], "can write: INSERT, DELETE on public.shipments"),
        (["GRANT USAGE ON SEQUENCE shop_seq TO {role}"], "can take values of sequence public.shop_seq"),
        ([], "has no statement_timeout of its own"),
        ([], "has no temp_file_limit of its own"),
        (["ALTER ROLE {role} SET work_mem = '1GB'"], "has work_mem = 1GB, more than WAREHOUSE_PG_WORK_MEM_KB"),
        (["ALTER ROLE {role} SET temp_file_limit = -1"], "has temp_file_limit = -1, more than"),
        (["ALTER ROLE {role} SET statement_timeout = 0"], "has statement_timeout = 0, more than"),
        (["ALTER ROLE {role} IN DATABASE {db} SET jit = on"], "has jit = on; set jit = off"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_role_that_can_do_more_than_read_is_refused_naming_why(shop_postgres, make_role, grants, finding):
    dsn = make_role(*grants)
    with pytest.raises(UnsafeWarehouseRole, match=finding.replace("(", r"\(")):
        warehouse_register(name="wide-pg", dialect="postgres", dsn=dsn)


def test_what_public_may_do_counts_against_the_reader(shop_postgres):
    """A write granted to PUBLIC, or a SECURITY DEFINER function PUBLIC may run, is the reader's too."""
    reader = shop_postgres.reader_dsn
    assert postgres_role_check(reader).safe
    function = unique_name("probes_definer")
    with psycopg.connect(shop_postgres.dsn, autocommit=True) as conn:
        try:
            conn.execute("GRANT UPDATE ON orders TO PUBLIC")
            conn.execute(
                sql.SQL("CREATE FUNCTION {}() RETURNS int LANGUAGE sql SECURITY DEFINER AS 'SELECT 1'").format(
                    sql.Identifier(function)
                )
            )
            findings = postgres_role_check(reader).findings
        finally:
            conn.execute("REVOKE UPDATE ON orders FROM PUBLIC")
            conn.execute(sql.SQL("DROP FUNCTION IF EXISTS {}()").format(sql.Identifier(function)))
    assert "can write: UPDATE on public.orders" in findings
    assert f"can EXECUTE SECURITY DEFINER function public.{function}" in findings
    assert postgres_role_check(reader).safe


def test_the_reader_carries_the_cost_settings_and_sessions_get_them_too(shop_postgres):
    with psycopg.connect(shop_postgres.reader_dsn) as conn:  # a plain session: the role's own settings
        shown = {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in ("statement_timeout", "jit", "work_mem")}
        shown["temp_file_limit"] = conn.execute("SHOW temp_file_limit").fetchone()[0]
    assert shown == {"statement_timeout": "30s", "jit": "off", "work_mem": "4MB", "temp_file_limit": "256MB"}
    during = pg_run(shop_postgres, "SELECT current_setting('max_parallel_workers_per_gather'), current_setting('jit')")
    assert during.rows == [["0", "off"]]


def test_a_failing_check_at_refresh_is_stored_and_stops_every_model_run(shop_postgres, make_role, monkeypatch):

    monkeypatch.setenv(dsn_env_var("shop-pg"), make_role("ALTER ROLE {role} CREATEDB"))
    with pytest.raises(UnsafeWarehouseRole, match="CREATEDB"):
        catalogue_refresh(warehouse=shop_postgres)
    stored = catalogue_get_latest(warehouse_id=shop_postgres.pk).role_check
    assert not stored["safe"] and any("CREATEDB" in f for f in stored["findings"])
    refused = run_readonly(warehouse=shop_postgres, sql="SELECT count(*) FROM orders")
    assert not refused.allowed and not refused.executed and "CREATEDB" in refused.reason
    verdict = verify(
        "SELECT count(*) FROM orders", catalogue_get_latest(warehouse_id=shop_postgres.pk), warehouse=shop_postgres
    )
    assert verdict.outcome.kind == "fault" and "CREATEDB" in verdict.message  # the check could not run: no verdict


def test_allow_unsafe_role_lets_an_unsafe_role_run(shop_postgres, settings, monkeypatch):

    settings.WAREHOUSE_ALLOW_UNSAFE_ROLE = True
    monkeypatch.setenv(dsn_env_var("shop-pg"), shop_postgres.dsn)
    catalogue = catalogue_refresh(warehouse=shop_postgres)
    assert not catalogue.role_check["safe"] and catalogue.role_check["findings"][0].startswith("is superuser")
    assert run_readonly(warehouse=shop_postgres, sql="SELECT count(*) FROM orders").rows == [[4]]


def test_a_dsn_changed_after_the_check_runs_nothing_until_checked_again(shop_postgres, monkeypatch):
    monkeypatch.setenv(dsn_env_var("shop-pg"), shop_postgres.dsn)  # the superuser, never checked
    result = run_readonly(warehouse=shop_postgres, sql="SELECT count(*) FROM orders")
    assert not result.executed and "run refresh_catalogue" in result.reason


def test_there_is_no_set_role_to_undo_the_login_role_is_the_wall(shop_postgres):
    result = pg_run(shop_postgres, "SELECT set_config('role', 'none', true), current_user, session_user")
    role = reader_role_of(shop_postgres)
    assert result.rows[0][1:] == [role, role]
    denied = pg_run(shop_postgres, "SELECT count(*) FROM pg_authid")
    assert "permission denied" in denied.error
