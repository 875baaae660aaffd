"""Holes found in the ingestion API: ids shared across clients, malformed bodies that were 500s."""

import json

import pytest
from django.db import IntegrityError, transaction

from labelling.models import Query, QuerySource
from triage.models import LiveQuery
from triage.tests import factories

pytestmark = pytest.mark.django_db
URL = "/api/v1/queries"


def row(external_id="q-1", **extra):
    return {"external_id": external_id, "question": "Revenue?", "sql": "SELECT 1", "warehouse": "shop"} | extra


@pytest.fixture
def tokens():
    factories.warehouse("shop")
    return {name: factories.token(client=name)[1] for name in ("alpha", "beta")}


def post(client, token, body, **extra):
    data = body if isinstance(body, str) else json.dumps(body)
    return client.generic(
        "POST", URL, data, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}", **extra
    )


# --- external_id is unique per client -------------------------------------------------------


def test_another_client_reposting_the_same_external_id_gets_its_own_query(client, tokens):
    first = post(client, tokens["alpha"], row("order-7", question="alpha's"))
    second = post(client, tokens["beta"], row("order-7", question="beta's"))
    assert first.status_code == second.status_code == 202
    assert first.json()["created"] is second.json()["created"] is True
    assert first.json()["id"] != second.json()["id"]
    by_client = {live.client: live.query.question for live in LiveQuery.objects.select_related("query")}
    assert by_client == {"alpha": "alpha's", "beta": "beta's"}
    # Each client still reads only its own, and re-posting is still idempotent per client.
    status = client.get(second.json()["status_url"], HTTP_AUTHORIZATION=f"Bearer {tokens['beta']}").json()
    assert status["id"] == second.json()["id"]
    again = post(client, tokens["alpha"], row("order-7"))
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert Query.objects.filter(source=QuerySource.LIVE, external_id="order-7").count() == 2


def test_a_list_mixing_another_clients_ids_with_new_ones_creates_all_for_this_client(client, tokens):
    post(client, tokens["alpha"], [row("a"), row("b")])
    response = post(client, tokens["beta"], [row("b"), row("c"), row("a")])
    assert [entry["created"] for entry in response.json()] == [True, True, True]
    assert LiveQuery.objects.filter(client="beta").count() == 3


def test_the_database_refuses_a_second_live_row_for_one_clients_external_id():
    first = factories.live_query(external_id="dup")
    LiveQuery.objects.filter(pk=first.pk).update(client="alpha", external_id="dup")
    other = factories.live_query(external_id="other")
    with pytest.raises(IntegrityError), transaction.atomic():
        LiveQuery.objects.filter(pk=other.pk).update(client="alpha", external_id="dup")
    LiveQuery.objects.filter(pk=other.pk).update(client="beta", external_id="dup")  # another client: fine


# --- A repeat inside one list is created once ------------------------------------------------


def test_a_duplicate_inside_one_list_reports_created_only_once(client, tokens):
    response = post(client, tokens["alpha"], [row("a"), row("b"), row("a"), row("a")])
    assert response.status_code == 202
    body = response.json()
    assert [entry["created"] for entry in body] == [True, True, False, False]
    assert body[0]["id"] == body[2]["id"] == body[3]["id"]
    assert LiveQuery.objects.count() == 2


def test_a_duplicate_of_a_stored_id_inside_one_list_is_created_never(client, tokens):
    post(client, tokens["alpha"], row("old"))
    body = post(client, tokens["alpha"], [row("old"), row("new"), row("old"), row("new")]).json()
    assert [entry["created"] for entry in body] == [False, True, False, False]


# --- Malformed bodies are 400s with a message ------------------------------------------------------


def nested_metadata_body(depth: int) -> str:
    nested = "[" * depth + "]" * depth
    return json.dumps(row()).removesuffix("}") + f', "metadata": {{"x": {nested}}}}}'


def test_json_nested_5000_deep_is_a_400_with_a_message(client, tokens):
    for body in (nested_metadata_body(5_000), "[" * 5_000 + "]" * 5_000):
        response = post(client, tokens["alpha"], body)
        assert response.status_code == 400
        assert "nested too deeply" in response.json()["detail"]
    assert LiveQuery.objects.count() == 0


@pytest.mark.parametrize("depth", [100, 900])
def test_metadata_nested_past_the_limit_is_a_400_naming_it(client, tokens, depth):
    response = post(client, tokens["alpha"], nested_metadata_body(depth))
    assert response.status_code == 400
    assert "more than 64 levels" in response.json()["errors"]["metadata"][0]
    assert LiveQuery.objects.count() == 0


def test_metadata_nested_within_the_limit_is_stored(client, tokens):
    metadata = {"a": {"b": [{"c": [1, 2]}]}}
    response = post(client, tokens["alpha"], row(metadata=metadata))
    assert response.status_code == 202
    assert LiveQuery.objects.get().query.metadata == metadata


@pytest.mark.parametrize("length", ["abc", "-5", "1e3", "٣"])
def test_a_content_length_that_is_not_a_byte_count_is_a_400(client, tokens, length):
    response = post(client, tokens["alpha"], row(), CONTENT_LENGTH=length)
    assert response.status_code == 400
    assert "Content-Length" in response.json()["detail"]
    assert LiveQuery.objects.count() == 0
