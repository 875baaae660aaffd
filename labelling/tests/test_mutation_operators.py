"""Each mutation operator's tree transform on a hand-written query and schema (no database)."""

import sqlglot

from labelling.mutation_operators import OPERATORS, Schema, operators_for, variants_of

SNAPSHOT = {
    "tables": {
        "orders": {
            "columns": [
                {"name": "order_id", "type": "integer", "nullable": False},
                {"name": "customer_id", "type": "integer", "nullable": False},
                {"name": "status", "type": "text", "nullable": False},
                {"name": "order_total", "type": "numeric(10, 2)", "nullable": False},
            ],
            "primary_key": ["order_id"],
            "foreign_keys": [{"columns": ["customer_id"], "ref_table": "customers", "ref_columns": ["customer_id"]}],
        },
        "customers": {
            "columns": [
                {"name": "customer_id", "type": "integer", "nullable": False},
                {"name": "region_id", "type": "integer", "nullable": True},
                {"name": "segment", "type": "text", "nullable": False},
            ],
            "primary_key": ["customer_id"],
            "foreign_keys": [],
        },
        "order_items": {
            "columns": [
                {"name": "order_item_id", "type": "integer", "nullable": False},
                {"name": "order_id", "type": "integer", "nullable": False},
                {"name": "unit_price", "type": "numeric(10, 2)", "nullable": False},
                {"name": "list_price", "type": "numeric(10, 2)", "nullable": False},
            ],
            "primary_key": ["order_item_id"],
            "foreign_keys": [{"columns": ["order_id"], "ref_table": "orders", "ref_columns": ["order_id"]}],
        },
    }
}
SCHEMA = Schema.from_snapshot(SNAPSHOT)


def mutate(operator: str, sql: str) -> list[str]:
    return [tree.sql() for tree in OPERATORS[operator][0](sqlglot.parse_one(sql), SCHEMA)]


def test_swap_measure_replaces_a_summed_column_with_a_sibling_number_column():
    variants = mutate("swap_measure", "SELECT SUM(oi.unit_price) FROM order_items oi")
    assert variants == ["SELECT SUM(oi.list_price) FROM order_items AS oi"]


def test_drop_conjunct_drops_each_where_conjunct_in_turn():
    variants = mutate("drop_conjunct", "SELECT COUNT(*) FROM orders o WHERE o.status = 'completed' AND o.order_id > 3")
    assert variants == [
        "SELECT COUNT(*) FROM orders AS o WHERE o.order_id > 3",
        "SELECT COUNT(*) FROM orders AS o WHERE o.status = 'completed'",
    ]


def test_left_to_inner_turns_a_left_join_inner():
    variants = mutate(
        "left_to_inner", "SELECT c.segment FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id"
    )
    assert variants == ["SELECT c.segment FROM customers AS c JOIN orders AS o ON o.customer_id = c.customer_id"]


def test_add_fanout_join_joins_a_child_table_before_the_aggregate():
    variants = mutate("add_fanout_join", "SELECT SUM(o.order_total) FROM orders o")
    assert variants == [
        "SELECT SUM(o.order_total) FROM orders AS o JOIN order_items AS mut_fan ON mut_fan.order_id = o.order_id"
    ]


def test_change_grain_groups_by_one_more_text_column():
    variants = mutate("change_grain", "SELECT c.segment, COUNT(*) FROM customers c GROUP BY c.segment")
    assert variants == []  # segment is the only text column, and it is already grouped
    variants = mutate("change_grain", "SELECT COUNT(*) FROM orders o")
    assert variants == ["SELECT COUNT(*) FROM orders AS o GROUP BY o.status"]


def test_count_distinct_counts_rows_instead():
    assert mutate("count_distinct", "SELECT COUNT(DISTINCT o.customer_id) FROM orders o") == [
        "SELECT COUNT(o.customer_id) FROM orders AS o"
    ]


def test_swap_join_key_joins_on_another_key_of_the_same_table():
    variants = mutate(
        "swap_join_key", "SELECT COUNT(*) FROM orders o JOIN customers c ON c.customer_id = o.customer_id"
    )
    assert "SELECT COUNT(*) FROM orders AS o JOIN customers AS c ON c.region_id = o.customer_id" in variants
    assert "SELECT COUNT(*) FROM orders AS o JOIN customers AS c ON c.customer_id = o.order_id" in variants


def test_the_original_tree_is_never_changed_and_operators_take_turns():
    tree = sqlglot.parse_one("SELECT COUNT(DISTINCT o.customer_id) FROM orders o WHERE o.status = 'x'")
    before = tree.sql()
    variants = list(variants_of(tree, SCHEMA, operators_for(), start=1))
    assert tree.sql() == before
    assert variants[0].operator != variants[1].operator
    assert {v.error_class for v in variants} >= {"missing_filter", "aggregation_grain", "join_fanout"}


def test_operators_can_be_chosen_by_error_class():
    assert operators_for(["aggregation_grain"]) == ["change_grain", "count_distinct"]
    assert len(operators_for()) == 7
