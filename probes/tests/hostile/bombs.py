"""Hostile texts that cost: planning, memory and time bombs and huge results.

The guard refuses some by shape or name (`REFUSED`); the others are legitimate shapes only
the execution caps can bound (`CAPPED`).
"""

from probes.tests.hostile.dialects import BOTH, LITE, PG


def cte_chain(count: int) -> str:
    """A chain of CTEs each reading the one before: the planner inlines them all (~27 KB at 900)."""
    parts = ["c0 AS (SELECT order_id, total FROM orders)"]
    parts += [f"c{i} AS (SELECT order_id, total + 1 AS total FROM c{i - 1})" for i in range(1, count)]
    return "WITH " + ", ".join(parts) + f" SELECT count(*) FROM c{count - 1}"


def nested_subqueries(depth: int) -> str:
    sql = "SELECT order_id FROM orders"
    for _ in range(depth):
        sql = f"SELECT order_id FROM ({sql}) AS s"
    return sql


def many_joins(count: int) -> str:
    joins = " ".join(f"JOIN orders o{i} ON o{i}.order_id = o0.order_id" for i in range(1, count + 1))
    return f"SELECT count(*) FROM orders o0 {joins}"


PLUS_CHAIN = "SELECT " + "+".join(["1"] * 100_000)  # ~200 KB: parsed four times it took minutes

REFUSED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- planning_bomb -----------------------------------------------------------------------
    ("planning_bomb", "cte-chain-900", cte_chain(900), BOTH),
    ("planning_bomb", "cte-chain-1500", cte_chain(1500), BOTH),
    ("planning_bomb", "cte-chain-120", cte_chain(120), BOTH),
    ("planning_bomb", "plus-chain-200kb", PLUS_CHAIN, BOTH),
    ("planning_bomb", "joins-120", many_joins(120), BOTH),
    ("planning_bomb", "nested-subqueries-300", nested_subqueries(300), BOTH),
    ("planning_bomb", "union-3000", " UNION ALL ".join(f"SELECT {i}" for i in range(3000)), BOTH),
    (
        "planning_bomb",
        "in-list-20000",
        "SELECT count(*) FROM orders WHERE order_id IN (" + ",".join(str(i) for i in range(20_000)) + ")",
        BOTH,
    ),
    ("planning_bomb", "nested-parens-2000", "SELECT " + "(" * 2000 + "1" + ")" * 2000, BOTH),
    (
        "planning_bomb",
        "or-chain-6000",
        "SELECT count(*) FROM orders WHERE " + " OR ".join(f"order_id = {i}" for i in range(6000)),
        BOTH,
    ),
    # --- memory_bomb: the guard refuses these by name or shape ------------------------------
    ("memory_bomb", "randomblob", "SELECT length(randomblob(2000000000))", LITE),
    ("memory_bomb", "zeroblob", "SELECT length(zeroblob(2000000000))", LITE),
    ("memory_bomb", "zeroblob-hex", "SELECT hex(zeroblob(1000000000))", LITE),
    (
        "memory_bomb",
        "recursive-doubling-no-limit",
        "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM r) SELECT length(s) FROM r",
        BOTH,
    ),
    (
        "memory_bomb",
        "recursive-replace-no-limit",
        "WITH RECURSIVE r(s, n) AS (SELECT 'xx', 0 UNION ALL SELECT replace(s, 'x', s), n + 1 FROM r) "
        "SELECT max(length(s)) FROM r",
        BOTH,
    ),
    # --- time_bomb ------------------------------------------------------------------------
    ("time_bomb", "sleep", "SELECT pg_sleep(30)", PG),
    ("time_bomb", "sleep-for", "SELECT pg_sleep_for('30 seconds')", PG),
    ("time_bomb", "sleep-until", "SELECT pg_sleep_until(now() + interval '30 seconds')", PG),
    ("time_bomb", "table-function-sleep", "SELECT * FROM pg_sleep(30)", PG),
    ("time_bomb", "schema-qualified-sleep", "SELECT pg_catalog.pg_sleep(30)", PG),
    (
        "time_bomb",
        "sleep-in-subquery",
        "SELECT * FROM orders WHERE total > (SELECT count(*) FROM (SELECT pg_sleep(30)) s)",
        PG,
    ),
    ("time_bomb", "sleep-in-cte", "WITH s AS (SELECT pg_sleep(30) AS z) SELECT * FROM s", PG),
    ("time_bomb", "upper-case-sleep", "SELECT PG_SLEEP(30)", PG),
    ("time_bomb", "sleep-in-order-by", "SELECT order_id FROM orders ORDER BY pg_sleep(1)", PG),
    ("time_bomb", "sleep-in-case", "SELECT CASE WHEN total > 0 THEN pg_sleep(5) END FROM orders", PG),
    (
        "time_bomb",
        "recursive-forever",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        BOTH,
    ),
    (
        "time_bomb",
        "recursive-forever-join",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT n + 1 FROM r JOIN orders ON true) SELECT max(n) FROM r",
        BOTH,
    ),
    (
        "time_bomb",
        "benchmark-like",
        "SELECT count(*) FROM orders WHERE like('%a%a%a%a%a%a%a%', randomblob(100000000))",
        LITE,
    ),
]

CAPPED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- memory_bomb ----------------------------------------------------------------------
    ("memory_bomb", "printf-width", "SELECT length(printf('%.*c', 2000000000, 'x'))", LITE),
    ("memory_bomb", "printf-width-rows", "SELECT printf('%.*c', 100000000, 'x') FROM orders", LITE),
    (
        "memory_bomb",
        "replace-nesting",
        "SELECT length(replace(replace(replace(replace(replace(replace(printf('%.*c', 1000, 'x'), 'x', "
        "printf('%.*c', 1000, 'x')), 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), "
        "'x', 'xx'), 'x', 'xx'))",
        LITE,
    ),
    (
        "memory_bomb",
        "recursive-doubling-limited",
        "WITH RECURSIVE r(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM r LIMIT 40) "
        "SELECT max(length(s)) FROM r",
        LITE,
    ),
    ("memory_bomb", "repeat-huge", "SELECT length(repeat('x', 1000000000))", PG),
    ("memory_bomb", "lpad-huge", "SELECT length(lpad('x', 1000000000, 'y'))", PG),
    (
        "memory_bomb",
        "string-agg-series",
        "SELECT length(string_agg(repeat('x', 1000), ',')) FROM generate_series(1, 10000000)",
        PG,
    ),
    ("memory_bomb", "array-agg-series", "SELECT cardinality(array_agg(g)) FROM generate_series(1, 100000000) g", PG),
    (
        "memory_bomb",
        "group-concat-cross",
        "SELECT length(group_concat(a.name || b.name)) FROM customers a, customers b, customers c, customers d",
        LITE,
    ),
    # --- time_bomb ------------------------------------------------------------------------
    (
        "time_bomb",
        "generate-series-cross-join",
        "SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b",
        PG,
    ),
    (
        "time_bomb",
        "self-cross-join",
        "SELECT count(*) FROM orders a, orders b, orders c, orders d, orders e, orders f, orders g, orders h, "
        "orders i, orders j, orders k, orders l, orders m, orders n, orders o, orders p",
        BOTH,
    ),
    (
        "time_bomb",
        "recursive-limited-count",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 1000000000000) SELECT count(*) FROM r",
        LITE,
    ),
    (
        "time_bomb",
        "recursive-outer-limit",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r WHERE n < 0 LIMIT 1",
        BOTH,
    ),
    ("time_bomb", "regex-backtracking", "SELECT regexp_matches(repeat('a', 100000) || 'b', '(a+)+$')", PG),
    ("time_bomb", "series-sum", "SELECT sum(g) FROM generate_series(1, 10000000000) g", PG),
    ("time_bomb", "md5-loop", "SELECT count(DISTINCT md5(g::text)) FROM generate_series(1, 1000000000) g", PG),
    # --- huge_result ------------------------------------------------------------------------
    ("huge_result", "series-rows", "SELECT g FROM generate_series(1, 1000000000) g", PG),
    ("huge_result", "wide-cells", "SELECT repeat('x', 10000000) AS x FROM generate_series(1, 1000)", PG),
    ("huge_result", "cross-join-rows", "SELECT * FROM orders a, orders b, orders c, orders d", BOTH),
    (
        "huge_result",
        "recursive-rows",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 100000000) SELECT n FROM r",
        LITE,
    ),
    ("huge_result", "wide-printf-rows", "SELECT printf('%.*c', 1000000, 'x') AS x FROM orders a, orders b", LITE),
    (
        "huge_result",
        "wide-recursive-cells",
        "WITH RECURSIVE r(n, s) AS (SELECT 1, printf('%.*c', 100000, 'x') UNION ALL SELECT n + 1, s FROM r "
        "LIMIT 100000) "
        "SELECT * FROM r",
        LITE,
    ),
    ("huge_result", "many-columns", "SELECT " + ", ".join(f"repeat('x', 100000) AS c{i}" for i in range(200)), PG),
    (
        "huge_result",
        "customers-cross-shipments",
        "SELECT c.*, s.* FROM customers c CROSS JOIN shipments s CROSS JOIN order_items i",
        BOTH,
    ),
]
