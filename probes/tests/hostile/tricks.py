"""Harmless tricks: reads that only look dangerous; the guard may allow them and running one must change nothing."""

from probes.tests.hostile.dialects import BOTH, PG

CAPPED: list[tuple[str, str, str, tuple[str, ...]]] = [
    ("multi_statement", "line-comment-hides-delete", "SELECT 1 -- ; DELETE FROM shipments", BOTH),
    ("multi_statement", "block-comment-hides-drop", "SELECT 1 /* ; DROP TABLE shipments */", BOTH),
    ("multi_statement", "semicolon-in-string", "SELECT '; DELETE FROM shipments; --' AS x", BOTH),
    (
        "lexer_differential",
        "escaped-quote-in-string",
        "SELECT order_id FROM orders WHERE status = 'x''; DELETE FROM shipments; --'",
        BOTH,
    ),
    ("lexer_differential", "quoted-identifier", 'SELECT "order_id" FROM "orders" WHERE "status" = \'paid\'', BOTH),
    ("lexer_differential", "table-shorthand", "TABLE orders", PG),
]
