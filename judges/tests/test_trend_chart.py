"""The confusion-matrix counts and the trend chart's geometry, against tables worked by hand."""

import datetime

import numpy as np

from judges import confusion, metrics
from judges.charts import CHART_HEIGHT, CHART_WIDTH, MARGIN
from judges.trend_chart import trend_chart

R, A, E, M = metrics.REJECT, metrics.ACCEPT, metrics.ERROR, metrics.MISSING
DAY = datetime.datetime(2026, 11, 1, 12, 0, tzinfo=datetime.UTC)


def test_majority_outcomes_follow_the_tie_rule_and_errors_decide_nothing():
    # One judge, three draws per item.
    decisions = np.array(
        [
            [[R, R, A]],  # 2 of 3 reject: reject
            [[R, A, M]],  # a tie: not a majority, accept
            [[R, E, E]],  # errors do not vote: 1 of 1 rejects
            [[E, E, M]],  # only errors: error
            [[M, M, M]],  # no verdict: counted nowhere
            [[A, A, R]],  # accept
        ]
    )
    outcomes = confusion.majority_outcomes(metrics.counts_from_decisions(decisions), 0)
    names = {code: name for name, code in zip(("reject", "accept", "error", "none"), (0, 1, 2, -1), strict=True)}
    assert (confusion.OUTCOME_REJECT, confusion.OUTCOME_ACCEPT, confusion.OUTCOME_ERROR) == (0, 1, 2)
    assert confusion.OUTCOME_NONE == -1
    assert [names[code] for code in outcomes.tolist()] == ["reject", "accept", "reject", "error", "none", "accept"]


def test_confusion_matrix_counts_a_hand_computed_table():
    reject, accept, error, none = (
        confusion.OUTCOME_REJECT,
        confusion.OUTCOME_ACCEPT,
        confusion.OUTCOME_ERROR,
        confusion.OUTCOME_NONE,
    )
    outcomes = np.array([reject, reject, accept, error, none, reject, accept, accept, error, none])
    is_wrong = np.array([True, True, True, True, True, False, False, False, False, False])
    #            reject accept error
    # wrong        2      1      1     (one wrong item has no verdict)
    # correct      1      2      1
    assert confusion.confusion_matrix(outcomes, is_wrong).tolist() == [[2, 1, 1], [1, 2, 1]]


def point(run, days, catch, false_reject=0.1, judge="alpha v1"):
    return {
        "run": run,
        "run_label": f"run {run}",
        "at": DAY + datetime.timedelta(days=days),
        "judge": judge,
        "judge_version_id": 1,
        "catch_rate": catch,
        "false_reject_rate": false_reject,
    }


def test_trend_points_sit_at_their_run_time_and_rate():
    series = [
        {"name": "alpha", "colour": "#000", "points": [point(2, 10, 0.5), point(1, 0, 1.0), point(3, 5, 0.0)]},
        {"name": "beta", "colour": "#111", "points": [point(3, 5, 0.25)]},
    ]
    chart = trend_chart(series, metric="catch_rate")
    left, right = MARGIN + 20, CHART_WIDTH - 40
    top, bottom = 24, CHART_HEIGHT - MARGIN - 14
    alpha, beta = chart["lines"]
    # In time order: run 1 (day 0) at the left edge, run 3 (day 5) midway, run 2 (day 10) at the right.
    assert [p["run"] for p in alpha["points"]] == [1, 3, 2]
    assert [p["cx"] for p in alpha["points"]] == [left, round((left + right) / 2, 1), right]
    assert [p["cy"] for p in alpha["points"]] == [top, bottom, round((top + bottom) / 2, 1)]
    assert alpha["polyline"] == " ".join(f"{p['cx']},{p['cy']}" for p in alpha["points"])
    # One run is a point, not a line.
    assert len(beta["points"]) == 1 and beta["polyline"] == ""
    assert beta["points"][0]["cy"] == round(bottom - 0.25 * (bottom - top), 1)
    assert "run 3" in beta["points"][0]["title"] and "25%" in beta["points"][0]["title"]
    assert [t["run"] for t in chart["ticks_x"]] == [1, 3, 2]
    assert [t["text"] for t in chart["ticks_x"]] == ["run 1", "run 3", "run 2"]


def test_trend_chart_plots_the_false_reject_rate_and_skips_missing_values():
    series = [{"name": "alpha", "colour": "#000", "points": [point(1, 0, 0.5, None), point(2, 1, 0.5, 0.5)]}]
    chart = trend_chart(series, metric="false_reject_rate")
    (line,) = chart["lines"]
    assert [p["run"] for p in line["points"]] == [2]
    assert line["polyline"] == ""
    assert chart["title"] == "False-reject rate"


def test_one_run_sits_in_the_middle_and_crowded_run_labels_are_dropped():
    alone = trend_chart([{"name": "a", "colour": "#000", "points": [point(1, 0, 0.5)]}], metric="catch_rate")
    assert alone["lines"][0]["points"][0]["cx"] == round((MARGIN + 20 + CHART_WIDTH - 40) / 2, 1)
    minutes = [dict(point(run, 0, 0.5), at=DAY + datetime.timedelta(minutes=run)) for run in (1, 2)]
    far = dict(point(3, 0, 0.5), at=DAY + datetime.timedelta(days=1))
    crowded = trend_chart([{"name": "a", "colour": "#000", "points": [*minutes, far]}], metric="catch_rate")
    assert [t["text"] for t in crowded["ticks_x"]] == ["run 1", "", "run 3"]


def test_no_runs_make_an_empty_chart():
    chart = trend_chart([], metric="catch_rate")
    assert chart["lines"] == [] and chart["ticks_x"] == []
