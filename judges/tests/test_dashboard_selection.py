"""Which runs count: judge_report --runs/--since/--until and the dashboard's controls."""

import datetime
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from judges.models import CalibrationRun
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run

pytestmark = pytest.mark.django_db
R, A, E = "reject", "accept", "error"


@pytest.fixture
def two_runs():
    """A 3-repeat run of alpha and beta, then a 1-repeat run of beta only on half the items."""
    version = make_gold_set("sel", labels(2, 2))
    alpha, beta = make_judge_version("alpha"), make_judge_version("beta")
    first = make_run(version, label="first", repeats=3)
    for repeat, decisions in enumerate(([R, A, A, A], [R, R, A, R], [A, A, A, A])):
        add_verdicts(first, alpha, decisions, repeat=repeat)
        add_verdicts(first, beta, [A, R, R, A], repeat=repeat)
    second = make_run(version, label="extra", repeats=1)
    add_verdicts(second, beta, [R, R, None, None])
    CalibrationRun.objects.filter(pk=first.pk).update(created_at=timezone.make_aware(datetime.datetime(2026, 1, 5)))
    CalibrationRun.objects.filter(pk=second.pk).update(created_at=timezone.make_aware(datetime.datetime(2026, 2, 5)))
    return version, first, second, alpha, beta


def report_json(*args):
    out = io.StringIO()
    call_command("judge_report", "--gold-set", "sel", "--format", "json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_the_json_names_the_runs_and_what_each_judge_rests_on(two_runs):
    _, first, second, _, _ = two_runs
    report = report_json()
    assert report["runs"] == [first.pk, second.pk]
    alpha, beta = report["judges"]
    assert (alpha["runs"], alpha["items"], alpha["verdicts"], alpha["repeats"]) == ([first.pk], 4, 12, 3)
    assert (beta["runs"], beta["items"], beta["verdicts"], beta["repeats"]) == ([first.pk, second.pk], 4, 14, 4)
    # beta on item 0: 3 accepts then a reject; kappa against gold is a number, not missing.
    assert beta["catch_rate"] == pytest.approx((1 / 4 + 1) / 2)
    assert isinstance(alpha["kappa_vs_gold"], float) and isinstance(beta["kappa_vs_gold"], float)
    assert any("different repeat counts" in warning for warning in report["warnings"])


def test_runs_and_dates_select_what_counts(two_runs):
    _, first, second, _, _ = two_runs
    only_first = report_json("--runs", str(first.pk))
    assert only_first["runs"] == [first.pk]
    assert [j["repeats"] for j in only_first["judges"]] == [3, 3]
    assert only_first["warnings"] == []
    assert report_json("--runs", f"{first.pk},{second.pk}")["runs"] == [first.pk, second.pk]
    assert report_json("--since", "2026-02-01")["runs"] == [second.pk]
    assert report_json("--until", "2026-01-31")["runs"] == [first.pk]
    since = report_json("--since", "2026-02-01")
    assert [j["name"] for j in since["judges"]] == ["beta"]
    assert since["run_selection"]["since"] == "2026-02-01"


def test_runs_are_named_by_label_wherever_by_id_and_the_report_gives_their_labels(two_runs):
    _, first, second, _, _ = two_runs
    report = report_json("--runs", f"first,{second.pk}")
    assert report["runs"] == [first.pk, second.pk]
    assert report["run_labels"] == {str(first.pk): "first", str(second.pk): "extra"}
    assert report["run_selection"]["run_labels"] == ["first"]


def test_bad_selections_are_refused_with_the_reason(two_runs):
    with pytest.raises(CommandError, match="not a calibration run"):
        report_json("--runs", "9999")
    # A word is a run label: one no run on the version carries is named.
    with pytest.raises(CommandError, match="run 'three' is not a calibration run"):
        report_json("--runs", "three")
    with pytest.raises(CommandError, match="since must be a date"):
        report_json("--since", "last week")


def test_the_dashboard_takes_the_same_selection_and_warns_about_unequal_samples(client_for, two_runs):
    version, first, second, _, _ = two_runs
    client = client_for("ml_engineer")
    url = reverse("judges:dashboard", args=[version.pk])
    html = client.get(url).content.decode()
    assert "different repeat counts" in html
    assert f'id="runs-used">{first.pk}, {second.pk}<' in html
    narrowed = client.get(url, {"runs": str(first.pk)}).content.decode()
    assert "different repeat counts" not in narrowed
    assert f'id="runs-used">{first.pk}<' in narrowed
    download = client.get(reverse("judges:dashboard-report-json", args=[version.pk]), {"runs": str(first.pk)}).json()
    assert download == report_json("--runs", str(first.pk))
    refused = client.get(url, {"runs": "9999"})
    assert refused.status_code == 400
    assert "not a calibration run" in refused.content.decode()


def test_the_dashboard_states_the_common_item_set_of_ensembles(client_for, two_runs):
    version, *_ = two_runs
    html = client_for("ml_engineer").get(reverse("judges:dashboard", args=[version.pk])).content.decode()
    assert "scored on the same 4 items" in html


def test_k_out_of_range_is_refused_and_the_description_shows_rule_and_k(client_for, two_runs):
    version, _, _, alpha, beta = two_runs
    client = client_for("ml_engineer")
    url = reverse("judges:dashboard-ensemble", args=[version.pk])
    refused = client.get(url, {"judge": [alpha.pk, beta.pk], "rule": "k_of_n", "k": "3"}).content.decode()
    assert "k must be between 1 and 2" in refused and "ensemble-description" not in refused
    assert "whole number" in client.get(url, {"judge": [alpha.pk], "rule": "k_of_n", "k": "x"}).content.decode()
    scored = client.get(url, {"judge": [alpha.pk, beta.pk], "rule": "k_of_n", "k": "2"}).content.decode()
    assert "at least 2 of 2 reject (k_of_n, k=2)" in scored
    majority = client.get(url, {"judge": [alpha.pk, beta.pk], "rule": "majority"}).content.decode()
    assert "(majority, k=2)" in majority
