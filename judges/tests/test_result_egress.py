"""Egress by consent: a judge's result preview sends rows only from a warehouse an admin allowed.

Rows of a customer's warehouse in a prompt leave for the vendor. `Warehouse.allow_result_egress`
(off by default, set by admins only) is that consent; a version with `include_result_preview`
on any other warehouse is judged without rows, and its trace and page say why.
"""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from judges.backends import get_backend
from judges.models import Verdict
from judges.services import judge_live_query
from judges.tests.factories import simulated_version
from labelling.models import Query
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import build_demo_warehouse, register_demo_warehouse
from probes.models import Warehouse

pytestmark = pytest.mark.django_db

WITHHELD = "warehouse demo does not allow result rows to be sent to vendors"


@pytest.fixture
def warehouse(settings, tmp_path):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    path = tmp_path / "demo.sqlite3"
    build_demo_warehouse(str(path))
    demo = register_demo_warehouse(str(path))
    catalogue_refresh(warehouse=demo)
    return demo


@pytest.fixture
def previewing_version(vendor_simulator):
    version = simulated_version(name="previewer", backend="openai_compatible")
    version.include_result_preview = True
    version.save()
    return version


def orders_by_status(warehouse) -> Query:
    return Query.objects.create(
        question="Orders by status?",
        sql="SELECT status, COUNT(*) AS n FROM orders GROUP BY status ORDER BY status",
        warehouse=warehouse,
        external_id=f"egress-{Query.objects.count()}",
    )


def test_a_new_warehouse_does_not_allow_result_rows_to_leave(warehouse):
    assert Warehouse(name="fresh", dialect="sqlite").allow_result_egress is False
    assert warehouse.allow_result_egress is False


def test_without_consent_the_query_is_judged_without_rows_and_the_trace_says_why(warehouse, previewing_version):
    result = get_backend(previewing_version).judge(orders_by_status(warehouse))
    sent = result.request_tail["messages"][0]["content"]
    assert "<result_preview>" not in sent and "cancelled |" not in sent
    assert result.decision in ("accept", "reject")
    assert result.context["result_preview"] == {"included": False, "withheld": WITHHELD}


def test_with_consent_the_rows_are_sent_and_the_trace_says_on_whose_consent(warehouse, previewing_version):
    warehouse.allow_result_egress = True
    warehouse.save()
    result = get_backend(previewing_version).judge(orders_by_status(Warehouse.objects.get(pk=warehouse.pk)))
    assert "<result_preview>\n4 rows in total" in result.request_tail["messages"][0]["content"]
    assert result.context["result_preview"]["consent"] == "warehouse demo allows result rows to be sent to vendors"


def test_the_verdict_page_says_the_preview_was_withheld(client_for, warehouse, previewing_version):
    verdict = judge_live_query(judge_version=previewing_version, query=orders_by_status(warehouse))
    assert Verdict.objects.get(pk=verdict.pk).context["result_preview"]["withheld"] == WITHHELD
    page = client_for("analyst").get(reverse("judges:verdict_detail", args=[verdict.pk])).content.decode()
    assert f"withheld: {WITHHELD}" in page


def test_the_judge_page_says_previews_go_only_to_consenting_warehouses(client_for, warehouse, previewing_version):
    url = reverse("judges:judge_detail", args=[previewing_version.judge.pk])
    page = client_for("ml_engineer").get(url).content.decode()
    assert "only for queries on warehouses that allow result rows to be sent to vendors" in page
    assert "none does yet" in page
    warehouse.allow_result_egress = True
    warehouse.save()
    assert "(demo)" in client_for("ml_engineer").get(url).content.decode()


def change_warehouse_as(client, user, warehouse, *, allow: bool):
    client.force_login(user)
    form = {"name": warehouse.name, "dialect": warehouse.dialect, "description": "", "verifier_rules": "{}"}
    if allow:
        form["allow_result_egress"] = "on"
    return client.post(reverse("admin:probes_warehouse_change", args=[warehouse.pk]), form)


def test_only_an_admin_can_allow_result_rows_to_leave(client, role_users, warehouse):
    engineer = role_users["ml_engineer"]
    engineer.is_staff = True  # even a staff member allowed to edit warehouses in the admin
    engineer.save()
    engineer.user_permissions.add(*Permission.objects.filter(codename__in=["change_warehouse", "view_warehouse"]))
    assert change_warehouse_as(client, engineer, warehouse, allow=True).status_code == 302
    warehouse.refresh_from_db()
    assert warehouse.allow_result_egress is False

    admin = role_users["admin"]
    admin.is_staff = True
    admin.save()
    assert change_warehouse_as(client, admin, warehouse, allow=True).status_code == 302
    warehouse.refresh_from_db()
    assert warehouse.allow_result_egress is True
