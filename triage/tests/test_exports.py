"""The triage queue and the resolved items download as CSV and JSON, cells neutralised."""

import csv
import io
import json

import pytest
from django.urls import reverse
from django.utils import timezone

from triage.models import TriageStatus
from triage.selectors import queue_items
from triage.tests.factories import triage_item

pytestmark = pytest.mark.django_db


def rows_of(response):
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_the_queue_downloads_in_the_page_s_order(client, role_users):
    triage_item(judges_agreeing=1)
    triage_item(judges_agreeing=3, probe_confirmed=True)
    client.force_login(role_users["analyst"])
    expected = [item.pk for item in queue_items(params={})]
    data = json.loads(b"".join(client.get(reverse("triage:queue_export", args=["json"])).streaming_content))
    assert [record["id"] for record in data] == expected
    rows = rows_of(client.get(reverse("triage:queue_export", args=["csv"])))
    assert [int(row["id"]) for row in rows] == expected
    assert rows[0]["judges_agreeing"] == "3"


def test_resolved_items_download_with_formula_cells_neutralised(client, role_users):
    item = triage_item()
    item.status = TriageStatus.RESOLVED
    item.resolution = "false_alarm"
    item.resolution_note = "=cmd|' /C calc'!A0"
    item.resolved_at = timezone.now()
    item.save()
    client.force_login(role_users["analyst"])
    rows = rows_of(client.get(reverse("triage:resolved_export", args=["csv"])))
    assert rows[0]["resolution_note"] == "'=cmd|' /C calc'!A0"
    data = json.loads(b"".join(client.get(reverse("triage:resolved_export", args=["json"])).streaming_content))
    assert data[0]["resolution_note"] == "=cmd|' /C calc'!A0"
    client.force_login(role_users["labeller"])
    assert client.get(reverse("triage:resolved_export", args=["csv"])).status_code == 403
