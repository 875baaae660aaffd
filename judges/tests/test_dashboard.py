"""The comparison dashboard: permissions, the numbers it shows, charts and drill-downs."""

import json

import pytest
from django.urls import reverse

from judges.models import Verdict
from judges.report import build_report
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from tests.support.access import admitted

pytestmark = pytest.mark.django_db
ALL_USERS = ["labeller", "analyst", "ml_engineer", "admin", "outsider"]
ALLOWED = {"ml_engineer", "admin"}


@pytest.fixture
def version():
    """3 wrong + 3 correct items, three judges (one simulated) in one completed run."""
    version = make_gold_set("dash", labels(3, 3))
    run = make_run(version, label="first")
    R, A = "reject", "accept"
    add_verdicts(run, make_judge_version("alpha"), [R, A, A, R, A, A], cost="0.05", latency=1000)
    add_verdicts(run, make_judge_version("beta", simulated=True), [A, R, A, A, A, A], cost="0.02", latency=500)
    add_verdicts(
        run, make_judge_version("gamma"), [R, R, A, A, A, A], cost="0.09", latency=2000, reasons={0: "fans out orders"}
    )
    return version


def pages(version):
    item = version.items.order_by("query__external_id").first().query_id
    ids = "&".join(f"judge={jv}" for jv in version.calibration_runs.first().judge_versions.values_list("pk", flat=True))
    return [
        reverse("judges:dashboard-index"),
        reverse("judges:dashboard", args=[version.pk]),
        reverse("judges:dashboard-report-json", args=[version.pk]),
        reverse("judges:dashboard-ensemble", args=[version.pk]) + f"?{ids}&rule=any",
        reverse("judges:dashboard-missed", args=[version.pk]) + f"?{ids}",
        reverse("judges:dashboard-item", args=[version.pk, item]),
    ]


def test_anonymous_visitors_are_sent_to_login(client, version):
    for url in pages(version):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("who", ALL_USERS)
def test_only_ml_engineers_and_admins_open_the_dashboard(client, role_users, version, who):
    client.force_login(role_users[who])
    for url in pages(version):
        response = client.get(url)
        if who in ALLOWED:
            assert admitted(response), url
        else:
            assert response.status_code == 403, url


def test_index_opens_the_version_with_the_latest_completed_run(client_for, version):
    response = client_for("ml_engineer").get(reverse("judges:dashboard-index"))
    assert response.status_code == 302
    assert response["Location"] == reverse("judges:dashboard", args=[version.pk])


def test_index_keeps_the_chosen_options(client_for, version):
    response = client_for("ml_engineer").get(reverse("judges:dashboard-index"), {"fr_ceiling": "0.15"})
    assert response["Location"] == reverse("judges:dashboard", args=[version.pk]) + "?fr_ceiling=0.15"


def test_index_without_runs_explains_how_to_start(client_for):
    response = client_for("ml_engineer").get(reverse("judges:dashboard-index"))
    assert response.status_code == 200
    assert "import_verdicts" in response.content.decode()


def test_dashboard_shows_the_report_numbers_with_intervals_and_badges(client_for, version):
    html = client_for("ml_engineer").get(reverse("judges:dashboard", args=[version.pk])).content.decode()
    report = build_report(gold_set_version=version)
    alpha = report["judges"][0]
    assert f"{alpha['catch_rate']:.3f}" in html
    low, high = alpha["catch_rate_ci95"]
    assert f"[{low:.3f}–{high:.3f}]" in html
    assert 'class="badge sim">simulated' in html
    assert html.count('<svg role="img"') == 7  # two heatmaps, UpSet, scatter, error classes, two trends
    assert "Pareto" in html


def test_heatmap_columns_are_numbered_like_its_rows(client_for, version):
    html = client_for("ml_engineer").get(reverse("judges:dashboard", args=[version.pk])).content.decode()
    judges = build_report(gold_set_version=version)["judges"]
    for number in range(1, len(judges) + 1):
        assert html.count(f'text-anchor="middle" class="muted">{number}</text>') == 2  # both heatmaps
        assert html.count(f'dominant-baseline="middle">{number}. ') == 2


def test_json_download_is_the_report(client_for, version):
    response = client_for("ml_engineer").get(
        reverse("judges:dashboard-report-json", args=[version.pk]) + "?generation_cost=0.01&baseline=alpha:1"
    )
    assert response["Content-Disposition"].startswith("attachment")
    report = build_report(gold_set_version=version, generation_cost_usd=0.01, baseline="alpha:1")
    expected = json.loads(json.dumps(report))
    assert json.loads(response.content) == expected


def test_ensemble_explorer_scores_the_chosen_judges_and_rule(client_for, version):
    run = version.calibration_runs.first()
    data_ids = list(run.judge_versions.order_by("judge__name").values_list("pk", flat=True))
    url = reverse("judges:dashboard-ensemble", args=[version.pk])
    html = client_for("ml_engineer").get(url, {"judge": data_ids[:2], "rule": "any"}).content.decode()
    # alpha + beta with "any": catch items 0 and 1 of 3 wrong; false-reject item 3 of 3 correct.
    assert "alpha v1 + beta v1" in html
    assert "0.667" in html and "0.333" in html
    assert "Marginal value" in html and "gamma v1" in html


def test_ensemble_explorer_explains_a_bad_request(client_for, version):
    url = reverse("judges:dashboard-ensemble", args=[version.pk])
    assert "Pick at least one judge" in client_for("ml_engineer").get(url, {"rule": "any"}).content.decode()
    assert "Unknown rule" in client_for("ml_engineer").get(url, {"rule": "vote"}).content.decode()


def test_clicking_a_heatmap_cell_lists_wrong_items_both_judges_miss(client_for, version):
    ids = dict(version.calibration_runs.first().judge_versions.values_list("judge__name", "pk"))
    url = reverse("judges:dashboard-missed", args=[version.pk])
    html = client_for("ml_engineer").get(url, {"judge": [ids["alpha"], ids["beta"]]}).content.decode()
    # alpha misses q001, q002; beta misses q000, q002: both miss only q002.
    assert "missed by all of" in html and "over 1 item" in html
    assert "q002" in html and "q001" not in html


def test_upset_column_lists_items_missed_by_exactly_that_set(client_for, version):
    ids = dict(version.calibration_runs.first().judge_versions.values_list("judge__name", "pk"))
    url = reverse("judges:dashboard-missed", args=[version.pk])
    html = client_for("ml_engineer").get(url, {"judge": [ids["beta"]], "exact": "1"}).content.decode()
    assert "q000" in html and "q002" not in html


def test_item_drill_down_shows_every_judges_verdict_and_reason(client_for, version):
    item = version.items.get(query__external_id="q000")
    html = client_for("ml_engineer").get(reverse("judges:dashboard-item", args=[version.pk, item.query_id])).content
    html = html.decode()
    for name in ("alpha v1", "beta v1", "gamma v1"):
        assert name in html
    assert "fans out orders" in html


def test_item_outside_the_version_is_not_found(client_for, version):
    other = make_gold_set("elsewhere", labels(1, 0))
    query_id = other.items.first().query_id
    response = client_for("ml_engineer").get(reverse("judges:dashboard-item", args=[version.pk, query_id]))
    assert response.status_code == 404


@pytest.mark.parametrize("rule", ["majority", "k_of_n", "stacked"])
def test_ensemble_explorer_scores_every_rule(client_for, version, rule):
    ids = list(version.calibration_runs.first().judge_versions.values_list("pk", flat=True))
    url = reverse("judges:dashboard-ensemble", args=[version.pk])
    response = client_for("ml_engineer").get(url, {"judge": ids, "rule": rule, "k": "2"})
    html = response.content.decode()
    assert response.status_code == 200
    assert f'<span class="badge">{rule}' in html
    assert 'class="error"' not in html


def test_a_judge_whose_verdicts_are_of_both_kinds_is_shown_as_mixed(client_for, version):
    def beta():
        return next(j for j in build_report(gold_set_version=version)["judges"] if j["name"] == "beta")

    assert beta()["simulation"] == "simulated"
    # One verdict made against a real vendor: the badge follows the verdicts, not the version.
    one = Verdict.objects.filter(judge_version_id=beta()["judge_version_id"]).first()
    Verdict.objects.filter(pk=one.pk).update(simulated=False)
    entry = beta()
    assert entry["simulation"] == "mixed"
    assert entry["simulated"] is False
    assert entry["simulated_verdicts"] == entry["verdicts"] - 1
    html = client_for("ml_engineer").get(reverse("judges:dashboard", args=[version.pk])).content.decode()
    assert 'class="badge sim" title="' in html and ">mixed</span>" in html
