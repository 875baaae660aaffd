"""The deterministic verifier: one test per failure class, with the exact messages."""

import io
import json

from django.core.management import call_command

from probes.models import Warehouse
from probes.outcome import OutcomeKind
from probes.selectors import catalogue_get_latest
from probes.verifier import verify
from probes.verifier_result import VERIFIER_VERSION


def passed(result) -> bool:
    return result.outcome.kind is OutcomeKind.PASSED


def check(warehouse, sql, **rules):
    return verify(sql, catalogue_get_latest(warehouse_id=warehouse.pk), warehouse=warehouse, rules=rules or None)


def test_a_correct_query_passes_and_records_both_versions(shop_sqlite):
    result = check(
        shop_sqlite,
        "SELECT c.name, SUM(o.total) FROM customers c JOIN orders o ON o.customer_id = c.customer_id GROUP BY c.name",
    )
    assert passed(result) and result.failure_class is None and result.findings == []
    assert result.verifier_version == VERIFIER_VERSION
    assert result.catalogue_version == 1


def test_syntax_names_the_line_and_column(shop_sqlite):
    result = check(shop_sqlite, "SELECT order_id\nFROM orders WHERE (total > 1 LIMIT 1")
    assert result.failure_class == "syntax"
    assert result.message == "parse error at line 2, column 34: Expecting )"


def test_syntax_says_which_clause_is_incomplete(shop_sqlite):
    result = check(shop_sqlite, "SELECT order_id FROM orders WHERE GROUP BY 1")
    assert result.message == "parse error at line 1, column 42: incomplete WHERE clause"


def test_unknown_column_suggests_the_closest_existing_name(shop_sqlite):
    result = check(shop_sqlite, "SELECT o.customer_email FROM orders o LIMIT 5")
    assert result.failure_class == "unknown_object"
    assert result.message == "unknown column orders.customer_email; did you mean orders.customer_id?"


def test_unknown_unqualified_column_suggests_a_qualified_name(shop_sqlite):
    result = check(shop_sqlite, "SELECT customer_email FROM orders LIMIT 5")
    assert result.message == "unknown column customer_email; did you mean orders.customer_id?"


def test_unknown_table_suggests_the_closest_table(shop_sqlite):
    result = check(shop_sqlite, "SELECT * FROM orderz LIMIT 2")
    assert result.failure_class == "unknown_object"
    assert result.message == "unknown table orderz; did you mean orders?"


def test_columns_of_ctes_and_select_aliases_resolve(shop_sqlite):
    sql = (
        "WITH per_order AS (SELECT order_id, SUM(quantity * unit_price) AS revenue FROM order_items GROUP BY order_id) "
        "SELECT o.status, SUM(p.revenue) AS revenue FROM orders o JOIN per_order p ON p.order_id = o.order_id "
        "GROUP BY o.status ORDER BY revenue DESC"
    )
    assert passed(check(shop_sqlite, sql))


def test_unknown_column_of_a_cte_is_reported_against_the_cte(shop_sqlite):
    sql = "WITH p AS (SELECT order_id FROM orders) SELECT p.total FROM p LIMIT 1"
    assert check(shop_sqlite, sql).message == "unknown column p.total; p has columns order_id"


def test_dialect_a_function_the_engine_lacks(shop_sqlite):
    result = check(shop_sqlite, "SELECT to_char(order_date, 'YYYY') FROM orders LIMIT 1")
    assert result.failure_class == "dialect"
    assert result.message == "refused by the guard: function to_char() is not on the sqlite allow-list"


def test_a_statement_that_is_not_a_read_is_classed_other_not_dialect(shop_sqlite):
    result = check(shop_sqlite, "DELETE FROM orders")
    assert result.failure_class == "other"
    assert result.message == "not a read-only query: only a query may run; this is DELETE"


def test_timeout_class_cross_join_without_a_predicate(shop_sqlite):
    result = check(shop_sqlite, "SELECT * FROM orders, customers LIMIT 3")
    assert result.failure_class == "timeout"
    assert result.message == "cross join between orders and customers without a join predicate"


def test_a_join_predicate_in_where_is_not_a_cross_join(shop_sqlite):
    assert passed(check(shop_sqlite, "SELECT * FROM orders o, customers c WHERE o.customer_id = c.customer_id LIMIT 3"))


def test_a_cross_join_with_a_single_row_aggregate_is_allowed(shop_sqlite):
    sql = "SELECT o.order_id, o.total / t.s FROM orders o CROSS JOIN (SELECT SUM(total) AS s FROM orders) t LIMIT 5"
    assert passed(check(shop_sqlite, sql))


def test_timeout_class_no_limit_on_a_non_aggregate_query(shop_sqlite):
    result = check(shop_sqlite, "SELECT * FROM orders", require_limit=True)
    assert result.failure_class == "timeout"
    assert result.message == "no LIMIT on a non-aggregate query; add a LIMIT"
    assert passed(check(shop_sqlite, "SELECT status, COUNT(*) FROM orders GROUP BY status", require_limit=True))


def test_the_limit_rule_is_off_unless_the_warehouse_opts_in(shop_sqlite):
    assert passed(check(shop_sqlite, "SELECT * FROM orders"))
    shop_sqlite.verifier_rules = {"require_limit": True}
    shop_sqlite.save()
    warehouse = Warehouse.objects.get(pk=shop_sqlite.pk)
    result = check(warehouse, "SELECT * FROM orders")
    assert result.message == "no LIMIT on a non-aggregate query; add a LIMIT"
    assert result.rules["require_limit"] is True


def test_timeout_class_unbounded_scan_above_the_threshold(shop_sqlite):
    result = check(
        shop_sqlite,
        "SELECT status, COUNT(*) FROM order_items JOIN orders USING (order_id) GROUP BY status",
        max_scan_rows=3,
    )
    assert result.failure_class == "timeout"
    assert result.message == "unbounded scan of order_items (~5 rows); add a LIMIT or a filter"
    filtered = "SELECT status, COUNT(*) FROM orders WHERE status = 'paid' GROUP BY status"
    assert passed(check(shop_sqlite, filtered, max_scan_rows=3))


def test_empty_result_when_the_rule_is_on(shop_sqlite):
    result = check(shop_sqlite, "SELECT * FROM orders WHERE status = 'refunded' LIMIT 5", empty_result=True)
    assert result.failure_class == "empty_result"
    assert result.message == "the query returned no rows"
    assert passed(check(shop_sqlite, "SELECT * FROM orders WHERE status = 'paid' LIMIT 5", empty_result=True))


def test_transport_when_the_warehouse_is_unreachable_is_a_fault(shop_sqlite, monkeypatch):
    monkeypatch.delenv("WAREHOUSE_SHOP_URL")
    result = check(shop_sqlite, "SELECT * FROM orders LIMIT 1")
    assert result.outcome.kind is OutcomeKind.FAULT and result.outcome.cause == "transport"
    assert result.failure_class is None
    assert result.message.startswith("the database could not check the query: transport: no DSN for warehouse 'shop'")


def test_postgres_explain_finds_an_unknown_function_and_a_cross_join(shop_postgres):
    result = check(shop_postgres, "SELECT strftime('%Y', order_date) FROM orders LIMIT 1")
    assert result.failure_class == "dialect"
    assert result.message == "refused by the guard: function strftime() is not on the postgres allow-list"
    # `ON true` hides the product from the tree; the plan still shows it.
    result = check(shop_postgres, "SELECT count(*) FROM orders a JOIN order_items b ON true")
    assert [f["rule"] for f in result.findings] == ["explain_cross_join"]
    assert result.message == "the plan has a cross join between order_items (b) and orders (a)"


def test_postgres_explain_estimates_an_unbounded_scan(shop_postgres):
    result = check(shop_postgres, "SELECT * FROM order_items WHERE quantity > 0", max_scan_rows=2)
    assert result.failure_class == "timeout"
    assert result.message == "the plan estimates 5 rows with no LIMIT; add a LIMIT or a filter"


def test_verify_sql_command_prints_json(shop_sqlite, tmp_path):
    path = tmp_path / "q.sql"
    path.write_text("SELECT o.customer_email FROM orders o LIMIT 5")
    out = io.StringIO()
    call_command("verify_sql", "--warehouse", "shop", "--sql-file", str(path), "--format", "json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["passed"] is False and data["outcome"] == "failed"
    assert data["failure_class"] == "unknown_object"
    assert data["message"] == "unknown column orders.customer_email; did you mean orders.customer_id?"
    assert data["verifier_version"] == VERIFIER_VERSION and data["catalogue_version"] == 1


def test_without_a_catalogue_names_are_not_guessed_but_the_database_still_checks(shop_sqlite):
    assert passed(verify("SELECT order_id FROM orders LIMIT 1", None, warehouse=shop_sqlite))
    result = verify("SELECT nope FROM orders LIMIT 1", None, warehouse=shop_sqlite)
    assert result.failure_class == "unknown_object"
    assert result.message == "the database refused the query: no such column: nope"
    assert result.catalogue_version is None
