"""Analytics SQL of the same families as the hostile texts, which must be allowed and must run.

Table-function column aliases, GROUPING() with ROLLUP and CUBE, recursive CTEs bounded by a
counter or a date the guard can prove, or by the row cap, and the string, pattern and
aggregate functions at the sizes an analyst uses them (issue 27). The harness fails a text
here that the guard refuses or that does not run.
"""

from probes.tests.hostile.dialects import BOTH, LITE, PG

BENIGN: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- table functions with column aliases ---------------------------------------------
    ("benign_analytics", "unnest-column-alias", "SELECT s.x FROM unnest(ARRAY[3, 1, 2]) AS s(x) ORDER BY s.x", PG),
    (
        "benign_analytics",
        "unnest-lateral-alias",
        "SELECT o.order_id, i.item FROM orders o, unnest(ARRAY[o.status, o.order_date]) AS i(item) ORDER BY 1, 2",
        PG,
    ),
    (
        "benign_analytics",
        "unnest-with-ordinality",
        "SELECT t.n, t.ord FROM unnest(ARRAY[10, 20, 30]) WITH ORDINALITY AS t(n, ord)",
        PG,
    ),
    (
        "benign_analytics",
        "series-alias-as-value",
        "SELECT d::date AS day FROM generate_series(DATE '2026-01-01', DATE '2026-01-07', INTERVAL '1 day') AS d",
        PG,
    ),
    # --- grouping sets ---------------------------------------------------------------------------
    (
        "benign_analytics",
        "grouping-with-rollup",
        "SELECT status, GROUPING(status) AS is_total, count(*) AS orders, sum(total) AS revenue "
        "FROM orders GROUP BY ROLLUP (status) ORDER BY 2, 1",
        PG,
    ),
    (
        "benign_analytics",
        "grouping-with-cube",
        "SELECT customer_id, status, GROUPING(customer_id, status) AS level, count(*) FROM orders "
        "GROUP BY CUBE (customer_id, status) ORDER BY 3, 1, 2",
        PG,
    ),
    (
        "benign_analytics",
        "grouping-sets-few",
        "SELECT status, order_date, count(*) FROM orders GROUP BY GROUPING SETS ((status), (order_date), ()) "
        "ORDER BY 1, 2",
        PG,
    ),
    # --- recursive CTEs the guard can prove stop ---------------------------------------------
    (
        "benign_analytics",
        "date-spine",
        "WITH RECURSIVE days(d) AS (SELECT DATE '2026-01-01' UNION ALL SELECT d + 1 FROM days "
        "WHERE d < DATE '2026-01-31') "
        "SELECT days.d, count(o.order_id) AS orders FROM days LEFT JOIN orders o ON o.order_date::date = days.d "
        "GROUP BY days.d ORDER BY days.d",
        PG,
    ),
    (
        "benign_analytics",
        "hour-spine",
        "WITH RECURSIVE hours(h) AS (SELECT TIMESTAMP '2026-01-01 00:00' UNION ALL "
        "SELECT h + INTERVAL '1 hour' FROM hours WHERE h < TIMESTAMP '2026-01-03 00:00') SELECT count(*) FROM hours",
        PG,
    ),
    (
        "benign_analytics",
        "date-spine-sqlite",
        "WITH RECURSIVE days(d) AS (SELECT '2026-01-01' UNION ALL SELECT date(d, '+1 day') FROM days "
        "WHERE d < '2026-01-31') "
        "SELECT days.d, count(o.order_id) AS orders FROM days LEFT JOIN orders o ON o.order_date = days.d "
        "GROUP BY days.d ORDER BY days.d",
        LITE,
    ),
    (
        "benign_analytics",
        "counter-to-100",
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) SELECT sum(i) FROM n",
        BOTH,
    ),
    (
        "benign_analytics",
        "countdown",
        "WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i - 1 FROM n WHERE i > 0) SELECT count(*) FROM n",
        BOTH,
    ),
    (
        "benign_analytics",
        "counter-and-filter",
        "WITH RECURSIVE n(i, sq) AS (SELECT 1, 1 UNION ALL SELECT i + 1, (i + 1) * (i + 1) FROM n "
        "WHERE i < 20 AND sq < 1000) SELECT max(sq) FROM n",
        BOTH,
    ),
    (
        "benign_analytics",
        "stream-with-limit",
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n LIMIT 50",
        BOTH,
    ),
    (
        "benign_analytics",
        "stream-to-row-cap",
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i, i * i AS square FROM n",
        BOTH,
    ),
    (
        "benign_analytics",
        "chain-with-path",
        "WITH RECURSIVE chain(order_id, path, depth) AS ("
        "SELECT order_id, CAST(order_id AS TEXT), 1 FROM orders WHERE order_id = 10 UNION ALL "
        "SELECT o.order_id, c.path || '>' || CAST(o.order_id AS TEXT), c.depth + 1 FROM chain c "
        "JOIN orders o ON o.order_id = c.order_id + 1 WHERE c.depth < 5) SELECT order_id, path FROM chain",
        BOTH,
    ),
    # --- string, pattern and aggregate functions at analysts' sizes ------------------------------
    (
        "benign_analytics",
        "string-functions",
        "SELECT status, length(status), upper(status), lpad(CAST(order_id AS TEXT), 6, '0'), "
        "replace(status, 'a', 'A'), translate(status, 'aeiou', 'AEIOU'), split_part(order_date, '-', 1), "
        "strpos(status, 'id'), btrim('  x  '), position('a' IN status) FROM orders ORDER BY order_id",
        PG,
    ),
    (
        "benign_analytics",
        "string-functions-sqlite",
        "SELECT printf('%05d', order_id), instr(status, 'ai'), replace(status, 'a', 'A'), trim('  x  '), "
        "substr(order_date, 1, 7), ltrim(status, 'p'), upper(status) FROM orders ORDER BY order_id",
        LITE,
    ),
    (
        "benign_analytics",
        "patterns",
        "SELECT count(*) FROM orders WHERE status LIKE 'pa%' OR status LIKE '%cel%' OR order_date LIKE '2026-01-0_'",
        BOTH,
    ),
    (
        "benign_analytics",
        "patterns-pg",
        "SELECT count(*) FROM customers WHERE name ILIKE 'a%' OR email ~ '^[a-z]+@example[.]com$' "
        "OR name SIMILAR TO '(Bo|Cy)%'",
        PG,
    ),
    (
        "benign_analytics",
        "glob-sqlite",
        "SELECT count(*) FROM orders WHERE status GLOB 'c*' OR status GLOB 'p?id'",
        LITE,
    ),
    (
        "benign_analytics",
        "aggregates-returned",
        "SELECT customer_id, string_agg(status, ', ' ORDER BY order_id) AS statuses, "
        "array_agg(order_id ORDER BY order_id) AS ids, (array_agg(status ORDER BY total DESC))[1] AS top_status "
        "FROM orders GROUP BY customer_id ORDER BY customer_id",
        PG,
    ),
    (
        "benign_analytics",
        "aggregates-sqlite",
        "SELECT customer_id, group_concat(status, ', ') AS statuses, count(*) FROM orders GROUP BY customer_id",
        LITE,
    ),
    (
        "benign_analytics",
        "aggregate-tested-per-row",
        "SELECT customer_id, bool_or(status LIKE 'canc%') AS ever_cancelled FROM orders GROUP BY customer_id",
        PG,
    ),
    (
        "benign_analytics",
        "format-and-histogram",
        "SELECT format('%s: %s', status, count(*)), repeat('#', least(count(*)::int, 50)) AS bar "
        "FROM orders GROUP BY status ORDER BY status",
        PG,
    ),
    (
        "benign_analytics",
        "printf-widths-sqlite",
        "SELECT printf('%-10s|%8.2f', status, total) FROM orders ORDER BY order_id",
        LITE,
    ),
    ("benign_analytics", "star-of-a-table", "SELECT o.* FROM orders o ORDER BY o.order_id", BOTH),
    (
        "benign_analytics",
        "window-and-order",
        "SELECT order_id, total, sum(total) OVER (PARTITION BY customer_id ORDER BY order_id) AS running "
        "FROM orders ORDER BY order_id",
        BOTH,
    ),
    (
        "benign_analytics",
        "derived-column-named-like-a-table",
        "SELECT round(avg(orders), 2) AS per_customer FROM (SELECT customer_id, count(*) AS orders FROM orders "
        "GROUP BY customer_id) per_customer",
        BOTH,
    ),
]
