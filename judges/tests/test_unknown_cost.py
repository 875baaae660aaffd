"""A judge imported without costs has an unknown cost everywhere: never $0, never a crash.

Imported verdicts often carry no cost and no latency (`cost_usd` and `latency_ms` are
NULL). Before, the loop lab and the judge page failed on them (500), and the ensembles chart
and the loop lab priced them at $0, which put such a judge on the Pareto frontier.
"""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from judges.calibration_data import load_calibration
from judges.charts import ensemble_scatter
from judges.models import Judge, Verdict
from judges.report import build_report, ensembles_up_to, marginal_values
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run

pytestmark = pytest.mark.django_db
WRONG, CORRECT = 10, 30


@pytest.fixture
def version(tmp_path):
    """A priced judge and an imported one with neither costs nor latencies, on the same items."""
    version = make_gold_set("unpriced", labels(WRONG, CORRECT))
    run = make_run(version)
    add_verdicts(run, make_judge_version("priced"), ["reject"] * 6 + ["accept"] * 34, cost="0.01", latency=900.0)
    decisions = ["reject"] * 9 + ["accept"] + ["reject"] * 2 + ["accept"] * 28
    lines = [
        json.dumps({"query_id": f"q{i:03d}", "judge": "imported", "run": "batch", "decision": d})
        for i, d in enumerate(decisions)
    ]
    path = tmp_path / "verdicts.jsonl"
    path.write_text("\n".join(lines) + "\n")
    call_command("import_verdicts", str(path), "--gold-set", "unpriced", stdout=StringIO())
    assert not Verdict.objects.filter(judge_version__judge__name="imported", cost_usd__isnull=False).exists()
    return version


def test_the_report_says_unknown_not_zero(version):
    imported = next(j for j in build_report(gold_set_version=version)["judges"] if j["name"] == "imported")
    assert imported["cost_per_verdict_usd"] is None and imported["cost_per_accepted_usd"] is None
    assert imported["catch_rate"] == pytest.approx(0.9)


def test_an_ensemble_with_the_imported_judge_is_left_off_the_frontier_with_a_note(version):
    data = load_calibration(gold_set_version=version)
    points = ensembles_up_to(data, false_reject_ceiling=1.0)
    with_imported = [p for p in points if any(m.startswith("imported") for m in p["members"])]
    assert with_imported and all(p["cost_per_accepted_usd"] is None for p in with_imported)
    assert all(not p["pareto"] and "no measured cost" in p["cost_note"] for p in with_imported)
    # It catches more than the priced judge: read as $0 it would have been the whole frontier.
    assert [p["members"] for p in points if p["pareto"]] == [["priced v1"]]
    scatter = ensemble_scatter(points)
    named = {f"{' + '.join(p['members'])} ({p['rule']})" for p in with_imported}
    assert {p["name"] for p in scatter["left_off"]} == named
    assert all(p["cost_per_accepted_usd"] is not None for p in scatter["points"])


def test_marginal_value_of_the_imported_judge_is_unknown(version):
    data = load_calibration(gold_set_version=version)
    priced = next(i for i, judge in enumerate(data.judges) if judge.name == "priced")
    (row,) = marginal_values(data, [priced], generation_cost_usd=0.001)
    assert row["extra_catch_rate"] > 0
    assert row["extra_cost_per_accepted_usd"] is None and row["catches_per_dollar"] is None
    assert "imported" in row["cost_note"]


def test_the_dashboard_and_its_explorer_show_unknown_costs_as_unknown(version, client_for):
    client = client_for("ml_engineer")
    page = client.get(reverse("judges:dashboard", args=[version.pk])).content.decode()
    assert 'id="pareto-left-off"' in page and "imported v1 (single)" in page
    imported = Judge.objects.get(name="imported").versions.get()
    explorer = client.get(reverse("judges:dashboard-ensemble", args=[version.pk]), {"judge": [imported.pk]})
    body = explorer.content.decode()
    assert explorer.status_code == 200 and 'id="ensemble-cost-note"' in body
    assert explorer.context["result"]["cost_per_attempt_usd"] is None and "0.0000" not in body


def test_the_judge_page_of_the_imported_judge_opens_and_shows_no_price(version, client_for):
    judge = Judge.objects.get(name="imported")
    response = client_for("ml_engineer").get(reverse("judges:judge_detail", args=[judge.pk]))
    assert response.status_code == 200
    body = response.content.decode()
    assert "not measured" in body and "$0" not in body


def test_the_loop_lab_takes_the_imported_judge_and_leaves_its_costs_and_latency_unknown(version, client_for):
    response = client_for("ml_engineer").get(
        reverse("loops:lab"), {"version": version.pk, "checker": ["imported:1", "priced:1"]}
    )
    assert response.status_code == 200
    imported, priced = response.context["report"]["checkers"][1:]
    assert imported["check_cost_usd"] is None
    assert imported["cost_per_accepted_usd"] == {"value": None, "ci95": None}
    assert imported["latency_ms_p50"] == {"value": None, "ci95": None}
    assert imported["wrong_shipped_per_1000"]["value"] is not None
    assert any("cost unknown" in note for note in imported["notes"])
    assert priced["cost_per_accepted_usd"]["value"] > 0 and not priced["notes"]
    assert "cost unknown: imported v1" in response.content.decode()


def test_loop_model_prices_an_ensemble_with_the_imported_judge_as_unknown(version):
    out = StringIO()
    call_command("loop_model", "--gold-set", "unpriced", "--checker", "imported+priced", "--format", "json", stdout=out)
    checker = json.loads(out.getvalue())["checkers"][1]
    assert checker["check_cost_usd"] is None and checker["cost_per_accepted_usd"]["value"] is None


def test_an_imported_verdict_without_cost_opens_and_says_not_measured(version, client_for):
    verdict = Verdict.objects.filter(judge_version__judge__name="imported").first()
    response = client_for("ml_engineer").get(reverse("judges:verdict_detail", args=[verdict.pk]))
    assert response.status_code == 200 and "not measured" in response.content.decode()
    item = client_for("ml_engineer").get(reverse("judges:dashboard-item", args=[version.pk, verdict.query_id]))
    assert item.status_code == 200 and "$None" not in item.content.decode()
