"""The function allow-list, family by family: what analysts call passes, nothing else does."""

import inspect
import re

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError

from probes.allowlist import FUNCTION_FAMILIES, allowed_functions, family_names
from probes.guard import guard_sql

# Names whose calls need their own syntax, not `name(a, ...)`.
SPECIAL_CALLS = {
    "cast": "CAST(a AS INTEGER)",
    "extract": "EXTRACT(YEAR FROM a)",
    "position": "POSITION('x' IN a)",
    "overlay": "OVERLAY(a PLACING 'x' FROM 1)",
    "current_date": "CURRENT_DATE",
    "current_time": "CURRENT_TIME",
    "current_timestamp": "CURRENT_TIMESTAMP",
    "localtime": "LOCALTIME",
    "localtimestamp": "LOCALTIMESTAMP",
    "percentile_cont": "percentile_cont(0.5) WITHIN GROUP (ORDER BY a)",
    "percentile_disc": "percentile_disc(0.5) WITHIN GROUP (ORDER BY a)",
    "mode": "mode() WITHIN GROUP (ORDER BY a)",
    # Width functions need literal widths (the guard bounds what they build).
    "repeat": "repeat('-', 3)",
    "lpad": "lpad(a, 5, '0')",
    "rpad": "rpad(a, 5)",
    "format": "format('%s-%s', a, b)",
    # MySQL's interval arithmetic and CONVERT(expr, type).
    "date_add": "date_add(a, INTERVAL 1 DAY)",
    "date_sub": "date_sub(a, INTERVAL 1 MONTH)",
    "convert": "CONVERT(a, CHAR)",
    "try_cast": "TRY_CAST(a AS INTEGER)",
}
FAMILY_CASES = [
    (dialect, family, name)
    for dialect, families in FUNCTION_FAMILIES.items()
    for family in families
    for name in sorted(family_names(dialect, family))
]
# One realistic query per family and dialect.
FAMILY_QUERIES = {
    ("postgres", "aggregate"): "SELECT status, count(*), sum(total), avg(total), min(total), max(total), "
    "string_agg(status, ','), array_agg(order_id), stddev(total), bool_and(total > 0) FROM orders GROUP BY status",
    ("postgres", "window"): "SELECT order_id, row_number() OVER w, rank() OVER w, dense_rank() OVER w, "
    "lag(total) OVER w, lead(total, 1) OVER w, ntile(4) OVER w, first_value(total) OVER w "
    "FROM orders WINDOW w AS (PARTITION BY status ORDER BY order_date)",
    ("postgres", "arithmetic"): "SELECT round(total, 2), abs(total), ceil(total), floor(total), mod(order_id, 3), "
    "power(total, 2), sqrt(abs(total)), ln(total + 1), greatest(total, 0) FROM orders",
    ("postgres", "string"): "SELECT lower(status), upper(status), length(status), substring(status FROM 1 FOR 3), "
    "trim(status), concat(status, '-', order_id), replace(status, 'a', 'b'), split_part(status, '_', 1), "
    "left(status, 2), status || '!' FROM orders WHERE status ILIKE 'p%' AND status ~ '^p'",
    ("postgres", "datetime"): "SELECT date_trunc('month', order_date), extract(year FROM order_date), "
    "to_char(order_date, 'YYYY-MM'), age(current_date, order_date), now() - interval '7 days', "
    "date_part('dow', order_date) FROM orders WHERE order_date >= current_date - 30",
    ("postgres", "conditional"): "SELECT CASE WHEN total > 100 THEN 'big' ELSE 'small' END, coalesce(status, '?'), "
    "nullif(total, 0), greatest(total, 1), least(total, 1) FROM orders",
    ("postgres", "cast"): "SELECT CAST(total AS INTEGER), total::numeric(10, 2), order_date::text FROM orders",
    ("postgres", "json_array"): "SELECT cardinality(ARRAY[1, 2]), array_length(ARRAY[1], 1), "
    "json_build_object('a', order_id) -> 'a' FROM orders",
    ("sqlite", "aggregate"): "SELECT status, count(*), sum(total), total(total), avg(total), min(total), "
    "max(total), group_concat(status, ',') FROM orders GROUP BY status",
    ("sqlite", "window"): "SELECT order_id, row_number() OVER (PARTITION BY status ORDER BY order_date), "
    "lag(total) OVER (ORDER BY order_date), sum(total) OVER (ORDER BY order_date ROWS 2 PRECEDING) FROM orders",
    ("sqlite", "arithmetic"): "SELECT round(total, 2), abs(total), max(total, 0), min(total, 0), total % 3 FROM orders",
    ("sqlite", "string"): "SELECT lower(status), upper(status), length(status), substr(status, 1, 3), "
    "instr(status, 'a'), trim(status), replace(status, 'a', 'b'), printf('%.2f', total), status || '!' "
    "FROM orders WHERE status LIKE 'p%'",
    ("sqlite", "datetime"): "SELECT date(order_date), strftime('%Y-%m', order_date), julianday('now') - "
    "julianday(order_date), datetime(order_date, '+1 day') FROM orders",
    ("sqlite", "conditional"): "SELECT CASE WHEN total > 100 THEN 'big' END, coalesce(status, '?'), "
    "ifnull(status, '?'), iif(total > 0, 1, 0), nullif(total, 0) FROM orders",
    ("sqlite", "cast"): "SELECT CAST(total AS INTEGER), typeof(total) FROM orders",
    ("sqlite", "json_array"): "SELECT json_extract('{\"a\": 1}', '$.a'), json_array_length('[1, 2]') FROM orders",
    ("mysql", "aggregate"): "SELECT status, count(*), sum(total), avg(total), group_concat(status SEPARATOR ','), "
    "std(total), bit_or(order_id) FROM orders GROUP BY status",
    ("mysql", "window"): "SELECT order_id, row_number() OVER w, rank() OVER w, lag(total) OVER w, "
    "ntile(4) OVER w FROM orders WINDOW w AS (PARTITION BY status ORDER BY order_date)",
    ("mysql", "arithmetic"): "SELECT round(total, 2), abs(total), truncate(total, 1), mod(order_id, 3), "
    "order_id DIV 2, greatest(total, 0) FROM orders",
    ("mysql", "string"): "SELECT lower(status), ucase(status), char_length(status), substring_index(status, '_', 1), "
    "concat(status, '-', order_id), locate('a', status), lpad(status, 5, '0') FROM orders WHERE status LIKE 'p%'",
    (
        "mysql",
        "datetime",
    ): "SELECT date_format(order_date, '%Y-%m'), year(order_date), datediff(curdate(), order_date), "
    "date_add(order_date, INTERVAL 7 DAY), timestampdiff(DAY, order_date, now()) FROM orders",
    ("mysql", "conditional"): "SELECT CASE WHEN total > 100 THEN 'big' END, if(total > 0, 1, 0), "
    "ifnull(status, '?'), coalesce(status, '?'), nullif(total, 0) FROM orders",
    ("mysql", "cast"): "SELECT CAST(total AS SIGNED), CONVERT(total, CHAR) FROM orders",
    ("duckdb", "aggregate"): "SELECT status, count(*), sum(total), median(total), string_agg(status, ','), "
    "arg_max(order_id, total), count_if(total > 0) FROM orders GROUP BY ALL",
    ("duckdb", "window"): "SELECT order_id, row_number() OVER w, lag(total) OVER w FROM orders "
    "WINDOW w AS (PARTITION BY status ORDER BY order_date)",
    (
        "duckdb",
        "arithmetic",
    ): "SELECT round(total, 2), abs(total), floor(total), total % 3, greatest(total, 0) FROM orders",
    ("duckdb", "string"): "SELECT lower(status), split_part(status, '_', 1), starts_with(status, 'p'), "
    "regexp_replace(status, 'a', 'b'), concat(status, '!') FROM orders",
    ("duckdb", "datetime"): "SELECT date_trunc('month', order_date), strftime(order_date, '%Y-%m'), "
    "date_diff('day', order_date, current_date), year(order_date) FROM orders",
    ("duckdb", "conditional"): "SELECT CASE WHEN total > 100 THEN 'big' END, coalesce(status, '?'), "
    "ifnull(status, '?'), nullif(total, 0) FROM orders",
    ("duckdb", "cast"): "SELECT CAST(total AS INTEGER), TRY_CAST(status AS INTEGER), total::VARCHAR FROM orders",
    ("duckdb", "json_array"): "SELECT list_value(1, 2), len([1, 2]), json_extract_string(doc, '$.a') FROM orders",
    ("mysql", "json_array"): "SELECT json_extract(doc, '$.a'), json_length(doc), json_object('a', order_id) "
    "FROM orders",
}
DANGEROUS = re.compile(
    r"^(pg_|lo_|dblink|set_config|current_setting|nextval|setval|currval|lastval|txid|query_to|cursor_to|"
    r"table_to|schema_to|database_to|ts_stat|ts_rewrite|load_extension|readfile|writefile|randomblob|zeroblob)"
)


def _admitted(name: str, dialect: str) -> bool:
    calls = [SPECIAL_CALLS[name]] if name in SPECIAL_CALLS else [f"{name}({a})" for a in ("a", "a, b", "a, b, c", "")]
    return any(guard_sql(f"SELECT {call} FROM t", dialect).allowed for call in calls)


def test_every_family_the_issue_names_is_listed_for_both_dialects():
    for dialect in ("postgres", "sqlite"):
        assert {"aggregate", "window", "arithmetic", "string", "datetime", "conditional", "cast"} <= set(
            FUNCTION_FAMILIES[dialect]
        )


@pytest.mark.parametrize(("dialect", "family", "name"), FAMILY_CASES, ids=lambda v: str(v))
def test_every_listed_function_is_admitted(dialect, family, name):
    assert _admitted(name, dialect), f"{family} function {name}() refused on {dialect}"


@pytest.mark.parametrize(("dialect", "family"), sorted(FAMILY_QUERIES), ids=lambda v: str(v))
def test_a_realistic_query_of_each_family_passes(dialect, family):
    verdict = guard_sql(FAMILY_QUERIES[(dialect, family)], dialect)
    assert verdict.allowed, verdict.reason


def test_every_family_has_a_realistic_query():
    assert {(dialect, family) for dialect, family, _ in FAMILY_CASES} == set(FAMILY_QUERIES)


@pytest.mark.parametrize(
    ("sql", "dialect", "reason"),
    [
        ("SELECT pg_sleep(1)", "postgres", "function pg_sleep() is not on the postgres allow-list"),
        ("SELECT my_udf(total) FROM orders", "postgres", "function my_udf() is not on the postgres allow-list"),
        ("SELECT to_char(order_date, 'YYYY') FROM orders", "sqlite", "is not on the sqlite allow-list"),
        ("SELECT strftime('%Y', order_date) FROM orders", "postgres", "is not on the postgres allow-list"),
        ("SELECT randomblob(10)", "sqlite", "function randomblob() is not on the sqlite allow-list"),
        ('SELECT "lower"(status) FROM orders', "postgres", 'quoted function name "lower" is not allowed'),
        ('SELECT "lower"(status) FROM orders', "sqlite", 'quoted function name "lower" is not allowed'),
        ("SELECT public.lower(status) FROM orders", "postgres", "schema-qualified function public.lower()"),
        ("SELECT pg_catalog.lower(status) FROM orders", "postgres", "schema-qualified function pg_catalog.lower()"),
        ("SELECT * FROM generate_series(1, 3)", "sqlite", "function generate_series() is not on the sqlite"),
        ("SELECT version()", "postgres", "function version() is not on the postgres allow-list"),
        ("SELECT current_setting('role')", "postgres", "function current_setting()"),
    ],
)
def test_a_function_off_the_list_is_refused_by_name(sql, dialect, reason):
    verdict = guard_sql(sql, dialect)
    assert not verdict.allowed
    assert verdict.kind in ("function", "text")  # a quoted name is refused before parsing
    assert reason in verdict.reason


@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
def test_no_dangerous_name_reaches_an_allowed_node_type_through_an_alias(dialect):
    """sqlglot reads some names into the same node as an allowed one: none of those is dangerous."""
    allowed = allowed_functions(dialect)
    parser = Dialect.get_or_raise(dialect).parser_class
    leaks = []
    for name, builder in parser.FUNCTIONS.items():
        lowered = name.lower()
        if lowered in allowed.names or not DANGEROUS.match(lowered):
            continue
        if inspect.ismethod(builder) and inspect.isclass(builder.__self__):
            types = {builder.__self__}
        else:
            try:
                types = {type(n) for n in sqlglot.parse_one(f"SELECT {name}(a)", read=dialect).walk()}
            except SqlglotError:
                continue
        if types & allowed.node_types - {exp.Anonymous}:
            leaks.append(lowered)
    assert leaks == []
    assert guard_sql("SELECT pg_sleep(1)", dialect).allowed is False


def test_a_quoted_name_is_still_fine_for_a_cte_or_an_alias_column_list():
    for sql in [
        'WITH "totals"(n) AS (SELECT count(*) FROM orders) SELECT n FROM "totals"',
        'WITH a AS (SELECT 1 AS x), "b"(y) AS (SELECT x FROM a) SELECT y FROM "b"',
        'SELECT s.a FROM (SELECT 1) AS "s"(a)',
        'SELECT "status", count(*) FROM "orders" GROUP BY "status"',
    ]:
        verdict = guard_sql(sql, "postgres")
        assert verdict.allowed, (sql, verdict.reason)


def test_neither_information_schema_nor_the_system_catalogues_may_be_read():
    for sql, dialect in [
        ("SELECT table_name FROM information_schema.tables", "postgres"),
        ("SELECT routine_name FROM information_schema.routines", "postgres"),
        ("SELECT * FROM INFORMATION_SCHEMA.COLUMNS", "sqlite"),
        ("SELECT relname FROM pg_class", "postgres"),
        ("SELECT * FROM pg_catalog.pg_tables", "postgres"),
        ("SELECT * FROM pg_toast.pg_toast_2619", "postgres"),
        ("SELECT name FROM sqlite_schema", "sqlite"),
        ("SELECT * FROM orders o JOIN sqlite_master m ON m.name = o.status", "sqlite"),
    ]:
        verdict = guard_sql(sql, dialect)
        assert not verdict.allowed and verdict.kind == "catalogue", sql
        assert "catalogue (" in verdict.reason
