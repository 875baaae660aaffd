"""A new admin sets Docket up in the browser, no terminal (issue 31 item 1).

The PostgreSQL journey registers a warehouse by URL with a least-privilege role made from
the statements the page shows, tests the connection, refreshes the catalogue (a task on a
real worker, with progress), issues a token with scope checkboxes, and posts a live query
from the page that shows the token once. It needs a PostgreSQL server for the warehouse and
is marked `postgres`, so CI runs it in the PostgreSQL pass (DOCKET_CI_SHARE=postgres).
"""

import json
import os
import stat
import uuid

import psycopg
import pytest
from psycopg import sql

from probes.models import Catalogue, Warehouse
from probes.tests import shop
from tests.browser.conftest import assert_no_sideways_scroll, log_in, screenshot
from tests.browser.test_accessibility import blocking_violations
from tests.support.fixtures import WorkerProcess, wait_for
from tests.support.services import require_postgres_server
from triage.models import ApiToken, IngestStatus, LiveQuery

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def admin_page(page, live_server, role_users):
    role_users["admin"].is_staff = True  # the token form is in Django's admin
    role_users["admin"].save(update_fields=["is_staff"])
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    log_in(page, live_server, "admin-user")
    return page


@pytest.fixture
def warehouses_file(settings, tmp_path):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    return settings.WAREHOUSES_FILE


@pytest.fixture
def shop_database():
    """A fresh shop database on the PostgreSQL server; (owner DSN, unique reader role name)."""
    admin = require_postgres_server()
    suffix = f"{os.getpid()}_{uuid.uuid4().hex[:6]}"
    database, role = f"setup_shop_{suffix}", f"setup_reader_{suffix}"
    owner_dsn = shop.create_postgres(admin, database)
    yield owner_dsn, database, role
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
        conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def run_statements_shown(page, owner_dsn: str, database: str, role: str, password: str) -> None:
    """Do what the page tells a database owner to do: run its statements (names and password filled in)."""
    text = page.inner_text("#role-sql-postgres")
    text = text.replace("docket_reader", role).replace("choose-a-password", password)
    text = text.replace("DATABASE warehouse ", f"DATABASE {database} ")
    with psycopg.connect(owner_dsn, autocommit=True) as conn:
        for statement in filter(None, (line.strip() for line in text.splitlines())):
            conn.execute(statement)


def reader_url(owner_dsn: str, role: str, password: str) -> str:
    host_and_db = owner_dsn.split("@", 1)[1]
    return f"postgresql://{role}:{password}@{host_and_db}"


@pytest.mark.postgres
@pytest.mark.worker
def test_a_new_admin_registers_a_postgres_warehouse_issues_a_token_and_posts_a_live_query(
    admin_page, live_server, warehouses_file, shop_database
):
    page = admin_page
    owner_dsn, database, role = shop_database
    password = "pw-" + uuid.uuid4().hex[:12]
    worker = WorkerProcess(extra_env={"WAREHOUSES_FILE": str(warehouses_file)}).start()
    try:
        page.goto(f"{live_server.url}/probes/")
        page.click("text=Register a warehouse")
        assert "CREATE ROLE docket_reader LOGIN" in page.inner_text("#role-sql-postgres")
        assert "ALTER ROLE docket_reader SET temp_file_limit" in page.inner_text("#role-sql-postgres")
        screenshot(page, "setup-warehouse-add-1280")
        assert_no_sideways_scroll(page)
        run_statements_shown(page, owner_dsn, database, role, password)

        url = reader_url(owner_dsn, role, password)
        page.fill("#id_name", "shop-pg")
        page.select_option("#id_dialect", "postgres")
        page.fill("#id_url", url)
        page.click("button:has-text('Register')")
        page.wait_for_url(f"{live_server.url}/probes/shop-pg/catalogue/")
        assert "Registered shop-pg" in page.inner_text(".messages")
        assert password not in page.content()

        # The URL went to the warehouses file, readable by its owner only, and nowhere in the database.
        assert json.loads(warehouses_file.read_text())["shop-pg"] == url
        assert stat.S_IMODE(warehouses_file.stat().st_mode) == 0o600
        warehouse = Warehouse.objects.get(name="shop-pg")
        assert password not in json.dumps(
            [warehouse.name, warehouse.description, warehouse.verifier_rules, warehouse.dialect]
        )
        assert f"ALTER ROLE {role} SET work_mem" in page.text_content("#role-sql-postgres")

        page.click("button:has-text('Test connection')")
        result = page.locator("#connection-test")
        result.locator("text=passed").wait_for()
        assert f"Connected as {role}" in result.inner_text()

        page.click("button:has-text('Refresh catalogue')")
        progress = page.locator("#catalogue-refresh")
        progress.locator(".badge.ok").wait_for(timeout=60_000)
        assert "catalogue v1: 4 tables" in progress.inner_text()
        assert Catalogue.objects.filter(warehouse=warehouse, role_check__safe=True).exists()
        assert blocking_violations(page, live_server.url) == []
        page.click("text=Show the new catalogue")
        page.locator("#table-orders").wait_for()
        screenshot(page, "setup-warehouse-catalogue-1280")

        page.goto(f"{live_server.url}/admin/triage/apitoken/add/")
        page.fill("#id_client", "first-client")
        page.check("input[name=scopes][value=ingest]")
        page.check("input[name=scopes][value=read]")
        page.click("input[name=_save]")
        token_text = page.inner_text("#api-token").strip()
        assert ApiToken.objects.get(client="first-client").scopes == ["ingest", "read"]
        curl = page.inner_text("#curl-line")
        assert f"Authorization: Bearer {token_text}" in curl and f"{live_server.url}/api/v1/queries" in curl
        page.click("button[data-copy='#api-token']")
        page.locator("text=Copied").first.wait_for()
        assert page.evaluate("navigator.clipboard.readText()") == token_text
        screenshot(page, "setup-token-issued-1280")
        assert_no_sideways_scroll(page)
        assert blocking_violations(page, live_server.url) == []

        page.select_option("#try-warehouse", "shop-pg")
        page.fill("#try-external-id", "browser-first")
        page.click("button:has-text('Post the query')")
        page.locator("#try-status.ok").wait_for()
        assert page.inner_text("#try-status").startswith("202")
        live = LiveQuery.objects.get(query__external_id="browser-first")
        assert live.query.warehouse_id == warehouse.pk
        wait_for(
            lambda: LiveQuery.objects.get(pk=live.pk).status in (IngestStatus.PASSED, IngestStatus.FLAGGED),
            timeout=90,
            what="the worker to judge the live query",
        )
    finally:
        worker.discard()


@pytest.mark.postgres
def test_a_role_that_can_do_more_than_read_is_refused_on_the_field_with_each_finding(
    admin_page, live_server, warehouses_file, shop_database
):
    owner_dsn, _, _ = shop_database  # the owner is a superuser: it may do everything
    page = admin_page
    page.goto(f"{live_server.url}/probes/add/")
    page.fill("#id_name", "too-strong")
    page.select_option("#id_dialect", "postgres")
    page.fill("#id_url", owner_dsn)
    page.click("button:has-text('Register')")
    summary = page.locator("#error-summary")
    assert "Connection URL" in summary.inner_text() and "superuser" in summary.inner_text()
    assert "superuser" in page.inner_text("#id_url_error, .errorlist")
    assert not Warehouse.objects.filter(name="too-strong").exists()
    assert not warehouses_file.exists() or "too-strong" not in warehouses_file.read_text()


def test_a_sqlite_warehouse_is_registered_by_url_and_its_connection_tested(
    admin_page, live_server, warehouses_file, tmp_path
):
    page = admin_page
    url = shop.create_sqlite(tmp_path / "shop.sqlite3")
    page.goto(f"{live_server.url}/probes/add/")
    assert "SQLite needs no role" in page.inner_text("#role-statements-sqlite")
    page.fill("#id_name", "shop-file")
    page.select_option("#id_dialect", "sqlite")
    page.fill("#id_url", "postgresql://nobody@127.0.0.1/x")  # the wrong kind of URL first
    page.click("button:has-text('Register')")
    assert "needs a sqlite:// DSN" in page.inner_text("#error-summary")
    assert blocking_violations(page, live_server.url) == []
    page.fill("#id_url", url)
    page.click("button:has-text('Register')")
    page.wait_for_url(f"{live_server.url}/probes/shop-file/catalogue/")
    assert "Refresh catalogue" in page.inner_text("main")
    assert "manage.py" not in page.inner_text("main")
    page.click("button:has-text('Test connection')")
    page.locator("#connection-test .badge.ok").wait_for()
    assert "opened read-only; 4 tables" in page.inner_text("#connection-test")
    assert blocking_violations(page, live_server.url) == []
    assert stat.S_IMODE(warehouses_file.stat().st_mode) == 0o600


def test_an_unexpected_error_shows_the_styled_page_with_the_navigation(admin_page, live_server, settings):
    settings.ROOT_URLCONF = "tests.browser.boom_urls"
    page = admin_page
    response = page.goto(f"{live_server.url}/boom/")
    assert response.status == 500
    assert "Something went wrong on Docket's side" in page.inner_text("h1")
    assert page.locator("nav[aria-label=Main] >> text=Warehouses").count() == 1
    screenshot(page, "error-500-1280")
