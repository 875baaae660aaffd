"""The live error-rate chart's geometry (`judges.charts.estimate_chart`): where each mark lands."""

from types import SimpleNamespace

import pytest

from judges.charts import ESTIMATE_HEIGHT, ESTIMATE_PAD, ESTIMATE_WIDTH, estimate_chart


def snapshot(corrected=None, audit=None, spread=0.02):
    def bounds(value):
        return (None, None) if value is None else (value - spread, value + spread)

    c_low, c_high = bounds(corrected)
    a_low, a_high = bounds(audit)
    return SimpleNamespace(
        corrected_error_rate=corrected,
        corrected_low=c_low,
        corrected_high=c_high,
        audit_error_rate=audit,
        audit_low=a_low,
        audit_high=a_high,
    )


def test_no_measured_point_draws_no_chart():
    assert estimate_chart([]) is None
    assert estimate_chart([snapshot()]) is None


def test_points_span_the_width_and_the_axis_runs_from_zero_to_ten_percent_over_the_highest_bound():
    chart = estimate_chart([snapshot(0.18, 0.20), snapshot(0.21, 0.19)])
    bottom, top_y = ESTIMATE_HEIGHT - ESTIMATE_PAD, ESTIMATE_PAD
    assert chart["zero_y"] == bottom and chart["axis"] == {
        "x1": ESTIMATE_PAD,
        "x2": ESTIMATE_WIDTH - ESTIMATE_PAD,
        "y": bottom,
    }
    corrected, audit = chart["series"]
    # Two snapshots: the first at the left pad, the last at the right one, the series 2 px either side.
    assert [p["cx"] for p in corrected["points"]] == [ESTIMATE_PAD - 2, ESTIMATE_WIDTH - ESTIMATE_PAD - 2]
    assert [p["cx"] for p in audit["points"]] == [ESTIMATE_PAD + 2, ESTIMATE_WIDTH - ESTIMATE_PAD + 2]
    # The highest value or bound is 0.23 (0.21 + 0.02); the axis top is 10% above it.
    highest = 0.23
    assert chart["top_label"]["text"] == "23%"
    assert chart["top_label"]["y"] == pytest.approx(bottom - (bottom - top_y) / 1.1, abs=0.1)
    assert corrected["points"][1]["cy"] == pytest.approx(bottom - (bottom - top_y) * 0.21 / (highest * 1.1), abs=0.1)
    # Each interval is a vertical line through its point, from the low bound down there to the high one up here.
    interval = corrected["intervals"][1]
    assert (
        interval["x"] == corrected["points"][1]["cx"]
        and interval["y_low"] > corrected["points"][1]["cy"] > interval["y_high"]
    )
    assert corrected["line"] == " ".join(f"{p['cx']},{p['cy']}" for p in corrected["points"])


def test_a_series_with_one_point_has_no_line_and_the_axis_is_at_least_five_percent():
    chart = estimate_chart([snapshot(0.01, None, spread=0.0)])
    corrected, audit = chart["series"]
    assert len(corrected["points"]) == 1 and corrected["line"] == "" and audit["points"] == []
    assert chart["top_label"]["text"] == "5%"
