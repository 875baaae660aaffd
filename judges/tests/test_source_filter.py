"""The report's `source` selection: catch rates on organic items, mutated items, or both."""

import pytest

from judges.calibration_data import load_calibration
from judges.report import build_report
from judges.run_selection import RunSelection, run_selection_parse
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from labelling.models import Query, QueryOrigin

pytestmark = pytest.mark.django_db


@pytest.fixture
def version():
    """Six wrong items (the last three mutated) and two correct; the judge catches only the mutated ones."""
    version = make_gold_set("mixed", labels(wrong=6, correct=2))
    Query.objects.filter(external_id__in=["q003", "q004", "q005"]).update(origin=QueryOrigin.MUTATED)
    run = make_run(version)
    decisions = ["accept", "accept", "accept", "reject", "reject", "reject", "accept", "accept"]
    add_verdicts(run, make_judge_version("judge"), decisions)
    return version


@pytest.mark.parametrize(
    ("source", "items", "catch_rate"), [("both", 8, 0.5), ("organic", 5, 0.0), ("mutated", 3, 1.0)]
)
def test_the_catch_rate_counts_only_the_items_of_the_chosen_source(version, source, items, catch_rate):
    selection = run_selection_parse(source=source)
    assert len(load_calibration(gold_set_version=version, selection=selection).query_ids) == items
    report = build_report(gold_set_version=version, selection=selection)
    assert report["judges"][0]["catch_rate"] == pytest.approx(catch_rate)
    assert report["run_selection"]["source"] == source


def test_an_unknown_source_is_refused_and_both_is_the_default():
    with pytest.raises(ValueError, match="source must be one of"):
        run_selection_parse(source="synthetic")
    assert run_selection_parse().source == RunSelection().source == "both"
    assert "mutated items only" in run_selection_parse(source="mutated").rule


def test_the_dashboard_reads_the_source_from_the_query_string(version, client_for):
    page = client_for("ml_engineer").get(f"/judges/dashboard/{version.pk}/?source=mutated").content.decode()
    assert "3 items (3 wrong, 0 correct)" in page
    assert client_for("ml_engineer").get(f"/judges/dashboard/{version.pk}/?source=nope").status_code == 400


def test_every_column_of_the_judges_table_obeys_the_source(version, client_for):
    # Verdicts and $/verdict once counted the verdicts on every item of the runs.
    judge = build_report(gold_set_version=version, selection=run_selection_parse(source="organic"))["judges"][0]
    assert (judge["verdicts"], judge["items"], judge["errors"]) == (5, 5, 0)
    page = client_for("ml_engineer").get(f"/judges/dashboard/{version.pk}/?source=mutated").content.decode()
    assert 'data-figure="verdicts" data-value="3"' in page
    assert 'data-figure="items" data-value="3"' in page


def test_verdicts_on_items_outside_the_report_are_not_counted():
    # An unsure item is no row of the report, so its verdict is none of the judge's verdicts there.
    version = make_gold_set("with-unsure", [("wrong", "join_fanout"), ("correct", ""), ("unsure", "")])
    add_verdicts(make_run(version), make_judge_version("judge"), ["reject", "accept", "reject"], cost="0.02")
    (judge,) = build_report(gold_set_version=version)["judges"]
    assert (judge["verdicts"], judge["items"]) == (2, 2)
    assert judge["cost_per_verdict_usd"] == pytest.approx(0.02)
