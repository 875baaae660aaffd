"""The ladder table: cumulative catch and false reject rung by rung, and each rung's marginal catch."""

import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from judges.ladder import cumulative_reject, ladder_table, rung_columns
from judges.tests.calibration_builders import add_verdicts, make_gold_set, make_judge_version, make_run

NAN = np.nan
RUNGS = ["parse", "plan", "run", "non_empty"]
# Three wrong items, three correct; the last correct item is unjudged by non_empty (an error).
PROBS = np.array(
    [
        [1, 1, 1, 1],  # wrong, caught at parse
        [0, 0, 1, 1],  # wrong, caught at run
        [0, 0, 0, 0.5],  # wrong, non_empty rejects one draw in two
        [0, 0, 0, 0],  # correct
        [0, 1, 1, 1],  # correct, falsely rejected from plan up
        [0, 0, 0, NAN],  # correct, left out: not every rung judged it
    ]
)
IS_WRONG = np.array([True, True, True, False, False, False])
# By hand: catch over the 3 wrong items, false reject over the 2 correct ones kept.
EXPECTED = [
    {"rung": "parse", "catch": 1 / 3, "false_reject": 0.0, "marginal_catch": 1 / 3},
    {"rung": "plan", "catch": 1 / 3, "false_reject": 1 / 2, "marginal_catch": 0.0},
    {"rung": "run", "catch": 2 / 3, "false_reject": 1 / 2, "marginal_catch": 1 / 3},
    {"rung": "non_empty", "catch": 2.5 / 3, "false_reject": 1 / 2, "marginal_catch": 0.5 / 3},
]


def assert_table(actual, expected):
    assert [row["rung"] for row in actual] == [row["rung"] for row in expected]
    for got, want in zip(actual, expected, strict=True):
        assert set(got) == {"rung", "catch", "false_reject", "marginal_catch"}
        for key in ("catch", "false_reject", "marginal_catch"):
            assert got[key] == pytest.approx(want[key]), (got["rung"], key)


def test_the_table_matches_the_hand_computed_one():
    assert_table(ladder_table(rungs=RUNGS, probs=PROBS, is_wrong=IS_WRONG), EXPECTED)


def test_rungs_that_are_not_nested_combine_as_a_union():
    # Two rungs each rejecting half the draws of the one wrong item: together 1 - 0.5 * 0.5.
    assert cumulative_reject(np.array([[0.5, 0.5]]))[0].tolist() == [0.5, 0.75]
    table = ladder_table(rungs=["parse", "plan"], probs=np.array([[0.5, 0.5], [0, 0]]), is_wrong=np.array([1, 0]))
    assert [row["marginal_catch"] for row in table] == [0.5, 0.25]


def test_a_table_without_wrong_items_has_no_catch():
    table = ladder_table(rungs=["parse"], probs=np.array([[0.0]]), is_wrong=np.array([False]))
    assert table == [{"rung": "parse", "catch": None, "false_reject": 0.0, "marginal_catch": None}]


def test_one_column_per_rung_the_latest_version_in_ladder_order():
    chosen = rung_columns({0: ("run", 1), 1: ("parse", 1), 2: ("run", 2), 3: ("vibes", 1)})
    assert chosen == [("parse", 1), ("run", 2)]


@pytest.mark.django_db
def test_judge_report_json_carries_the_ladder_of_the_ladder_judges():
    version = make_gold_set("ladder", [("wrong", "syntax")] * 3 + [("correct", "")] * 3)
    run = make_run(version)
    codes = {1: "reject", 0: "accept"}
    for column, rung in enumerate(RUNGS):
        decisions = []
        for row in PROBS[:, column]:
            decisions.append(None if np.isnan(row) else codes.get(row, "reject"))
        judge = make_judge_version(f"ladder-{rung}", backend="ladder", config={"rung": rung})
        add_verdicts(run, judge, decisions)
        if rung == "non_empty":  # the 0.5: a second draw that accepts the third wrong item
            add_verdicts(run, judge, [None, None, "accept", None, None, None], repeat=1)
    add_verdicts(run, make_judge_version("llm"), ["reject"] * 6)  # not a rung: left out of the ladder
    out = io.StringIO()
    call_command("judge_report", "--gold-set", "ladder", "--format", "json", stdout=out)
    assert_table(json.loads(out.getvalue())["ladder"], EXPECTED)


@pytest.mark.django_db
def test_judge_report_table_prints_the_ladder_after_the_judges():
    version = make_gold_set("ladder-table", [("wrong", "syntax"), ("correct", "")])
    run = make_run(version)
    add_verdicts(
        run, make_judge_version("rung-parse", backend="ladder", config={"rung": "parse"}), ["reject", "accept"]
    )
    out = io.StringIO()
    call_command("judge_report", "--gold-set", "ladder-table", "--format", "table", stdout=out)
    assert "rung  cumulative_catch  cumulative_false_reject  marginal_catch" in out.getvalue()
    assert "parse  100.0%  0.0%  100.0%" in out.getvalue()
