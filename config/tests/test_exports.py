"""config.exports: every CSV Docket writes neutralises formula cells (OWASP CSV injection)."""

import csv
import io

import pytest

from config.exports import FORMULA_TRIGGERS, csv_text, neutralise_cell, unneutralise_cell


@pytest.mark.parametrize("first", FORMULA_TRIGGERS)
def test_a_text_cell_starting_with_a_formula_character_is_prefixed_with_a_quote(first):
    cell = f'{first}HYPERLINK("http://example.invalid")'
    assert neutralise_cell(cell) == "'" + cell
    assert unneutralise_cell(neutralise_cell(cell)) == cell


def test_numbers_stay_numbers_and_plain_text_is_untouched():
    assert neutralise_cell(-0.5) == -0.5 and neutralise_cell(3) == 3
    assert neutralise_cell("SELECT 1") == "SELECT 1" and neutralise_cell(None) == ""
    assert neutralise_cell(True) == "true" and neutralise_cell(float("nan")) == ""
    assert unneutralise_cell("'quoted") == "'quoted"  # a quote before ordinary text is data


def test_csv_text_quotes_text_and_reads_back_to_the_neutralised_cells():
    text = csv_text(["name", "value"], [["=1+1", 2], ["@SUM(A1)", -3.5], ["\tcmd", None]])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["name", "value"], ["'=1+1", "2"], ["'@SUM(A1)", "-3.5"], ["'\tcmd", ""]]
    assert text.splitlines()[1] == '"\'=1+1",2'
