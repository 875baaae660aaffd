"""Hostile texts of what issue 27 saw but had not yet turned into harm: a pre-parse scan that
was quadratic, quoted calls hidden by comments, OFFSET past the literal-limit rule.
"""

from probes.tests.hostile.dialects import BOTH, LITE

REFUSED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- lexer_differential: texts that cost the guard's own scan before it refuses them ---
    ("lexer_differential", "unclosed-comments-64kb", "SELECT 1 " + "/* a " * 13000, BOTH),
    ("lexer_differential", "unclosed-comments-dense", "SELECT 1 /*" + "/*" * 32000, BOTH),
    ("lexer_differential", "many-double-quotes", "SELECT 1 " + '"' * 64000, BOTH),
    ("lexer_differential", "many-quoted-calls", "SELECT " + '"x"(' * 16000, BOTH),
    ("lexer_differential", "quote-paren-run", "SELECT " + "'(" * 32000, BOTH),
    ("lexer_differential", "comment-then-quotes", "SELECT 1 /* " + "'" * 30000 + '"' * 30000, BOTH),
    # --- lexer_differential: a quoted call the comment between name and paren hid ----------
    ("lexer_differential", "quoted-call-block-comment", 'SELECT "UPPER"/**/(status) FROM orders', BOTH),
    ("lexer_differential", "quoted-call-line-comment", 'SELECT "LOWER" -- hidden\n (status) FROM orders', BOTH),
    (
        "lexer_differential",
        "quoted-call-comment-space",
        'SELECT "pg_terminate_backend" /* x */ /* y */ (pid) FROM orders',
        BOTH,
    ),
    # --- time_bomb: OFFSET past the literal-limit rule ---------------------------------------
    (
        "time_bomb",
        "recursive-limit-huge-offset",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 1000 OFFSET 1000000000000) "
        "SELECT n FROM r",
        LITE,
    ),
    (
        "time_bomb",
        "recursive-limit-expression-offset",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 10 OFFSET (SELECT 1000000000000)) "
        "SELECT count(*) FROM r",
        LITE,
    ),
]
