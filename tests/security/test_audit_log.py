"""The audit log: who changed what and when, for every audited model, never a secret, never edited.

Changes go through the services and the admin as a user would make them; each must leave an
entry naming its actor. The page is the admins' alone, filters and exports what it shows.
"""

import json
from datetime import timedelta

import pytest
from auditlog.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from judges.models import Judge, JudgeVersion
from judges.services import judge_create
from judges.tests.calibration_builders import labels, make_gold_set
from labelling.models import GoldSet, Query
from labelling.services import adjudication_create, goldset_publish
from probes.models import Warehouse
from triage.models import ApiToken, TriagePolicy
from triage.policy import policy_publish
from triage.tokens import api_token_issue, api_token_revoke

pytestmark = pytest.mark.django_db


def entries_for(model) -> list[LogEntry]:
    return list(LogEntry.objects.filter(content_type=ContentType.objects.get_for_model(model)).order_by("pk"))


@pytest.fixture
def admin_client(client, role_users):
    admin = role_users["admin"]
    admin.is_staff = True
    admin.save()
    client.force_login(admin)
    return client


def test_a_judge_made_through_the_service_is_recorded_with_its_actor(role_users):
    engineer = role_users["ml_engineer"]
    judge_create(name="audited", user=engineer, backend="verifier")
    (judge_entry,) = entries_for(Judge)
    (version_entry,) = entries_for(JudgeVersion)
    assert judge_entry.action == LogEntry.Action.CREATE and judge_entry.actor == engineer
    assert version_entry.actor == engineer and version_entry.changes_dict["backend"][1] == "verifier"


def test_a_warehouse_changed_and_a_judge_deleted_in_the_admin_are_recorded_with_the_admin(admin_client, role_users):
    warehouse = Warehouse.objects.create(name="shop", dialect="sqlite")
    form = {"name": "shop", "dialect": "sqlite", "description": "the shop", "verifier_rules": "{}"}
    assert admin_client.post(reverse("admin:probes_warehouse_change", args=[warehouse.pk]), form).status_code == 302
    change = entries_for(Warehouse)[-1]
    assert change.action == LogEntry.Action.UPDATE and change.actor == role_users["admin"]
    assert change.changes_dict["description"] == ["", "the shop"]
    judge = Judge.objects.create(name="doomed")
    admin_client.post(reverse("admin:judges_judge_delete", args=[judge.pk]), {"post": "yes"})
    assert not Judge.objects.filter(pk=judge.pk).exists()
    deleted = entries_for(Judge)[-1]
    assert deleted.action == LogEntry.Action.DELETE and deleted.actor == role_users["admin"]


def test_a_policy_publication_names_its_publisher(role_users):
    policy_publish(changes={"audit_share": 0.2}, created_by=role_users["admin"])
    (entry,) = [e for e in entries_for(TriagePolicy) if e.action == LogEntry.Action.CREATE]
    assert entry.actor == role_users["admin"] and entry.changes_dict["audit_share"][1] == 0.2


def test_a_token_is_recorded_without_its_hash_and_its_revocation_too(admin_client, role_users):
    token, plaintext = api_token_issue(client="acme", scopes=["ingest"], created_by=role_users["admin"])
    (created,) = entries_for(ApiToken)
    assert created.actor == role_users["admin"]
    assert "token_hash" not in created.changes_dict
    stored = json.dumps([created.changes_dict, created.serialized_data, created.object_repr])
    assert token.token_hash not in stored and plaintext not in stored
    admin_client.post(reverse("admin:triage_apitoken_changelist"), {"action": "revoke", "_selected_action": [token.pk]})
    revoked = entries_for(ApiToken)[-1]
    assert revoked.action == LogEntry.Action.UPDATE and revoked.actor == role_users["admin"]
    assert revoked.changes_dict["revoked_at"][0] is None and revoked.changes_dict["revoked_at"][1]
    api_token_revoke(token=token)  # already revoked: nothing changes, nothing is recorded
    assert len(entries_for(ApiToken)) == 2


def test_a_publication_and_an_adjudication_name_who_made_them(role_users):
    gold_set = GoldSet.objects.create(name="audited-gold")
    query = Query.objects.create(question="q?", sql="SELECT 1", gold_set=gold_set, external_id="a-1")
    adjudication_create(query=query, adjudicator=role_users["admin"], decision="correct", reason="checked by hand")
    version = goldset_publish(gold_set=gold_set, user=role_users["ml_engineer"])
    publication = [e for e in entries_for(type(version)) if e.action == LogEntry.Action.CREATE]
    assert publication[0].actor == role_users["ml_engineer"]
    (adjudication,) = entries_for(type(query.adjudications.get()))
    assert adjudication.actor == role_users["admin"]


def test_an_entry_is_never_changed_or_deleted(role_users, admin_client):
    judge_create(name="kept", user=role_users["ml_engineer"], backend="verifier")
    entry = entries_for(Judge)[0]
    entry.object_repr = "rewritten"
    with pytest.raises(PermissionDenied), transaction.atomic():
        entry.save()
    with pytest.raises(PermissionDenied), transaction.atomic():
        LogEntry.objects.get(pk=entry.pk).delete()
    assert LogEntry.objects.get(pk=entry.pk).object_repr == "kept"
    delete_page = admin_client.get(reverse("admin:auditlog_logentry_delete", args=[entry.pk]))
    assert delete_page.status_code == 403
    change_page = admin_client.post(reverse("admin:auditlog_logentry_change", args=[entry.pk]), {"object_repr": "x"})
    assert LogEntry.objects.get(pk=entry.pk).object_repr == "kept" and change_page.status_code in (302, 403)


@pytest.mark.parametrize("role", ["labeller", "analyst", "ml_engineer", "outsider"])
def test_only_admins_open_the_audit_page(client_for, role):
    assert client_for(role).get(reverse("audit-log")).status_code == 403
    assert client_for(role).get(reverse("audit-log") + "?format=csv").status_code == 403


def test_the_page_filters_by_model_actor_and_dates(client_for, role_users):
    judge_create(name="by-engineer", user=role_users["ml_engineer"], backend="verifier")
    policy_publish(changes={}, created_by=role_users["admin"])
    client = client_for("admin")
    judge_row, policy_row = "<strong>by-engineer</strong>", "<strong>policy v1</strong>"
    page = client.get(reverse("audit-log")).content.decode()
    assert judge_row in page and policy_row in page
    judges_only = client.get(reverse("audit-log"), {"model": ContentType.objects.get_for_model(Judge).pk})
    assert judge_row in judges_only.content.decode() and policy_row not in judges_only.content.decode()
    by_admin = client.get(reverse("audit-log"), {"actor": role_users["admin"].pk}).content.decode()
    assert judge_row not in by_admin and policy_row in by_admin
    tomorrow = (timezone.now() + timedelta(days=1)).date().isoformat()
    assert "No entry matches" in client.get(reverse("audit-log"), {"since": tomorrow}).content.decode()
    assert judge_row in client.get(reverse("audit-log"), {"until": tomorrow}).content.decode()


def test_the_export_streams_csv_and_json_of_what_the_filters_keep(client_for, role_users):
    judge_create(name="exported", user=role_users["ml_engineer"], backend="verifier")
    policy_publish(changes={}, created_by=role_users["admin"])
    client = client_for("admin")
    judge_type = ContentType.objects.get_for_model(Judge).pk
    as_json = client.get(reverse("audit-log"), {"format": "json", "model": judge_type})
    assert as_json.streaming
    records = json.loads(b"".join(as_json.streaming_content))
    assert [(r["model"], r["object"], r["actor"], r["action"]) for r in records] == [
        ("judges.judge", "exported", "ml_engineer-user", "create")
    ]
    as_csv = client.get(reverse("audit-log"), {"format": "csv"})
    assert as_csv.streaming
    text = b"".join(as_csv.streaming_content).decode()
    assert text.splitlines()[0].startswith('"id","timestamp","actor"')
    assert "exported" in text and "triage.triagepolicy" in text


def test_the_audit_page_shows_an_entry_whose_model_has_a_field_named_items(admin_client):
    # A gold-set version's audited fields include `items`: a template reading `changes.items`
    # got that field's value instead of the dict's method, and the page answered 500.
    make_gold_set("audited-items", labels(2, 2))
    response = admin_client.get(reverse("audit-log"))
    assert response.status_code == 200
    assert "<code>items</code>" in response.content.decode()
