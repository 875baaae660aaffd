"""The ladder table: cumulative catch and false reject rung by rung, and each rung's marginal catch."""

import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from judges.draws import draws_from_decisions
from judges.ensembles import ensemble_metrics
from judges.ladder import ladder_table, rung_columns
from judges.metrics import ACCEPT as A
from judges.metrics import MISSING as M
from judges.metrics import REJECT as R
from judges.tests.calibration_builders import add_verdicts, make_gold_set, make_judge_version, make_run

RUNGS = ["parse", "plan", "run", "non_empty"]
# Three wrong items, three correct, two draws per rung (rungs are deterministic: both draws
# agree, except non_empty on the third wrong item); the last correct item is unjudged by
# non_empty (an error).
DECISIONS = np.array(
    [
        [[R, R], [R, R], [R, R], [R, R]],  # wrong, caught at parse
        [[A, A], [A, A], [R, R], [R, R]],  # wrong, caught at run
        [[A, A], [A, A], [A, A], [R, A]],  # wrong, non_empty rejects one draw in two
        [[A, A], [A, A], [A, A], [A, A]],  # correct
        [[A, A], [R, R], [R, R], [R, R]],  # correct, falsely rejected from plan up
        [[A, A], [A, A], [A, A], [M, M]],  # correct, left out: not every rung judged it
    ]
)
DRAWS = draws_from_decisions(DECISIONS)
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
    assert_table(ladder_table(rungs=RUNGS, draws=DRAWS, columns=[0, 1, 2, 3], is_wrong=IS_WRONG), EXPECTED)


def test_each_row_is_the_any_ensemble_of_the_rungs_so_far():
    table = ladder_table(rungs=RUNGS, draws=DRAWS, columns=[0, 1, 2, 3], is_wrong=IS_WRONG)
    kept = np.array([True] * 5 + [False])
    for depth, row in enumerate(table, start=1):
        union = ensemble_metrics(DRAWS, IS_WRONG, list(range(depth)), "any", items=kept)
        assert (row["catch"], row["false_reject"]) == (union["catch_rate"], union["false_reject_rate"])


def test_rungs_that_are_not_nested_combine_on_aligned_draws_not_as_if_independent():
    # Two rungs each rejecting one draw in two of the one wrong item, on different draws:
    # every deployed draw is caught (1.0), where independence would say 1 - 0.5 * 0.5.
    apart = draws_from_decisions(np.array([[[R, A], [A, R]], [[A, A], [A, A]]]))
    table = ladder_table(rungs=["parse", "plan"], draws=apart, columns=[0, 1], is_wrong=np.array([1, 0]))
    assert [row["marginal_catch"] for row in table] == [0.5, 0.5]
    # On the same draw they add nothing to each other.
    together = draws_from_decisions(np.array([[[R, A], [R, A]], [[A, A], [A, A]]]))
    table = ladder_table(rungs=["parse", "plan"], draws=together, columns=[0, 1], is_wrong=np.array([1, 0]))
    assert [row["marginal_catch"] for row in table] == [0.5, 0.0]


def test_a_table_without_wrong_items_has_no_catch():
    table = ladder_table(
        rungs=["parse"], draws=draws_from_decisions(np.array([[[A]]])), columns=[0], is_wrong=np.array([False])
    )
    assert table == [{"rung": "parse", "catch": None, "false_reject": 0.0, "marginal_catch": None}]


def test_one_column_per_rung_the_latest_version_in_ladder_order():
    chosen = rung_columns({0: ("run", 1), 1: ("parse", 1), 2: ("run", 2), 3: ("vibes", 1)})
    assert chosen == [("parse", 1), ("run", 2)]


@pytest.mark.django_db
def test_judge_report_json_carries_the_ladder_of_the_ladder_judges():
    version = make_gold_set("ladder", [("wrong", "syntax")] * 3 + [("correct", "")] * 3)
    run = make_run(version)
    codes = {R: "reject", A: "accept", M: None}
    for column, rung in enumerate(RUNGS):
        judge = make_judge_version(f"ladder-{rung}", backend="ladder", config={"rung": rung})
        for repeat in (0, 1):
            add_verdicts(run, judge, [codes[code] for code in DECISIONS[:, column, repeat]], repeat=repeat)
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
