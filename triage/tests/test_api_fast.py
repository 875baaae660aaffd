"""The plain one-query post answered without DRF answers as QueryIngestView does; the rest reaches that view."""

import json

import pytest
from django.test import RequestFactory

from triage.api import QueryIngestView
from triage.api_fast import query_ingest
from triage.models import LiveQuery
from triage.tests import factories

pytestmark = pytest.mark.django_db
BODY = {"external_id": "x-1", "question": "How many?", "sql": "SELECT 1", "warehouse": "shop", "metadata": {"a": "é"}}


@pytest.fixture
def token():
    factories.warehouse("shop")
    return factories.token()[1]


def post(view, token, body, **extra):
    request = RequestFactory().post(
        "/api/v1/queries", json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    response = view(request)
    if hasattr(response, "render"):
        response.render()
    return response


def test_a_plain_post_gets_the_same_answer_from_both_views(token, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        fast = post(query_ingest, token, BODY)
        fast_again = post(query_ingest, token, BODY)
        full_again = post(QueryIngestView.as_view(), token, BODY)
        full = post(QueryIngestView.as_view(), token, BODY | {"external_id": "x-2"})
    assert (fast.status_code, fast_again.status_code, full_again.status_code, full.status_code) == (202, 200, 200, 202)
    assert fast_again.content == full_again.content  # byte for byte
    assert json.loads(fast.content).keys() == json.loads(full.content).keys()
    assert fast["Content-Type"] == full["Content-Type"] == "application/json"
    stored = LiveQuery.objects.select_related("query").get(external_id="x-1")
    assert stored.query.metadata == {"a": "é"} and stored.query.sql == "SELECT 1"


@pytest.mark.parametrize(
    "change",
    [
        {"external_id": " padded "},  # the serializer trims it
        {"question": ""},
        {"warehouse": "no-such-warehouse"},
        {"dialect": "oracle"},
        {"metadata": None},
        {"attempts": [{"tier": "cheap"}]},
        {"external_id": 7},
        {"unknown": "field"},
    ],
)
def test_what_only_the_serializer_may_judge_goes_to_the_full_view(token, change, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        fast = post(query_ingest, token, BODY | change)
    LiveQuery.objects.all().delete()
    with django_capture_on_commit_callbacks():
        full = post(QueryIngestView.as_view(), token, BODY | change)
    assert fast.status_code == full.status_code
    assert json.loads(fast.content).keys() == json.loads(full.content).keys()


def test_a_bad_token_is_refused_by_the_full_view(token):
    response = post(query_ingest, "dkt_not-a-token", BODY)
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Bearer"
    assert not LiveQuery.objects.exists()


def test_a_token_without_the_ingest_scope_is_refused(token):
    _, read_only = factories.token(scopes=("read",), client="reader")
    assert post(query_ingest, read_only, BODY).status_code == 403
    assert not LiveQuery.objects.exists()
