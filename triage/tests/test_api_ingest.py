"""POST /api/v1/queries and GET /api/v1/queries/<id>: idempotent, validated, token-scoped."""

import json

import pytest
from django.test import override_settings

from labelling.models import Query, QuerySource
from probes.models import Warehouse
from triage.models import ApiToken, IngestStatus, LiveQuery
from triage.tests import factories
from triage.tokens import api_token_revoke

pytestmark = pytest.mark.django_db
URL = "/api/v1/queries"


def row(external_id="q-1", **extra):
    return {
        "external_id": external_id,
        "question": "Revenue last month?",
        "sql": "SELECT 1",
        "warehouse": "shop",
    } | extra


@pytest.fixture
def api(client):
    factories.warehouse("shop")
    _, plaintext = factories.token()

    def call(method, url, body=None, token=plaintext):
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
        if method == "post":
            return client.post(url, data=json.dumps(body), content_type="application/json", **headers)
        return client.get(url, **headers)

    return call


def test_a_single_query_is_accepted_with_its_id_and_status_url(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        response = api("post", URL, row())
    assert response.status_code == 202
    body = response.json()
    live = LiveQuery.objects.get(pk=body["id"])
    assert live.status == IngestStatus.PENDING and live.query.source == QuerySource.LIVE
    assert body["status_url"].endswith(f"/api/v1/queries/{live.pk}")
    assert len(callbacks) == 1, "judging is enqueued after commit, not during the request"


def test_reposting_an_external_id_returns_the_existing_query_never_a_duplicate(api):
    first = api("post", URL, row()).json()
    again = api("post", URL, row(question="changed"))
    assert again.status_code == 200
    assert again.json()["id"] == first["id"] and again.json()["created"] is False
    assert Query.objects.filter(source=QuerySource.LIVE, external_id="q-1").count() == 1


def test_a_list_is_ingested_atomically_and_duplicates_inside_it_collapse(api):
    response = api("post", URL, [row("a"), row("b"), row("a")])
    assert response.status_code == 202
    ids = [entry["id"] for entry in response.json()]
    assert ids[0] == ids[2] and ids[0] != ids[1]
    assert LiveQuery.objects.count() == 2


def test_one_bad_item_rejects_the_whole_list_naming_the_item_and_field(api):
    response = api("post", URL, [row("a"), {"external_id": "b", "question": "q", "warehouse": "shop"}])
    assert response.status_code == 400
    assert response.json()["errors"]["items"]["1"]["sql"]
    assert LiveQuery.objects.count() == 0


def test_missing_fields_give_field_messages(api):
    response = api("post", URL, {"external_id": "x"})
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert {"question", "sql", "warehouse"} <= set(errors)


def test_an_unknown_warehouse_is_a_400_naming_it(api):
    response = api("post", URL, row(warehouse="nope"))
    assert response.status_code == 400
    assert "nope" in response.json()["errors"]["warehouse"][0]


def test_more_than_500_items_is_refused(api):
    response = api("post", URL, [row(f"q{i}") for i in range(501)])
    assert response.status_code == 400
    assert LiveQuery.objects.count() == 0


def test_a_full_batch_of_500_is_accepted(api):
    response = api("post", URL, [row(f"q{i}") for i in range(500)])
    assert response.status_code == 202
    assert LiveQuery.objects.count() == 500


@override_settings(TRIAGE_API_MAX_BODY_BYTES=1000)
def test_an_oversized_body_is_a_413_and_stores_nothing(api):
    response = api("post", URL, row(sql="SELECT " + "1, " * 1000 + "1"))
    assert response.status_code == 413
    assert LiveQuery.objects.count() == 0


def test_a_non_object_body_is_a_400(api):
    assert api("post", URL, "just a string").status_code == 400
    assert api("post", URL, [1, 2]).status_code == 400


def test_status_shows_the_pipeline_state_and_resolution(api):
    created = api("post", URL, row()).json()
    response = api("get", created["status_url"])
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "pending" and body["external_id"] == "q-1"
    assert body["verdicts"] == [] and body["triage"] is None


def test_another_clients_query_is_not_found(api):
    created = api("post", URL, row()).json()
    _, other = factories.token(client="globex")
    assert api("get", created["status_url"], token=other).status_code == 404


@pytest.mark.parametrize("metadata", [{"note": "a\x00b"}, {"a\x00": 1}, {"deep": [{"x": "\ud800"}]}])
def test_metadata_a_database_cannot_store_is_a_400_naming_it(api, metadata):
    response = api("post", URL, row(metadata=metadata))
    assert response.status_code == 400
    assert "metadata" in response.json()["errors"]["metadata"][0]
    assert LiveQuery.objects.count() == 0


def test_an_id_beyond_any_database_integer_is_not_found_rather_than_a_server_error(api):
    assert api("get", f"{URL}/{2**64}").status_code == 404
    assert api("get", f"{URL}/0").status_code == 404


def test_the_schema_and_docs_are_served_locally(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    assert "/api/v1/queries" in schema.content.decode()
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "POST /api/v1/queries" in html and "cdn" not in html.lower()


def test_a_live_query_stored_without_its_pipeline_row_belongs_to_no_client_and_is_not_taken_over(api):
    # External ids are unique per client (the live row holds the client); a query with no
    # live row names no client, so a client posting its id gets a query of its own.
    orphan = Query.objects.create(question="q", sql="SELECT 1", source=QuerySource.LIVE, external_id="legacy-1")
    response = api("post", URL, row("legacy-1"))
    assert response.status_code == 202 and response.json()["id"] != orphan.pk
    assert LiveQuery.objects.get(pk=response.json()["id"]).status == IngestStatus.PENDING
    assert not LiveQuery.objects.filter(pk=orphan.pk).exists()


def test_a_token_remembered_by_this_process_is_refused_as_soon_as_it_is_revoked(api, django_assert_num_queries):
    assert api("post", URL, row("before")).status_code == 202
    # Remembered: the next post reads neither the token nor the warehouse. What is left is
    # the savepoint the test's transaction turns `atomic` into, and the two inserts.
    with django_assert_num_queries(4) as queries:
        assert api("post", URL, row("cached")).status_code == 202
    assert [q["sql"].split()[0] for q in queries.captured_queries] == ["SAVEPOINT", "INSERT", "INSERT", "RELEASE"]
    api_token_revoke(token=ApiToken.objects.get())
    assert api("post", URL, row("after")).status_code == 401
    assert not Query.objects.filter(external_id="after").exists()


def test_a_warehouse_created_after_a_post_named_it_is_usable_at_once(api):
    assert api("post", URL, row("early", warehouse="late")).status_code == 400
    factories.warehouse("late")
    response = api("post", URL, row("on-time", warehouse="late"))
    assert response.status_code == 202
    assert LiveQuery.objects.get(pk=response.json()["id"]).query.warehouse.name == "late"


def test_a_deleted_warehouse_is_forgotten_by_the_process_that_deleted_it(api):
    assert api("post", URL, row("w-1", warehouse="gone")).status_code == 400
    factories.warehouse("gone")
    assert api("post", URL, row("w-2", warehouse="gone")).status_code == 202
    Query.objects.filter(warehouse__name="gone").delete()
    Warehouse.objects.filter(name="gone").get().delete()
    assert api("post", URL, row("w-3", warehouse="gone")).status_code == 400


def test_a_browser_accept_header_gets_the_status_as_json_not_a_server_error(client):
    # A token client is not a user: DRF's browsable HTML page would read its groups and fail.
    factories.warehouse("shop")
    _, plaintext = factories.token()
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"  # what Chromium sends
    auth = {"HTTP_AUTHORIZATION": f"Bearer {plaintext}", "HTTP_ACCEPT": browser}
    created = client.post(URL, data=json.dumps(row()), content_type="application/json", **auth).json()
    response = client.get(f"{URL}/{created['id']}", **auth)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["status"] == IngestStatus.PENDING
    only_html = client.get(f"{URL}/{created['id']}", HTTP_AUTHORIZATION=f"Bearer {plaintext}", HTTP_ACCEPT="text/html")
    assert only_html.status_code == 406  # said plainly, never a 500
