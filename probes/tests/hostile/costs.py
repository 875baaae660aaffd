"""Hostile texts that cost time inside one call (issue 27): string and pattern functions
past the timeout, and grouping sets (CUBE, ROLLUP) that expand and compile.

Written against the shop schema (`probes.tests.shop`), each sized to run well past a 1 s
statement timeout (or to grow the process running it past 300 MB) where nothing bounds it.
`REFUSED` are texts the guard must refuse; `CAPPED` are shapes a real analyst might write at
a smaller size, which the walls during execution must bound instead.
"""

from probes.tests.hostile.dialects import LITE, PG

# SQLite builds long strings with printf precision (the only builder on its allow-list).
LONG_A = "printf('%.8000000c', 'a')"

REFUSED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- time_in_function: one call over long inputs, which no interrupt reaches ----------
    (
        "time_in_function",
        "translate-long-set",
        "SELECT length(translate(repeat('a', 400000), repeat('b', 4000), repeat('c', 4000)))",
        PG,
    ),
    (
        "time_in_function",
        "btrim-long-set",
        "SELECT length(btrim(repeat('ab', 200000), repeat('cb', 4000) || 'a'))",
        PG,
    ),
    (
        "time_in_function",
        "rtrim-long-set",
        "SELECT length(rtrim(repeat('xy', 200000), repeat('zx', 4000) || 'y')) FROM orders LIMIT 1",
        PG,
    ),
    (
        "time_in_function",
        "trim-both-long-set",
        "SELECT length(trim(both repeat('cb', 4000) || 'a' from repeat('ab', 200000)))",
        PG,
    ),
    (
        "time_in_function",
        "strpos-worst-needle",
        "SELECT strpos(repeat('a', 5000000), 'b' || repeat('a', 3000))",
        PG,
    ),
    (
        "time_in_function",
        "position-in-where",
        "SELECT count(*) FROM orders WHERE position('b' || repeat('a', 3000) IN repeat('a', 5000000)) > 0",
        PG,
    ),
    (
        "time_in_function",
        "split-part-worst",
        "SELECT split_part(repeat('a', 5000000), 'b' || repeat('a', 3000), 2)",
        PG,
    ),
    (
        "time_in_function",
        "string-to-array-worst",
        "SELECT cardinality(string_to_array(repeat('a', 5000000), 'b' || repeat('a', 3000)))",
        PG,
    ),
    (
        "time_in_function",
        "replace-worst-needle",
        "SELECT length(replace(repeat('a', 5000000), 'b' || repeat('a', 3000), 'x'))",
        PG,
    ),
    (
        "time_in_function",
        "like-long-literal",
        "SELECT '" + "a" * 4000 + "' || repeat('a', 5000000) LIKE '%' || repeat('a', 2000) || 'b'",
        PG,
    ),
    (
        "time_in_function",
        "not-ilike-long",
        "SELECT count(*) FROM orders WHERE repeat('A', 5000000) NOT ILIKE '%' || repeat('a', 2000) || 'b'",
        PG,
    ),
    (
        "time_in_function",
        "translate-of-string-agg",
        "SELECT length(translate(string_agg(a.name || b.name, ''), 'AaBbCc', 'xyzxyz')) "
        "FROM customers a, customers b, customers c, customers d, customers e, customers f",
        PG,
    ),
    (
        "time_in_function",
        "like-over-cte-aggregate",
        "WITH big AS (SELECT string_agg(status, '') AS s FROM orders a, orders b, orders c) "
        "SELECT count(*) FROM big WHERE s LIKE '%' || repeat('p', 400) || 'x'",
        PG,
    ),
    (
        "time_in_function",
        "glob-over-cte-aggregate",
        "WITH big AS (SELECT group_concat(a.name || b.name, '') AS s FROM customers a, customers b, customers c) "
        "SELECT count(*) FROM big WHERE s GLOB '*' || printf('%.400c', 'A') || 'x'",
        LITE,
    ),
    (
        "time_in_function",
        "regex-over-array-agg",
        "SELECT array_to_string(array_agg(status), '') ~ ('(a|b)' || repeat('c', 300)) FROM orders",
        PG,
    ),
    ("time_in_function", "instr-worst", f"SELECT instr({LONG_A}, printf('%.20000c', 'a') || 'b')", LITE),
    (
        "time_in_function",
        "replace-worst-sqlite",
        f"SELECT length(replace({LONG_A}, printf('%.20000c', 'a') || 'b', 'x'))",
        LITE,
    ),
    (
        "time_in_function",
        "trim-long-set-sqlite",
        "SELECT length(trim(printf('%.100000c', 'a'), printf('%.20000c', 'b') || 'a'))",
        LITE,
    ),
    (
        "time_in_function",
        "rtrim-long-set-sqlite",
        "SELECT length(rtrim(printf('%.100000c', 'a'), printf('%.20000c', 'b') || 'a')) FROM orders LIMIT 1",
        LITE,
    ),
    ("time_in_function", "like-long-sqlite", f"SELECT {LONG_A} LIKE '%' || printf('%.600c', 'a') || 'b'", LITE),
    ("time_in_function", "glob-long-sqlite", f"SELECT {LONG_A} GLOB '*' || printf('%.600c', 'a') || 'b'", LITE),
    (
        "time_in_function",
        "like-function-form",
        f"SELECT count(*) FROM orders WHERE like('%' || printf('%.600c', 'a') || 'b', {LONG_A})",
        LITE,
    ),
    (
        "time_in_function",
        "printf-star-precision",
        "SELECT length(printf('%.*c', 8000000, 'x')) + length(printf('%.*c', 8000000, 'y'))",
        LITE,
    ),
    # --- grouping_sets: CUBE and ROLLUP expand; JIT compiles every one -------------------------
    (
        "grouping_sets",
        "cube-twelve",
        "SELECT count(*) FROM orders o, generate_series(1, 200000) g "
        "GROUP BY CUBE (o.order_id, o.customer_id, o.status, o.total, o.order_date, g % 2, g % 3, g % 5, "
        "g % 7, g % 11, g % 13, g % 17)",
        PG,
    ),
    (
        "grouping_sets",
        "cubes-multiplied",
        "SELECT count(*) FROM orders GROUP BY CUBE (order_id, customer_id, status), CUBE (total, order_date), "
        "CUBE (order_id + 1, total + 1)",
        PG,
    ),
    (
        "grouping_sets",
        "rollups-multiplied",
        "SELECT count(*) FROM orders GROUP BY ROLLUP (order_id, customer_id, status, total), "
        "ROLLUP (order_date, order_id + 1, total + 1, status || 'x'), ROLLUP (total * 2, order_id * 2)",
        PG,
    ),
    (
        "grouping_sets",
        "grouping-sets-listed",
        "SELECT count(*) FROM orders GROUP BY GROUPING SETS ("
        + ", ".join(f"(order_id + {i})" for i in range(120))
        + ")",
        PG,
    ),
    (
        "grouping_sets",
        "cube-in-subquery",
        "SELECT count(*) FROM (SELECT 1 FROM order_items GROUP BY CUBE (item_id, order_id, product, quantity, "
        "unit_price, item_id % 2, order_id % 3)) s",
        PG,
    ),
]

CAPPED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # Within every guard limit: the walls during execution bound them.
    (
        "time_in_function",
        "translate-bounded",
        "SELECT length(translate(repeat('a', 10000), repeat('b', 250), repeat('c', 250))) FROM orders",
        PG,
    ),
    (
        "time_in_function",
        "like-rows-of-cross-join",
        "SELECT count(*) FROM customers a, customers b, customers c, customers d, customers e, customers f, "
        "customers g, customers h, customers i, customers j, customers k, customers l, customers m "
        "WHERE a.name || b.name || c.name LIKE '%' || repeat('a', 200) || 'b'",
        PG,
    ),
    (
        "time_in_function",
        "instr-rows-of-cross-join",
        "SELECT count(*) FROM customers a, customers b, customers c, customers d, customers e, customers f, "
        "customers g, customers h, customers i, customers j, customers k, customers l, customers m "
        "WHERE instr(a.name || b.name || c.name, printf('%.200c', 'a') || 'b') > 0",
        LITE,
    ),
    (
        "grouping_sets",
        "cube-six-series",
        "SELECT count(*) FROM generate_series(1, 3000000) g GROUP BY CUBE (g % 2, g % 3, g % 5, g % 7, g % 11, g % 13)",
        PG,
    ),
]
