"""Who may run a query's preview: a labeller only what their queues hold, never a live query by id."""

import pytest
from django.urls import reverse

from labelling.models import QuerySource
from labelling.tests import factories
from probes.models import Warehouse

pytestmark = pytest.mark.django_db


@pytest.fixture
def queries():
    warehouse = Warehouse.objects.create(name="shop", dialect="sqlite")
    return {
        "gold": factories.query(gold_set=factories.gold_set(name="gs"), warehouse=warehouse),
        "audit": factories.query(source=QuerySource.AUDIT, warehouse=warehouse),
        "live": factories.query(source=QuerySource.LIVE, warehouse=warehouse, sql="SELECT 42"),
    }


def preview(client, query):
    return client.get(reverse("labelling:preview", args=[query.pk]))


def test_a_labeller_cannot_open_or_run_a_live_query_by_id(client_for, queries):
    response = preview(client_for("labeller"), queries["live"])
    assert response.status_code == 404
    assert b"SELECT 42" not in response.content


def test_a_labeller_previews_what_their_queues_hold(client_for, queries):
    client = client_for("labeller")
    assert preview(client, queries["gold"]).status_code == 200
    assert preview(client, queries["audit"]).status_code == 200


@pytest.mark.parametrize("who", ["ml_engineer", "admin"])
def test_engineers_and_admins_preview_any_query(client_for, queries, who):
    assert preview(client_for(who), queries["live"]).status_code == 200


def test_an_id_that_names_nothing_is_a_404(client_for, queries):
    assert client_for("labeller").get(reverse("labelling:preview", args=[10**9])).status_code == 404


def test_a_malformed_warehouses_file_is_a_message_on_the_preview_not_a_500(client_for, queries, settings, tmp_path):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    settings.WAREHOUSES_FILE.write_text('{"shop": ')
    client = client_for("labeller")
    client.raise_request_exception = False
    response = preview(client, queries["gold"])
    assert response.status_code == 200
    html = response.content.decode()
    assert "Did not run" in html and "is not valid JSON (line 1, column" in html
