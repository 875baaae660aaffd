"""Hostile texts that cost space (issue 27): memory one value or one batch of rows can take,
and temporary files a sort, a spool or an endless recursion writes.

Written against the shop schema (`probes.tests.shop`), each sized to run well past a 1 s
statement timeout (or to grow the process running it past 300 MB) where nothing bounds it.
`REFUSED` are texts the guard must refuse; `CAPPED` are shapes a real analyst might write at
a smaller size, which the walls during execution must bound instead.
"""

from probes.tests.hostile.dialects import BOTH, LITE, PG

# SQLite builds long strings with printf precision (the only builder on its allow-list).
LONG_A = "printf('%.8000000c', 'a')"

REFUSED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- memory_growth: one value as large as the server allows ---------------------------
    (
        "memory_growth",
        "three-huge-columns",
        "SELECT length(repeat('a', 300000000)) AS a, length(repeat('b', 300000000)) AS b, "
        "length(repeat('c', 300000000)) AS c",
        PG,
    ),
    ("memory_growth", "format-width", "SELECT length(format('%600000000s', 'x'))", PG),
    ("memory_growth", "format-star-width", "SELECT length(format('%*s', 600000000, 'x'))", PG),
    ("memory_growth", "lpad-fill", "SELECT length(lpad('', 500000000, 'ab'))", PG),
    ("memory_growth", "rpad-as-cell", "SELECT rpad('x', 400000000) AS padded", PG),
    ("memory_growth", "nested-repeat", "SELECT length(repeat(repeat('x', 20000), 20000))", PG),
    (
        "memory_growth",
        "string-agg-built-rows",
        "SELECT length(string_agg(repeat('x', 9000), '')) FROM generate_series(1, 200000)",
        PG,
    ),
    (
        "memory_growth",
        "array-agg-built-rows",
        "SELECT cardinality(array_agg(repeat('y', 5000))) FROM generate_series(1, 300000)",
        PG,
    ),
    (
        "memory_growth",
        "json-agg-built-rows",
        "SELECT length(json_agg(lpad('z', 8000, 'z'))::text) FROM generate_series(1, 200000)",
        PG,
    ),
    (
        "memory_growth",
        "concatenated-repeats",
        "SELECT length(" + " || ".join(f"repeat('{c}', 9000)" for c in "abcdefghijklmnopqrst") + ")",
        PG,
    ),
    (
        "memory_growth",
        "concatenated-printfs",
        "SELECT length(" + " || ".join(f"printf('%.9000c', '{c}')" for c in "abcdefghijklmnopqrst") + ")",
        LITE,
    ),
    (
        "memory_growth",
        "wide-rows-sqlite",
        "SELECT replace(printf('%.1000c', 'x'), 'x', printf('%.8000c', 'y')) AS wide FROM orders a, orders b, orders c",
        LITE,
    ),
    (
        "memory_growth",
        "blob-rows-sqlite",
        "SELECT CAST(replace(printf('%.1000c', 'x'), 'x', printf('%.8000c', 'y')) AS BLOB) AS blob "
        "FROM orders a, orders b, orders c",
        LITE,
    ),
    (
        "memory_growth",
        "tall-wide-sqlite",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 900) "
        "SELECT n, replace(printf('%.100c', 'x'), 'x', printf('%.9000c', 'y')) AS wide FROM r",
        LITE,
    ),
    (
        "memory_growth",
        "group-concat-built",
        "SELECT length(group_concat(printf('%.9000c', 'q'), '')) FROM orders a, orders b, orders c, orders d, "
        "orders e, orders f, orders g",
        LITE,
    ),
    # --- temp_files: a sort or a spool with no end -------------------------------------------
    (
        "temp_files",
        "recursive-sorted-limit",
        "WITH RECURSIVE r(n, pad) AS (SELECT 1, repeat('x', 2000) UNION ALL SELECT n + 1, pad FROM r) "
        "SELECT n FROM r ORDER BY pad, n DESC LIMIT 1",
        PG,
    ),
    (
        "temp_files",
        "recursive-sorted-limit-sqlite",
        "WITH RECURSIVE r(n, pad) AS (SELECT 1, printf('%.2000c', 'x') UNION ALL SELECT n + 1, pad FROM r) "
        "SELECT n FROM r ORDER BY pad, n DESC LIMIT 1",
        LITE,
    ),
    (
        "temp_files",
        "recursive-distinct-limit",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT DISTINCT n FROM r LIMIT 5",
        BOTH,
    ),
    (
        "temp_files",
        "recursive-window-limit",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
        "SELECT n, row_number() OVER (ORDER BY n DESC) FROM r LIMIT 3",
        BOTH,
    ),
    (
        "temp_files",
        "recursive-offset",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 1000 OFFSET 1000000000000) "
        "SELECT count(*) FROM r",
        LITE,
    ),
    (
        "temp_files",
        "recursive-counter-too-far",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100000000000) SELECT max(n) FROM r",
        BOTH,
    ),
    (
        "temp_files",
        "recursive-counter-with-join",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r, orders WHERE n < 30) SELECT count(*) FROM r",
        BOTH,
    ),
    (
        "temp_files",
        "recursive-doubling-spine",
        "WITH RECURSIVE r(d, s) AS (SELECT DATE '2024-01-01', 'x' UNION ALL "
        "SELECT d + 1, s || s FROM r WHERE d < DATE '2024-03-01') SELECT max(length(s)) FROM r",
        PG,
    ),
]


CAPPED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # Within every guard limit: the walls during execution bound them.
    (
        "memory_growth",
        "string-agg-of-data",
        "SELECT length(string_agg(a.name || b.name || c.name, '')) FROM customers a, customers b, customers c, "
        "customers d, customers e, customers f, customers g, customers h, customers i, customers j, customers k, "
        "customers l, customers m, customers n, customers o",
        PG,
    ),
    (
        "memory_growth",
        "group-concat-of-data",
        "SELECT length(group_concat(a.name || b.name || c.name, '')) FROM customers a, customers b, customers c, "
        "customers d, customers e, customers f, customers g, customers h, customers i, customers j, customers k, "
        "customers l, customers m, customers n, customers o",
        LITE,
    ),
    (
        "memory_growth",
        "widest-allowed-cells-sqlite",
        "SELECT printf('%.10000c', 'w') AS a, printf('%10000s', 'v') AS b FROM orders a, orders b, orders c, orders d",
        LITE,
    ),
    (
        "memory_growth",
        "array-agg-of-series",
        "SELECT array_agg(g) FROM generate_series(1, 30000000) g",
        PG,
    ),
    (
        "memory_growth",
        "widest-allowed-cells",
        "SELECT repeat('w', 10000) AS a, lpad('v', 10000, 'v') AS b FROM orders a, orders b, orders c, orders d",
        PG,
    ),
    (
        "temp_files",
        "window-spool",
        "SELECT sum(g) OVER (ORDER BY g ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) "
        "FROM generate_series(1, 100000000) g LIMIT 1",
        PG,
    ),
    (
        "temp_files",
        "wide-order-by",
        "SELECT a.name, b.name, c.name, repeat(d.name, 500) AS pad FROM customers a, customers b, customers c, "
        "customers d, customers e, customers f, customers g, customers h, customers i, customers j, customers k "
        "ORDER BY pad, 1, 2, 3 DESC",
        PG,
    ),
    (
        "temp_files",
        "wide-order-by-sqlite",
        "SELECT a.name, b.name, c.name, printf('%500s', d.name) AS pad FROM customers a, customers b, customers c, "
        "customers d, customers e, customers f, customers g, customers h, customers i, customers j, customers k "
        "ORDER BY pad, 1, 2, 3 DESC",
        LITE,
    ),
    (
        "temp_files",
        "series-materialised",
        "SELECT count(*) FROM (SELECT g, repeat('p', 200) AS pad FROM generate_series(1, 200000000) g "
        "ORDER BY pad, g) s",
        PG,
    ),
    (
        "temp_files",
        "hash-join-spill",
        "SELECT count(*) FROM generate_series(1, 50000000) a JOIN generate_series(1, 50000000) b ON a = b",
        PG,
    ),
    (
        "temp_files",
        "materialized-cte-self-join",
        "WITH m AS MATERIALIZED (SELECT g, repeat('x', 500) AS pad FROM generate_series(1, 20000000) g) "
        "SELECT count(*) FROM m a JOIN m b USING (g)",
        PG,
    ),
    (
        "temp_files",
        "distinct-spill",
        "SELECT count(*) FROM (SELECT DISTINCT g::text || repeat('d', 100) FROM generate_series(1, 50000000) g) s",
        PG,
    ),
    (
        "temp_files",
        "recursive-stream",
        "WITH RECURSIVE r(n, pad) AS (SELECT 1, repeat('s', 100) UNION ALL SELECT n + 1, pad FROM r) "
        "SELECT n, pad FROM r",
        PG,
    ),
    (
        "temp_files",
        "recursive-stream-sqlite",
        "WITH RECURSIVE r(n, pad) AS (SELECT 1, printf('%.100c', 's') UNION ALL SELECT n + 1, pad FROM r) "
        "SELECT n, pad FROM r",
        LITE,
    ),
]
