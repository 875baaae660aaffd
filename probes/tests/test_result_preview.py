"""The one result preview: first rows and row count written from the statement's parsed tree."""

import sqlglot
from sqlglot import exp

from probes.execution import run_readonly
from probes.preview import first_rows_sql, result_preview_run, row_count_sql


def limit_of(text: str, dialect: str = "sqlite") -> int:
    return int(sqlglot.parse_one(text, read=dialect).args["limit"].expression.name)


def test_the_first_rows_are_a_limit_set_on_the_tree_keeping_the_order():
    text = first_rows_sql("SELECT order_id FROM orders ORDER BY total DESC", "sqlite", 3)
    tree = sqlglot.parse_one(text, read="sqlite")
    assert limit_of(text) == 3
    assert tree.args["order"].sql() == "ORDER BY total DESC"
    assert not tree.find(exp.Subquery), "a statement without a cut of its own is limited in place"


def test_a_trailing_comment_cannot_swallow_the_limit():
    # Pasting " LIMIT 3" after this text would put the LIMIT inside the comment.
    text = first_rows_sql("SELECT order_id FROM orders -- every order", "sqlite", 3)
    assert limit_of(text) == 3


def test_a_statement_that_cuts_its_own_rows_keeps_its_cut_under_the_previews():
    text = first_rows_sql("SELECT order_id FROM orders ORDER BY order_id LIMIT 2 OFFSET 1", "sqlite", 21)
    outer = sqlglot.parse_one(text, read="sqlite")
    inner = outer.find(exp.Subquery).this
    assert limit_of(text) == 21
    assert inner.args["limit"].expression.name == "2" and inner.args["offset"].expression.name == "1"


def test_the_row_count_wraps_the_tree_and_a_non_query_is_not_rewritten():
    counted = sqlglot.parse_one(row_count_sql("SELECT order_id FROM orders WHERE total > 6", "sqlite"), read="sqlite")
    assert isinstance(counted.expressions[0], exp.Count)
    assert counted.find(exp.Subquery).alias == "counted"
    assert row_count_sql("DELETE FROM orders", "sqlite") is None
    assert first_rows_sql("DELETE FROM orders", "sqlite", 3) == "DELETE FROM orders"


def test_a_preview_shows_the_first_rows_says_there_are_more_and_counts_them_when_asked(shop_sqlite):
    preview = result_preview_run(
        warehouse=shop_sqlite, sql="SELECT order_id FROM orders ORDER BY order_id", rows=2, count=True
    )
    assert preview.result.rows == [[10], [11]]
    assert preview.truncated and preview.row_count == 4


def test_a_preview_of_a_short_result_is_whole_and_its_count_is_its_length(shop_sqlite):
    preview = result_preview_run(warehouse=shop_sqlite, sql="SELECT order_id FROM orders LIMIT 3", rows=20)
    assert len(preview.result.rows) == 3
    assert not preview.truncated and preview.row_count == 3


def test_a_refused_text_is_refused_as_run_readonly_refuses_it(shop_sqlite):
    preview = result_preview_run(warehouse=shop_sqlite, sql="DELETE FROM orders", rows=20)
    direct = run_readonly(warehouse=shop_sqlite, sql="DELETE FROM orders")
    assert not preview.result.allowed and preview.result.reason == direct.reason
