"""A Pareto point's label is its whole name, wrapped at " + " (else at spaces), inside the chart."""

from judges.charts import POINT_LABEL_CHARS, POINT_LABEL_TOP, ensemble_scatter, label_lines

LONG = "sim-claude-judge v1 + sim-gpt-judge v1 + sim-llama-judge v1 (majority)"


def test_a_long_ensemble_name_wraps_at_its_plus_signs_and_loses_nothing():
    lines = label_lines(LONG)
    assert lines == ["sim-claude-judge v1 +", "sim-gpt-judge v1 +", "sim-llama-judge v1 (majority)"]
    assert all(len(line) <= POINT_LABEL_CHARS for line in lines)


def test_a_name_without_spaces_to_break_at_is_broken_but_kept_whole():
    name = "a" * 80 + " v1 (single)"
    lines = label_lines(name)
    assert "".join(lines).replace(" ", "") == name.replace(" ", "")
    assert all(len(line) <= POINT_LABEL_CHARS for line in lines)


def test_a_short_name_stays_on_one_line():
    assert label_lines("cheap v1 + keen v1 (any)") == ["cheap v1 + keen v1 (any)"]


def test_a_label_that_would_leave_the_top_goes_below_its_point():
    point = {
        "members": ["a", "b", "c"],
        "rule": "majority",
        "cost_per_accepted_usd": 0.01,
        "catch_rate": 1.0,  # at the top of the chart
        "false_reject_rate": 0.0,
        "pareto": True,
        "over_ceiling": False,
    }
    (placed,) = ensemble_scatter([{**point, "members": LONG.removesuffix(" (majority)").split(" + ")}])["points"]
    assert len(placed["label_lines"]) == 3
    assert placed["label_y"] > placed["cy"] and placed["label_y"] >= POINT_LABEL_TOP
