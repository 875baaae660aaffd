"""The warehouse list and catalogue pages: who may see them, and that no DSN ever shows."""

import pytest
from django.urls import reverse

from probes.models import Catalogue, Warehouse

SECRET_DSN_PART = "s3cret-pw"
USERS = ["labeller", "analyst", "ml_engineer", "admin", "outsider"]
ALLOWED = {"ml_engineer", "admin"}


@pytest.fixture
def secret_warehouse(db, monkeypatch):
    monkeypatch.setenv("WAREHOUSE_SALES_URL", f"postgresql://reader:{SECRET_DSN_PART}@db.internal:5432/sales")
    return Warehouse.objects.create(name="sales", dialect="postgres", description="Sales warehouse")


def pages(warehouse):
    return [reverse("probes:index"), reverse("probes:catalogue", args=[warehouse.name])]


def test_anonymous_visitors_are_sent_to_login(client, secret_warehouse):
    for url in pages(secret_warehouse):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("who", USERS)
def test_only_ml_engineers_and_admins_see_warehouses(client, role_users, secret_warehouse, who):
    client.force_login(role_users[who])
    for url in pages(secret_warehouse):
        assert client.get(url).status_code == (200 if who in ALLOWED else 403), (who, url)


def test_the_catalogue_page_shows_tables_keys_and_rules(client_for, shop_sqlite):
    html = client_for("ml_engineer").get(reverse("probes:catalogue", args=["shop"])).content.decode()
    assert "Catalogue v1" in html
    assert "order_items" in html and "~5 rows" in html
    assert "FK (customer_id) → customers (customer_id)" in html
    assert "<code>require_limit</code>: False" in html


def test_an_unknown_warehouse_is_404(client_for, db):
    assert client_for("admin").get(reverse("probes:catalogue", args=["nope"])).status_code == 404


def test_no_page_shows_the_dsn(client_for, role_users, secret_warehouse):
    client = client_for("admin")
    role_users["admin"].is_staff = True
    role_users["admin"].save()
    urls = [
        *pages(secret_warehouse),
        reverse("admin:probes_warehouse_changelist"),
        reverse("admin:probes_warehouse_change", args=[secret_warehouse.pk]),
        reverse("admin:probes_warehouse_add"),
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert SECRET_DSN_PART not in response.content.decode(), url
    change = client.get(reverse("admin:probes_warehouse_change", args=[secret_warehouse.pk])).content.decode()
    assert "environment (WAREHOUSE_SALES_URL)" in change


def test_admins_register_a_warehouse_without_a_dsn_field(client_for, role_users):
    role_users["admin"].is_staff = True
    role_users["admin"].save()
    client = client_for("admin")
    form = client.get(reverse("admin:probes_warehouse_add")).content.decode()
    assert 'name="dsn"' not in form
    response = client.post(
        reverse("admin:probes_warehouse_add"),
        {"name": "finance", "dialect": "sqlite", "description": "", "read_only_role": "", "verifier_rules": "{}"},
    )
    assert response.status_code == 302
    assert Warehouse.objects.get(name="finance").dialect == "sqlite"


def test_the_warehouses_page_says_why_a_warehouse_runs_nothing(client_for, secret_warehouse):

    Catalogue.objects.create(
        warehouse=secret_warehouse,
        version=1,
        snapshot={"dialect": "postgres", "tables": {}},
        role_check={
            "login_role": "etl",
            "findings": ["is CREATEDB", "is a member of pg_monitor"],
            "safe": False,
            "applicable": True,
            "checked_at": "2026-01-01T00:00:00+00:00",
        },
    )
    for url in pages(secret_warehouse):
        html = client_for("ml_engineer").get(url).content.decode()
        assert "refused: nothing from a model runs here" in html, url
        assert "is CREATEDB" in html and "is a member of pg_monitor" in html and "etl" in html


def test_a_read_only_login_role_is_shown_as_such(client_for, shop_sqlite):
    html = client_for("ml_engineer").get(reverse("probes:index")).content.decode()
    assert "no role (SQLite, opened read-only)" in html
    assert "refused" not in html


@pytest.mark.parametrize("allow", [True, False])
def test_allowing_an_unsafe_role_is_shown_in_red_on_every_page(client_for, db, settings, allow):
    settings.WAREHOUSE_ALLOW_UNSAFE_ROLE = allow
    for who, url in [
        ("ml_engineer", reverse("probes:index")),
        ("labeller", reverse("labelling:index")),
        ("analyst", reverse("triage:index")),
    ]:
        html = client_for(who).get(url).content.decode()
        assert ('class="unsafe-role-banner"' in html) is allow, (who, url)
        assert ("WAREHOUSE_ALLOW_UNSAFE_ROLE is set" in html) is allow
