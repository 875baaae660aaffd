"""Blind labelling across apps (issue 26, item 6): the judges' and triage pages that show gold or
analysts' labels are out of a labeller's reach, and a triage decision is a blind label."""

import pytest
from django.urls import reverse

from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from triage.queue import triage_item_claim_next, triage_item_resolve
from triage.tests.factories import triage_item

pytestmark = pytest.mark.django_db


def test_the_judges_and_triage_pages_that_show_labels_refuse_a_labeller(client_for):
    version = make_gold_set("reach", labels(2, 2))
    run = make_run(version)
    judge = make_judge_version("reach-judge")
    add_verdicts(run, judge, ["reject", "accept", "accept", "reject"])
    query = version.items.first().query
    item = triage_item()
    pages = [
        reverse("judges:dashboard", args=[version.pk]),
        reverse("judges:dashboard-item", args=[version.pk, query.pk]),
        reverse("judges:dashboard-missed", args=[version.pk]),
        reverse("judges:dashboard-cell", args=[version.pk]),
        reverse("judges:dashboard-report-json", args=[version.pk]),
        reverse("judges:judge_compare", args=[judge.judge.pk]),
        reverse("triage:item", args=[item.pk]),
        reverse("triage:resolved"),
        reverse("triage:resolved_export", args=["csv"]),
    ]
    client = client_for("labeller")
    assert {url: client.get(url).status_code for url in pages} == dict.fromkeys(pages, 403)


def test_an_analyst_s_triage_decision_is_a_blind_label(role_users):
    item = triage_item()
    analyst = role_users["analyst"]
    triage_item_claim_next(analyst=analyst)
    label = triage_item_resolve(item_id=item.pk, analyst=analyst, resolution="false_alarm")
    assert label.blind and label.source == "triage" and label.labeller == analyst
