"""Fitness thresholds set per gold set: stored on it, edited by who manages gold sets, read by every surface."""

import json
from io import StringIO

import pytest
from auditlog.models import LogEntry
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.urls import reverse

from judges.fitness import DEFAULT_THRESHOLDS, fitness_statement
from judges.report import build_report
from judges.sample_size import items_for_bound
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from labelling.models import GoldSet
from labelling.services import goldset_fitness_thresholds_set
from tests.support.access import admitted, denied

pytestmark = pytest.mark.django_db


@pytest.fixture
def version():
    """A judge perfect on 30 wrong and 60 correct items: catch's lower bound 0.886, false reject's upper 0.060."""
    version = make_gold_set("thr", labels(30, 60))
    add_verdicts(make_run(version), make_judge_version("sharp"), ["reject"] * 30 + ["accept"] * 60)
    return version


def sharp(report):
    return next(judge for judge in report["judges"] if judge["name"] == "sharp")


def test_the_defaults_are_the_issues_and_a_new_gold_set_carries_them():
    gold_set = GoldSet.objects.create(name="fresh")
    assert (gold_set.fitness_gate_catch_lower, gold_set.fitness_gate_false_reject_upper) == (0.8, 0.05)
    assert gold_set.fitness_monitor_kappa_lower == 0.6
    assert (DEFAULT_THRESHOLDS.catch_lower, DEFAULT_THRESHOLDS.false_reject_upper) == (0.8, 0.05)
    assert DEFAULT_THRESHOLDS.kappa_lower == 0.6


def test_raising_the_false_reject_ceiling_makes_the_judge_gate_and_the_reasons_name_the_thresholds(version):
    before = sharp(build_report(gold_set_version=version))["fitness"]
    assert before["level"] == "monitor"
    assert "above 0.05 (gold set thr's threshold)" in before["reasons"][1]
    goldset_fitness_thresholds_set(gold_set=version.gold_set, catch_lower=0.8, false_reject_upper=0.07, kappa_lower=0.6)
    version.gold_set.refresh_from_db()
    after = sharp(build_report(gold_set_version=version))["fitness"]
    assert after["level"] == "gate" and after["needed"] == {}
    assert "at most 0.07 (gold set thr's threshold)" in after["reasons"][1]
    assert set(after) == {"level", "reasons", "needed"}  # the contract's keys, whatever the thresholds


def test_a_stricter_catch_bound_keeps_the_judge_from_gate_and_counts_the_wrong_items_still_needed(version):
    goldset_fitness_thresholds_set(gold_set=version.gold_set, catch_lower=0.9, false_reject_upper=0.07, kappa_lower=0.6)
    version.gold_set.refresh_from_db()
    fitness = sharp(build_report(gold_set_version=version))["fitness"]
    assert fitness["level"] == "monitor"
    assert fitness["reasons"][0].endswith("below 0.90 (gold set thr's threshold)")
    assert fitness["needed"]["to_gate"] == {"wrong": items_for_bound(1.0, 0.9, side="lower") - 30, "correct": 0}


def test_a_threshold_outside_its_range_is_refused_by_the_service_and_by_the_database(version):
    gold_set = version.gold_set
    with pytest.raises(ValidationError):
        goldset_fitness_thresholds_set(gold_set=gold_set, catch_lower=1.2, false_reject_upper=0.05, kappa_lower=0.6)
    with pytest.raises(IntegrityError), transaction.atomic():
        GoldSet.objects.filter(pk=gold_set.pk).update(fitness_monitor_kappa_lower=-2)


def test_a_threshold_off_the_hundredths_is_written_as_set():
    result = fitness_statement(
        catch=0.9,
        catch_ci=[0.78, 0.95],
        wrong=40,
        false_reject=0.0,
        false_reject_ci=[0.0, 0.01],
        correct=400,
        kappa=0.8,
        kappa_ci=[0.7, 0.9],
        items=440,
        thresholds=DEFAULT_THRESHOLDS.__class__(catch_lower=0.775, owner="gold set x"),
    )
    assert result["level"] == "gate" and "at least 0.775 (gold set x's threshold)" in result["reasons"][0]


def test_an_ml_engineer_sets_the_thresholds_on_the_gold_set_page_and_the_dashboard_follows(client_for, version):
    client = client_for("ml_engineer")
    url = reverse("labelling:goldset_thresholds", args=["thr"])
    page = client.get(reverse("labelling:goldset_detail", args=["thr"])).content.decode()
    assert 'id="fitness-thresholds"' in page and 'name="false_reject_upper"' in page
    dashboard = reverse("judges:dashboard", args=[version.pk])
    assert 'data-fitness="monitor"' in client.get(dashboard).content.decode()
    answer = client.post(url, {"catch_lower": "0.8", "false_reject_upper": "0.07", "kappa_lower": "0.6"})
    assert admitted(answer)
    assert GoldSet.objects.get(name="thr").fitness_gate_false_reject_upper == 0.07
    # Who moved a threshold, and from what, is in the audit log.
    entry = LogEntry.objects.get_for_object(GoldSet.objects.get(name="thr")).filter(action=LogEntry.Action.UPDATE).get()
    assert entry.actor.username == "ml_engineer-user"
    assert entry.changes_dict["fitness_gate_false_reject_upper"] == [0.05, 0.07]
    html = client.get(dashboard).content.decode()
    assert 'data-fitness="gate"' in html and "≤ 0.07" in html
    # The JSON report and judge_report say the same.
    report = client.get(reverse("judges:dashboard-report-json", args=[version.pk])).json()
    assert sharp(report)["fitness"]["level"] == "gate"
    out = StringIO()
    call_command("judge_report", "--gold-set", "thr", "--format", "json", stdout=out)
    assert sharp(json.loads(out.getvalue()))["fitness"]["level"] == "gate"


def test_a_bad_threshold_is_refused_with_the_reason_and_nothing_changes(client_for, version):
    client = client_for("ml_engineer")
    url = reverse("labelling:goldset_thresholds", args=["thr"])
    answer = client.post(url, {"catch_lower": "1.5", "false_reject_upper": "0.07", "kappa_lower": "0.6"}, follow=True)
    assert "Thresholds not changed" in answer.content.decode()
    assert GoldSet.objects.get(name="thr").fitness_gate_catch_lower == 0.8


@pytest.mark.parametrize("role", ["labeller", "analyst", "outsider"])
def test_who_does_not_manage_gold_sets_cannot_set_thresholds(client_for, version, role):
    url = reverse("labelling:goldset_thresholds", args=["thr"])
    answer = client_for(role).post(url, {"catch_lower": "0.1", "false_reject_upper": "0.9", "kappa_lower": "0"})
    assert denied(answer)
    assert GoldSet.objects.get(name="thr").fitness_gate_catch_lower == 0.8


def test_the_gold_set_page_shows_a_labeller_the_thresholds_without_the_form(client_for, version):
    html = client_for("labeller").get(reverse("labelling:goldset_detail", args=["thr"])).content.decode()
    assert 'id="fitness-thresholds"' in html and 'name="catch_lower"' not in html
