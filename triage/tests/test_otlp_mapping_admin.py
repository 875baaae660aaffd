"""An admin sets a client's OTLP mapping: validated, and read by the client's next export."""

import pytest
from django.urls import reverse

from triage.models import OtlpExportCounts, OtlpMapping
from triage.otlp_ingest import otlp_mapping_get
from triage.tests import factories

pytestmark = pytest.mark.django_db
ADD = "admin:triage_otlpmapping_add"


@pytest.fixture
def staff_admin(client, role_users):
    role_users["admin"].is_staff = True
    role_users["admin"].save(update_fields=["is_staff"])
    client.force_login(role_users["admin"])
    return client


def form(**changes):
    values = {
        "client": "acme",
        "sql_attributes": '["app.sql"]',
        "dialect_attributes": '["db.system.name"]',
        "warehouse_attributes": '["db.namespace"]',
        "warehouse_aliases": "{}",
        "default_warehouse": "",
        "question_attributes": '["app.question"]',
        "question_from_genai": "on",
        "attempt_prefix": "docket.attempt.",
        "parent_wait_seconds": "300",
    }
    return values | changes


def test_a_saved_mapping_applies_to_the_clients_next_export_at_once(staff_admin):
    assert otlp_mapping_get(client="acme").sql_attributes == ["db.query.text", "db.statement"]  # cached defaults
    response = staff_admin.post(reverse(ADD), form())
    assert response.status_code == 302
    assert otlp_mapping_get(client="acme").sql_attributes == ["app.sql"]


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"sql_attributes": "[]"}, "sql_attributes", "required"),
        ({"sql_attributes": '"db.query.text"'}, "sql_attributes", "JSON list"),
        ({"question_attributes": '["ok", 3]'}, "question_attributes", "non-empty string"),
        ({"warehouse_attributes": '[" padded "]'}, "warehouse_attributes", "spaces around it"),
        ({"warehouse_aliases": '["shop"]'}, "warehouse_aliases", "JSON object"),
        ({"warehouse_aliases": '{"prod": "no such"}'}, "warehouse_aliases", "not a warehouse name"),
        ({"warehouse_aliases": '{"prod": "nowhere"}'}, "warehouse_aliases", "No warehouse is registered"),
        ({"default_warehouse": "nowhere"}, "default_warehouse", "No warehouse is registered"),
    ],
)
def test_a_bad_mapping_is_refused_naming_the_field(staff_admin, changes, field, message):
    factories.warehouse("shop")
    response = staff_admin.post(reverse(ADD), form(**changes))
    assert response.status_code == 200
    assert message in " ".join(response.context["adminform"].form.errors[field])
    assert not OtlpMapping.objects.exists()


def test_the_counters_are_shown_but_not_editable(staff_admin):
    counts = OtlpExportCounts.objects.create(client="acme", spans_received=5)
    assert staff_admin.get(reverse("admin:triage_otlpexportcounts_changelist")).status_code == 200
    response = staff_admin.post(reverse("admin:triage_otlpexportcounts_change", args=[counts.pk]), {"exports": 9})
    assert response.status_code == 403
