"""The analyst's pages: the item with its evidence, deciding and moving on, history, dashboard."""

import re

import pytest
from django.urls import reverse

from labelling.models import Label
from probes.models import ProbeRun
from triage.models import Alert, EstimateSnapshot, IngestStatus, TriageItem, TriageProbe, TriageStatus
from triage.queue import triage_item_claim_next, triage_item_resolve
from triage.tests import factories

pytestmark = pytest.mark.django_db


def flagged_item_with_evidence():
    item = factories.triage_item(probe_confirmed=True)
    item.query.sql = "SELECT SUM(oi.price) FROM orders o JOIN order_items oi ON oi.order_id = o.id WHERE o.status = 'x'"
    item.query.fingerprint = "fp-1"
    item.query.save()
    judge = factories.judge_version("strict-judge")
    verdict = factories.live_verdict(judge, item.query, "reject", reason="The join multiplies order rows.")
    probe = ProbeRun.objects.create(
        warehouse=item.query.warehouse,
        probe_sql="SELECT COUNT(*), COUNT(DISTINCT oi.order_id) FROM order_items oi",
        outcome="confirmed",
        guard_allowed=True,
        figures={"total": 1214, "distinct": 412},
        hypothesis={"join_table": "order_items", "grain_key": "order_id"},
    )
    live = item.query.live
    TriageProbe.objects.create(live_query=live, source=f"judge:{judge.pk}:0", verdict=verdict, probe_run=probe)
    live.verifier_result = {"passed": True, "failure_class": "", "message": "", "findings": []}
    live.result_preview = {"columns": ["total"], "rows": [[123.5]]}
    live.save()
    return item


def test_the_item_page_shows_every_piece_of_evidence(client_for):
    item = flagged_item_with_evidence()
    html = client_for("analyst").get(reverse("triage:item", args=[item.pk])).content.decode()
    assert item.query.question in html
    assert '<span class="k">SELECT</span>' in html
    assert "The join multiplies order rows." in html
    assert "order_items fans out order_id: 1,214 rows for 412 distinct keys" in html
    assert "COUNT(DISTINCT" in re.sub(r'<span class="[\w -]+">|</span>', "", html)
    assert "123.5" in html
    assert "js/triage.js" in html


def test_similar_past_items_share_the_fingerprint(role_users, client_for):
    past = flagged_item_with_evidence()
    analyst = role_users["analyst"]
    triage_item_claim_next(analyst=analyst)
    triage_item_resolve(item_id=past.pk, analyst=analyst, resolution="confirmed_wrong", error_class="join_fanout")
    current = factories.triage_item()
    current.query.fingerprint = "fp-1"
    current.query.save()
    html = client_for("analyst").get(reverse("triage:item", args=[current.pk])).content.decode()
    assert reverse("triage:item", args=[past.pk]) in html and "Confirmed wrong" in html


def test_deciding_saves_a_label_and_opens_the_next_item_at_once(client_for, role_users):
    first = factories.triage_item(judges_agreeing=3)
    second = factories.triage_item(judges_agreeing=1)
    client = client_for("analyst")
    response = client.post(reverse("triage:claim_next"))
    assert response["Location"] == reverse("triage:item", args=[first.pk])
    page = client.get(response["Location"]).content.decode()
    assert 'id="decision-form"' in page
    response = client.post(
        reverse("triage:decide", args=[first.pk]),
        {"resolution": "confirmed_wrong", "error_class": "missing_filter", "note": "cancelled orders counted"},
    )
    assert response["Location"] == reverse("triage:item", args=[second.pk])
    label = Label.objects.get(query=first.query)
    assert (label.decision, label.error_class, label.note) == ("wrong", "missing_filter", "cancelled orders counted")
    second.refresh_from_db()
    assert second.status == TriageStatus.CLAIMED and second.assignee == role_users["analyst"]


def test_a_decision_without_the_claim_is_refused_and_saves_nothing(client_for, role_users, django_user_model):
    item = factories.triage_item()
    triage_item_claim_next(analyst=django_user_model.objects.create_user("someone-else"))
    client_for("analyst").post(reverse("triage:decide", args=[item.pk]), {"resolution": "false_alarm"})
    assert not Label.objects.exists()


def test_confirmed_wrong_without_a_class_is_refused_by_the_form(client_for):
    item = factories.triage_item()
    client = client_for("analyst")
    client.post(reverse("triage:claim_next"))
    response = client.post(reverse("triage:decide", args=[item.pk]), {"resolution": "confirmed_wrong"}, follow=True)
    assert "error class" in response.content.decode()
    assert not Label.objects.exists()


def test_an_admin_reopens_from_the_item_page(client_for, role_users):
    item = factories.triage_item()
    analyst = role_users["analyst"]
    triage_item_claim_next(analyst=analyst)
    triage_item_resolve(item_id=item.pk, analyst=analyst, resolution="false_alarm")
    client = client_for("admin")
    assert "Reopen (admin)" in client.get(reverse("triage:item", args=[item.pk])).content.decode()
    client.post(reverse("triage:reopen", args=[item.pk]), {"note": "wrong call"})
    item.refresh_from_db()
    assert item.status == TriageStatus.OPEN
    html = client.get(reverse("triage:item", args=[item.pk])).content.decode()
    assert "reopened" in html and "wrong call" in html


def test_resolved_items_are_browsable(client_for, role_users):
    item = factories.triage_item()
    triage_item_claim_next(analyst=role_users["analyst"])
    triage_item_resolve(item_id=item.pk, analyst=role_users["analyst"], resolution="unclear")
    html = client_for("analyst").get(reverse("triage:resolved")).content.decode()
    assert reverse("triage:item", args=[item.pk]) in html and "Unclear" in html


def test_the_unjudged_list_shows_queries_every_judge_errored_on(client_for):
    live = factories.live_query(status=IngestStatus.UNJUDGED, external_id="all-judges-down")
    html = client_for("analyst").get(reverse("triage:unjudged")).content.decode()
    assert "all-judges-down" in html and live.query.question in html


def test_the_dashboard_shows_depth_precision_and_alert_banner(client_for, role_users):
    judge = factories.judge_version("precise")
    for resolution in ["confirmed_wrong", "confirmed_wrong", "false_alarm"]:
        item = factories.triage_item()
        item.rejecting_judges.add(judge)
        triage_item_claim_next(analyst=role_users["analyst"])
        triage_item_resolve(
            item_id=item.pk,
            analyst=role_users["analyst"],
            resolution=resolution,
            error_class="other" if resolution == "confirmed_wrong" else "",
        )
    factories.triage_item()
    Alert.objects.create(kind=Alert.Kind.MODEL_CHANGED, judge_version=judge, message="precise v1 now reports m2")
    response = client_for("analyst").get(reverse("triage:dashboard"))
    figures = response.context
    assert figures["depth_open"] == 1
    assert figures["precision"][0]["precision"] == pytest.approx(2 / 3)
    assert figures["throughput"][0]["week"] == 3
    html = response.content.decode()
    assert 'role="alert"' in html and "precise v1 now reports m2" in html


def test_an_admin_acknowledges_an_alert_and_the_banner_goes(client_for):
    alert = Alert.objects.create(kind=Alert.Kind.CATCH_DRIFT, message="drifted")
    client = client_for("admin")
    client.post(reverse("triage:acknowledge_alert", args=[alert.pk]))
    assert "drifted" not in client.get(reverse("triage:dashboard")).content.decode()


def test_the_queue_page_lists_items_and_offers_next(client_for):
    item = factories.triage_item()
    html = client_for("analyst").get(reverse("triage:index")).content.decode()
    assert reverse("triage:item", args=[item.pk]) in html and "<kbd>n</kbd>" in html
    assert TriageItem.objects.count() == 1


def test_the_dashboard_charts_both_error_rate_estimates_over_time(client_for):
    judge = factories.judge_version("charted")
    for corrected, audit in [(0.18, 0.2), (0.21, 0.19)]:
        EstimateSnapshot.objects.create(
            judge_version=judge,
            corrected_error_rate=corrected,
            corrected_low=corrected - 0.03,
            corrected_high=corrected + 0.03,
            audit_error_rate=audit,
            audit_low=audit - 0.04,
            audit_high=audit + 0.04,
        )
    html = client_for("analyst").get(reverse("triage:dashboard")).content.decode()
    assert 'aria-label="Live error rate over time"' in html
    assert html.count("<polyline") == 2 and "Rogan–Gladen" in html
