"""Hostile texts that sqlglot and the database could read differently."""

from probes.tests.hostile.dialects import BOTH, PG


def u_amp(name: str) -> str:
    """Spell a function name as a PostgreSQL Unicode-escaped identifier, hiding its last underscore."""
    head, _, tail = name.rpartition("_")
    return 'U&"' + head + "\\005f" + tail + '"'


REFUSED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- lexer_differential: texts sqlglot and the database could read differently -------
    (
        "lexer_differential",
        "u-amp-terminate-backend",
        f"SELECT {u_amp('pg_terminate_backend')}(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
        PG,
    ),
    (
        "lexer_differential",
        "u-amp-cancel-backend",
        f"SELECT {u_amp('pg_cancel_backend')}(pid) FROM pg_stat_activity",
        PG,
    ),
    ("lexer_differential", "u-amp-set-config-role", f"SELECT {u_amp('set_config')}('role', 'none', true)", PG),
    ("lexer_differential", "u-amp-read-file", f"SELECT {u_amp('pg_read_file')}('/etc/passwd')", PG),
    ("lexer_differential", "u-amp-ls-dir", f"SELECT {u_amp('pg_ls_dir')}('.')", PG),
    ("lexer_differential", "u-amp-lo-export", f"SELECT {u_amp('lo_export')}(1, '/tmp/docket-probes-pwned')", PG),
    ("lexer_differential", "u-amp-stat-reset", f"SELECT {u_amp('pg_stat_reset')}()", PG),
    ("lexer_differential", "u-amp-advisory-lock", f"SELECT {u_amp('pg_advisory_lock')}(42)", PG),
    ("lexer_differential", "u-amp-sleep", f"SELECT {u_amp('pg_sleep')}(30)", PG),
    ("lexer_differential", "u-amp-lower-case", 'SELECT u&"pg\\005fsleep"(30)', PG),
    ("lexer_differential", "u-amp-table", 'SELECT * FROM U&"pg\\005fshadow"', PG),
    ("lexer_differential", "u-amp-string", "SELECT U&'\\0041' AS a FROM orders", PG),
    ("lexer_differential", "u-amp-plus-escape", "SELECT U&'\\+000041' AS a", PG),
    ("lexer_differential", "uescape-identifier", "SELECT U&\"pg!005fsleep\" UESCAPE '!' (30)", PG),
    ("lexer_differential", "uescape-string", "SELECT U&'d!0061t!+000061' UESCAPE '!'", PG),
    ("lexer_differential", "escape-string-quote", "SELECT E'\\'' AS x, pg_sleep(30) -- '", PG),
    ("lexer_differential", "escape-string-unicode", "SELECT E'\\u0041' AS x FROM orders", PG),
    ("lexer_differential", "dollar-quoted", "SELECT $$; DELETE FROM shipments; $$ AS x", PG),
    ("lexer_differential", "dollar-tagged", "SELECT $tag$ ' $tag$ AS x, pg_sleep(30) -- '", PG),
    ("lexer_differential", "dollar-hides-function", "SELECT $a$x$a$ || pg_read_file('/etc/passwd')", PG),
    ("lexer_differential", "nested-comment", "SELECT 1 /* outer /* inner */ ; DELETE FROM shipments */", BOTH),
    ("lexer_differential", "nested-comment-hides-call", "SELECT 1 /* /* */ , pg_sleep(30) /* */", BOTH),
    (
        "lexer_differential",
        "nested-comment-sqlite-reads-call",
        "SELECT 1 /* a /* b */ , randomblob(1000000000) -- */",
        BOTH,
    ),
    ("lexer_differential", "nul-byte", "SELECT 1;\x00DELETE FROM shipments", BOTH),
    ("lexer_differential", "nul-in-string", "SELECT 'a\x00' AS x", BOTH),
    ("lexer_differential", "vertical-tab", "SELECT\x0border_id FROM orders", BOTH),
    ("lexer_differential", "form-feed", "SELECT\x0corder_id FROM orders", BOTH),
    ("lexer_differential", "escape-char", "SELECT 1\x1b[2J", BOTH),
    ("lexer_differential", "backspace", "SELECT 'x\x08' AS x", BOTH),
    ("lexer_differential", "delete-char", "SELECT 1\x7f", BOTH),
    ("lexer_differential", "c1-control", "SELECT 1\x85", BOTH),
    ("lexer_differential", "bidi-override", "SELECT order_id FROM orders WHERE status = 'paid\u202e' --", BOTH),
    ("lexer_differential", "zero-width-space", "SELECT pg_\u200bsleep(30)", BOTH),
    ("lexer_differential", "unicode-semicolon", "SELECT 1\uff1b DELETE FROM shipments", BOTH),
    ("lexer_differential", "lone-surrogate", "SELECT '\ud800' AS x", BOTH),
    ("lexer_differential", "empty", "", BOTH),
    ("lexer_differential", "only-a-comment", "-- nothing here", BOTH),
    ("lexer_differential", "whitespace-only", " \n\t ", BOTH),
]
