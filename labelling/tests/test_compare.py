from decimal import Decimal

from labelling.compare import compare_result_sets, normalise_value


def test_row_order_does_not_matter():
    result = compare_result_sets(["a", "b"], [(1, "x"), (2, "y")], ["a", "b"], [(2, "y"), (1, "x")])
    assert result.match and result.row_count_a == result.row_count_b == 2


def test_numbers_are_rounded_to_two_decimals_and_strings_case_folded():
    a = [(Decimal("10.004"), "North"), (3, "STRASSE")]
    b = [(10.0, "north"), (3.001, "straße")]
    assert compare_result_sets(["x", "y"], a, ["p", "q"], b).match


def test_a_real_difference_in_value_is_reported_with_the_rows():
    result = compare_result_sets(["n"], [(1,), (2,)], ["n"], [(1,), (3,)])
    assert not result.match
    assert result.only_in_a == [(2.0,)] and result.only_in_b == [(3.0,)]
    assert "different values" in result.summary


def test_duplicate_rows_count_so_fan_out_is_caught():
    result = compare_result_sets(["n"], [(1,), (1,), (2,)], ["n"], [(1,), (2,)])
    assert not result.match
    assert result.row_count_a == 3 and result.row_count_b == 2
    assert result.only_in_a == [(1.0,)] and result.only_in_b == []
    assert "row counts: 3 against 2" in result.summary


def test_a_different_number_of_columns_never_matches():
    result = compare_result_sets(["a"], [], ["a", "b"], [])
    assert not result.match and "1 columns against 2" in result.summary


def test_nulls_and_booleans_keep_their_identity():
    assert normalise_value(None) is None
    assert normalise_value(True) is True
    assert normalise_value(-0.001) == 0.0
    assert not compare_result_sets(["a"], [(None,)], ["a"], [("none",)]).match


def test_only_the_first_few_differing_rows_are_kept():
    result = compare_result_sets(["n"], [(i,) for i in range(100)], ["n"], [])
    assert len(result.only_in_a) == 5 and result.only_in_a[0] == (0.0,)
