"""Answer-free invariants: the declarative form, its field errors, and the pure check."""

import pytest

from labelling.invariants import InvariantsInvalid, invariants_check, invariants_validate

COLUMNS = ["status", "revenue"]
ROWS = [["completed", 120.5], ["shipped", 30]]


def errors_of(invariants) -> dict:
    with pytest.raises(InvariantsInvalid) as caught:
        invariants_validate(invariants=invariants)
    return caught.value.errors


def test_no_invariants_is_an_empty_object():
    assert invariants_validate(invariants=None) == {}
    assert invariants_validate(invariants={}) == {}


def test_a_well_formed_set_of_invariants_is_kept_as_written():
    written = {"columns": 2, "rows": {"min": 1, "max": 5}, "non_negative": ["revenue"], "values_in": {"s": ["a"]}}
    assert invariants_validate(invariants=written) == written


def test_each_bad_field_is_named_with_what_is_expected():
    errors = errors_of(
        {
            "columns": 0,
            "rows": {"min": -1, "max": "5", "most": 3},
            "non_negative": "revenue",
            "values_in": {"status": []},
            "band": [1, 2],
        }
    )
    assert set(errors) == {"columns", "rows.min", "rows.max", "rows.most", "non_negative", "values_in.status", "band"}
    assert "positive integer" in errors["columns"]
    assert "unknown invariant" in errors["band"]


def test_row_bounds_in_the_wrong_order_are_refused():
    assert errors_of({"rows": {"min": 5, "max": 1}}) == {"rows": "min (5) is greater than max (1)"}


def test_a_list_is_not_an_invariants_object():
    assert errors_of([1]) == {"invariants": "must be a JSON object"}


def test_a_result_that_meets_every_invariant_has_no_violation():
    invariants = {"columns": 2, "rows": {"min": 1, "max": 2}, "non_negative": ["REVENUE"]}
    outcome = invariants_check(
        invariants=invariants | {"values_in": {"status": ["completed", "shipped"]}}, columns=COLUMNS, rows=ROWS
    )
    assert outcome.violations == [] and outcome.undecided == []


def test_each_kind_of_break_is_reported_with_its_likely_class():
    invariants = {
        "columns": 3,
        "rows": {"max": 1},
        "non_negative": ["revenue", "cost"],
        "values_in": {"status": ["completed"]},
    }
    rows = [["completed", -4], ["cancelled", 2]]
    outcome = invariants_check(invariants=invariants, columns=COLUMNS, rows=rows)
    kinds = [(v.kind, v.error_class) for v in outcome.violations]
    assert kinds == [
        ("columns", "misread_intent"),
        ("rows_above", "join_fanout"),
        ("non_negative", "wrong_measure"),
        ("missing_column", "misread_intent"),
        ("values_in", "missing_filter"),
    ]
    assert "cancelled" in outcome.violations[-1].message


def test_too_few_rows_points_at_dropped_rows():
    outcome = invariants_check(invariants={"rows": {"min": 3}}, columns=COLUMNS, rows=ROWS)
    assert [(v.kind, v.error_class) for v in outcome.violations] == [("rows_below", "dropped_rows")]


def test_a_cut_result_leaves_an_upper_row_bound_undecided_but_not_a_value_break():
    outcome = invariants_check(
        invariants={"rows": {"max": 5}, "values_in": {"status": ["shipped"]}},
        columns=COLUMNS,
        rows=ROWS,
        truncated=True,
    )
    assert [v.kind for v in outcome.violations] == ["values_in"]
    assert "undecided" in outcome.undecided[0]


def test_null_matches_only_an_allowed_null_and_numbers_match_their_text():
    rows = [[None, 1], ["1", 2]]
    assert (
        invariants_check(invariants={"values_in": {"status": [None, 1]}}, columns=COLUMNS, rows=rows).violations == []
    )
    broken = invariants_check(invariants={"values_in": {"status": ["1"]}}, columns=COLUMNS, rows=rows).violations
    assert broken[0].kind == "values_in"
