"""The dashboard's tables download as CSV and JSON with the page's numbers, cells neutralised."""

import csv
import io
import json

import pytest
from django.urls import reverse

from judges.calibration_data import load_calibration
from judges.report import build_report, ensembles_up_to
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def version():
    version = make_gold_set("exports", labels(3, 3))
    run = make_run(version)
    add_verdicts(run, make_judge_version("alpha"), ["reject", "reject", "accept", "accept", "reject", "accept"])
    hostile = make_judge_version("beta")
    hostile.judge.display_name = '=HYPERLINK("http://x.invalid")'
    hostile.judge.save()
    add_verdicts(run, hostile, ["reject", "accept", "accept", "accept", "accept", "accept"], cost="0.01")
    return version


def url(version, table, fmt):
    return reverse("judges:dashboard-table-export", args=[version.pk, table, fmt])


def test_the_judges_table_downloads_with_the_report_s_numbers(client, role_users, version):
    client.force_login(role_users["ml_engineer"])
    report = build_report(gold_set_version=version)
    data = json.loads(b"".join(client.get(url(version, "judges", "json")).streaming_content))
    assert data["judges"] == json.loads(json.dumps(report["judges"]))
    response = client.get(url(version, "judges", "csv"))
    assert response["Content-Disposition"].endswith('-judges.csv"')
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [float(r["catch_rate"]) for r in rows] == [j["catch_rate"] for j in report["judges"]]
    assert rows[0]["name"] == '\'=HYPERLINK("http://x.invalid")'  # neutralised, not a formula


def test_pairs_and_ensembles_download_as_computed_for_the_page(client, role_users, version):
    client.force_login(role_users["ml_engineer"])
    pairs = json.loads(b"".join(client.get(url(version, "pairs", "json")).streaming_content))["pairs"]
    assert pairs == json.loads(json.dumps(build_report(gold_set_version=version)["pairs"]))
    points = ensembles_up_to(load_calibration(gold_set_version=version), false_reject_ceiling=0.2)
    response = client.get(url(version, "ensembles", "csv"))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == len(points)
    assert [float(r["catch_rate"]) for r in rows] == [p["catch_rate"] for p in points]


def test_only_ml_engineers_download_and_unknown_tables_are_404(client, role_users, version):
    client.force_login(role_users["labeller"])
    assert client.get(url(version, "judges", "csv")).status_code == 403
    client.force_login(role_users["ml_engineer"])
    assert client.get(url(version, "verdicts", "csv")).status_code == 404
    assert client.get(url(version, "judges", "xml")).status_code == 404
