from probes.templatetags.probes_tags import result_cell


def test_float_noise_from_sqlite_sums_is_trimmed():
    assert result_cell(83121.04999999994) == "83121.05"


def test_null_is_shown_as_null_not_as_none():
    assert "NULL" in result_cell(None)


def test_other_values_pass_through():
    assert result_cell("Quebec") == "Quebec"
    assert result_cell(12) == 12
