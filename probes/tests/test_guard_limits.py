"""The guard before parsing, its size and shape limits, real analysts' SQL, and parsing once."""

import json
from pathlib import Path

import pytest
from django.test import override_settings

from probes import defog, guard
from probes.catalogue import introspect_sqlite
from probes.fanout import detect_fanout
from probes.fingerprint import canonical_sql, sql_fingerprint
from probes.guard import guard_sql, parse_sql
from probes.guard_limits import current_limits
from probes.tests import shop
from probes.verifier import verify

DEMO_GOLD = Path(__file__).resolve().parents[2] / "labelling/data/demo_gold.jsonl"


# --- refused before parsing ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "construct"),
    [
        ('SELECT U&"pg\\005fsleep"(1)', "U& Unicode-escaped"),
        ("SELECT u&'\\0041'", "U& Unicode-escaped"),
        ("SELECT U& 'x'", "U& Unicode-escaped"),
        ("SELECT 'd!0061t' UESCAPE '!'", "UESCAPE"),
        ('SELECT "a\\u0041" FROM orders', "backslash in a quoted identifier"),
        ("SELECT E'\\x41'", "E'...' escape string"),
        ("SELECT $$x$$", "dollar-quoted string"),
        ("SELECT $body$x$body$", "dollar-quoted string"),
        ("SELECT 1 /* a /* b */ */", "nested block comment"),
        ("SELECT 1\x00", "U+0000 (NUL)"),
        ("SELECT 1\x1b", "control character U+001B"),
        ("SELECT 1\x85", "control character U+0085"),
        ("SELECT 'a\u202e'", "control character U+202E"),
        ("SELECT '\ud800'", "not valid UTF-8"),
        ('SELECT "LOWER"(status) FROM orders', 'quoted function name "LOWER"'),
    ],
)
@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
def test_what_two_readers_could_read_differently_is_refused_before_parsing(sql, construct, dialect, monkeypatch):
    calls = []
    monkeypatch.setattr(guard, "parse_statements", lambda *args: calls.append(args))
    parsed = parse_sql(sql, dialect)
    assert parsed.stage == "text" and not parsed.verdict.allowed
    assert construct in parsed.verdict.reason
    assert calls == []  # never parsed


def test_tab_cr_lf_and_ordinary_unicode_are_fine():
    assert guard_sql("SELECT\torder_id,\r\n  status -- näive ü\nFROM orders WHERE status <> 'café'", "postgres").allowed
    assert guard_sql("SELECT 1 /* one comment */ + 2 /* another */", "sqlite").allowed
    assert guard_sql("SELECT 'it''s' AS x, 'a\\b' AS backslash", "postgres").allowed
    # JSON in a string may hold quotes and backslashes; it is not a quoted identifier.
    assert guard_sql('SELECT \'{"path": "C:\\\\x"}\' AS j', "postgres").allowed
    # A string ending in e is not an E'...' string; neither is one inside a comment.
    assert guard_sql("SELECT 1 FROM orders WHERE status LIKE '%e' OR status = 'e' -- E'x'", "postgres").allowed


# --- limits, each named by its setting ---------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "value", "sql"),
    [
        ("WAREHOUSE_MAX_SQL_BYTES", 100, "SELECT order_id FROM orders WHERE status = '" + "x" * 100 + "'"),
        ("WAREHOUSE_MAX_SQL_NODES", 20, "SELECT " + ", ".join(f"c{i}" for i in range(20)) + " FROM orders"),
        ("WAREHOUSE_MAX_SQL_NODES", 20, "SELECT " + "+".join(["1"] * 60)),
        ("WAREHOUSE_MAX_SQL_DEPTH", 10, "SELECT a FROM (SELECT a FROM (SELECT a FROM (SELECT 1 AS a) x) y) z"),
        ("WAREHOUSE_MAX_SQL_CTES", 2, "WITH a AS (SELECT 1), b AS (SELECT 2), c AS (SELECT 3) SELECT * FROM a"),
        (
            "WAREHOUSE_MAX_SQL_JOINS",
            2,
            "SELECT 1 FROM orders a JOIN orders b ON true JOIN orders c ON true JOIN orders d ON true",
        ),
        (
            "WAREHOUSE_MAX_RECURSIVE_ROWS",
            100,
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 200) SELECT count(*) FROM r",
        ),
        ("WAREHOUSE_MAX_SQL_LITERAL_BYTES", 10, "SELECT count(*) FROM orders WHERE status = 'cancelled-or-refunded'"),
        ("WAREHOUSE_MAX_SQL_WIDTH", 10, "SELECT lpad(CAST(order_id AS TEXT), 12, '0') FROM orders"),
        ("WAREHOUSE_MAX_SQL_PATTERN_BYTES", 5, "SELECT count(*) FROM orders WHERE status LIKE '%cancel%'"),
        (
            "WAREHOUSE_MAX_SQL_GROUPING_SETS",
            4,
            "SELECT status, customer_id, order_date, count(*) FROM orders GROUP BY CUBE (status, customer_id, total)",
        ),
    ],
)
def test_each_limit_refuses_naming_its_setting(setting, value, sql):
    assert guard_sql(sql, "postgres").allowed  # within the defaults
    with override_settings(**{setting: value}):
        verdict = guard_sql(sql, "postgres")
    assert not verdict.allowed
    assert setting in verdict.reason
    assert guard_sql(sql, "postgres").allowed  # the cache is keyed on the limits


def test_the_default_limits_are_the_documented_ones():
    limits = current_limits()
    assert limits.max_bytes == 65_536
    assert (limits.max_nodes, limits.max_depth, limits.max_ctes, limits.max_joins) == (5_000, 100, 32, 32)
    assert limits.max_recursive_rows == 1_000_000


@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
def test_a_recursive_cte_must_provably_stop(dialect):
    body = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r{inner}) SELECT {outer}"
    refused = guard_sql(body.format(inner="", outer="count(*) FROM r"), dialect)
    assert not refused.allowed and "recursive CTE r is not provably bounded" in refused.reason
    assert "WAREHOUSE_MAX_RECURSIVE_ROWS" in refused.reason
    # A counter under a literal, or a plain stream the row cap stops.
    assert guard_sql(body.format(inner=" WHERE n < 100", outer="count(*) FROM r"), dialect).allowed
    assert guard_sql(body.format(inner="", outer="n FROM r"), dialect).allowed
    assert guard_sql(body.format(inner="", outer="n FROM r LIMIT 10"), dialect).allowed
    # An outer LIMIT over a sort or a filter does not stop it: ORDER BY needs every row.
    assert not guard_sql(body.format(inner="", outer="n FROM r ORDER BY n LIMIT 10"), dialect).allowed
    assert not guard_sql(body.format(inner="", outer="n FROM r WHERE n < 0 LIMIT 1"), dialect).allowed
    # A counter the WHERE does not hold (it counts down, or under a column) proves nothing.
    assert not guard_sql(body.format(inner=" WHERE n > 100", outer="count(*) FROM r"), dialect).allowed
    assert not guard_sql(body.format(inner=" WHERE n < n + 1", outer="count(*) FROM r"), dialect).allowed
    # A WITH RECURSIVE whose CTEs do not refer to themselves needs nothing.
    assert guard_sql("WITH RECURSIVE a AS (SELECT 1 AS n) SELECT n FROM a", dialect).allowed
    if dialect == "sqlite":  # PostgreSQL has no LIMIT inside a recursive CTE
        assert guard_sql(body.format(inner=" LIMIT 10", outer="count(*) FROM r"), dialect).allowed
        assert not guard_sql(body.format(inner=" LIMIT 5000000", outer="count(*) FROM r"), dialect).allowed
        offset = guard_sql(body.format(inner=" LIMIT 1000 OFFSET 1000000000000", outer="count(*) FROM r"), dialect)
        assert not offset.allowed and "1,000,000,001,000" in offset.reason


def test_a_text_over_the_byte_limit_is_never_parsed(monkeypatch):
    calls = []
    monkeypatch.setattr(guard, "parse_statements", lambda *args: calls.append(args))
    huge = "SELECT " + "+".join(["1"] * 100_000)
    verdict = guard_sql(huge, "postgres")
    assert "WAREHOUSE_MAX_SQL_BYTES" in verdict.reason
    assert canonical_sql(huge, "postgres") == huge.lower()
    assert calls == []


# --- real analysts' SQL passes ---------------------------------------------------------------


@pytest.mark.skipif(not defog.available(), reason="defog data set not present")
@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
def test_the_allow_list_refuses_no_defog_gold_query_it_can_parse(dialect):
    queries = defog.gold_queries(dialect)
    assert len(queries) >= 100
    refused = [(q.source, q.row, parse_sql(q.sql, dialect)) for q in queries]
    refused = [(source, row, parsed) for source, row, parsed in refused if not parsed.verdict.allowed]
    # Only what sqlglot itself cannot read (one SQLite gold query: `LIMIT 2 - (SELECT ...) % 2`).
    assert [(s, r, p.verdict.reason) for s, r, p in refused if p.stage != "syntax"] == []
    assert len(refused) <= (1 if dialect == "sqlite" else 0)


def test_the_demo_gold_set_passes():
    items = [json.loads(line) for line in DEMO_GOLD.open()]
    for item in items:
        for sql in filter(None, [item["sql"], item.get("reference_sql")]):
            for dialect in ("sqlite", "postgres"):
                verdict = guard_sql(sql, dialect)
                assert verdict.allowed, (item["id"], dialect, verdict.reason)


# --- one parse per text ------------------------------------------------------------------------


def test_guard_verifier_fingerprint_and_fanout_share_one_parse(monkeypatch, tmp_path):
    catalogue = introspect_sqlite(shop.create_sqlite(tmp_path / "shop.sqlite3"))
    real = guard.parse_statements
    calls = []

    def counting(sql, dialect):
        calls.append(sql)
        return real(sql, dialect)

    monkeypatch.setattr(guard, "parse_statements", counting)
    sql = (
        "SELECT c.name, SUM(o.total) AS revenue FROM customers c JOIN orders o ON o.customer_id = c.customer_id "
        "JOIN order_items oi ON oi.order_id = o.order_id GROUP BY c.name /* parse-once */"
    )
    assert guard_sql(sql, "sqlite").allowed
    assert verify(sql, catalogue, rules={"explain": False}).outcome.kind == "passed"
    assert detect_fanout(sql, catalogue, dialect="sqlite").suspected  # order_items repeats each order's total
    first = sql_fingerprint(sql, "sqlite")
    assert sql_fingerprint(sql, "sqlite") == first
    assert calls == [sql]
    # The fingerprint normalised a copy: the shared tree is untouched.
    assert parse_sql(sql, "sqlite").tree.sql() == real(sql, "sqlite")[0].sql()
