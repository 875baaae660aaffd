"""Bad input to triage gets a 4xx with a message, never a 500; every download holds every row (issue 26, item 7)."""

import csv
import io
import json

import pytest
from django.urls import reverse
from django.utils import timezone

from triage.models import TriageItem, TriageStatus
from triage.tests import factories
from triage.tokens import api_token_authenticate

pytestmark = pytest.mark.django_db
URL = "/api/v1/queries"


@pytest.mark.parametrize(
    "header",
    [
        "Bearer dkt_\xe9\xff_token",  # latin-1 bytes that are not UTF-8, in the token
        "B\xe9arer dkt_x",  # ... and in the keyword
        "\xff\xfe",  # nothing but such bytes
    ],
)
def test_a_non_utf8_authorization_header_is_refused_with_a_401_that_says_why(client, header):
    factories.warehouse("shop")
    client.raise_request_exception = False
    body = json.dumps({"external_id": "q-1", "question": "Revenue?", "sql": "SELECT 1", "warehouse": "shop"})
    response = client.generic("POST", URL, body, content_type="application/json", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert "ASCII" in response.json()["detail"]
    status = client.get(f"{URL}/1", HTTP_AUTHORIZATION=header)
    assert status.status_code == 401


def streamed(response) -> str:
    assert response.streaming, "a download is streamed"
    return b"".join(response.streaming_content).decode()


def test_the_queue_download_holds_every_claimable_item_not_the_first_hundred(client, role_users):
    for _ in range(130):
        factories.triage_item()
    client.force_login(role_users["analyst"])
    data = json.loads(streamed(client.get(reverse("triage:queue_export", args=["json"]))))
    assert len(data) == 130
    rows = list(csv.DictReader(io.StringIO(streamed(client.get(reverse("triage:queue_export", args=["csv"]))))))
    assert len(rows) == 130 and [int(row["id"]) for row in rows] == [record["id"] for record in data]


def test_the_resolved_download_holds_every_resolved_item_not_the_first_two_hundred(client, role_users):
    for _ in range(230):
        factories.triage_item()
    TriageItem.objects.update(status=TriageStatus.RESOLVED, resolution="false_alarm", resolved_at=timezone.now())
    client.force_login(role_users["analyst"])
    data = json.loads(streamed(client.get(reverse("triage:resolved_export", args=["json"]))))
    assert len(data) == 230
    rows = list(csv.DictReader(io.StringIO(streamed(client.get(reverse("triage:resolved_export", args=["csv"]))))))
    assert len(rows) == 230


def test_a_token_that_is_not_ascii_names_no_token_and_raises_nothing():
    assert api_token_authenticate(plaintext="dkt_\ud800_lone_surrogate") is None
    assert api_token_authenticate(plaintext="dkt_é") is None
