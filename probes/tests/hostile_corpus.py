"""The hostile corpus: SQL texts an attacker (or a confused model) sends down the read-only path.

Every text is written against the shop schema of `probes.tests.shop` (customers, orders,
order_items, shipments, the sequence `shop_seq`, the writing function `shop_wipe()` and the
procedure `shop_wipe_proc()`) or against the server itself. Each belongs to one family
(`FAMILIES`) and names the dialects it is aimed at. `guard_must_refuse` is True for every
text the guard must refuse before anything reaches a database; False marks a text that is
legitimate SQL in shape (a huge result, a slow or memory-hungry but allowed query) which the
execution caps must stop instead (row/byte caps, timeouts, SQLite limits).

The harness in the tests runs each text through every entry point and checks, through a
second connection, that nothing changed. This module only describes the texts.
"""

from dataclasses import dataclass

BOTH = ("sqlite", "postgres")
PG = ("postgres",)
LITE = ("sqlite",)

FAMILIES = (
    "write",
    "multi_statement",
    "lexer_differential",
    "side_effect_function",
    "file_network",
    "sql_in_string",
    "role_setting_escape",
    "lock",
    "catalogue_read",
    "planning_bomb",
    "memory_bomb",
    "time_bomb",
    "huge_result",
)


@dataclass(frozen=True)
class HostileSQL:
    family: str  # one of FAMILIES
    name: str  # unique slug
    sql: str
    dialects: tuple[str, ...]  # subset of ("sqlite", "postgres")
    guard_must_refuse: bool = True


def _cte_chain(count: int) -> str:
    """A chain of CTEs each reading the one before: the planner inlines them all (~27 KB at 900)."""
    parts = ["c0 AS (SELECT order_id, total FROM orders)"]
    parts += [f"c{i} AS (SELECT order_id, total + 1 AS total FROM c{i - 1})" for i in range(1, count)]
    return "WITH " + ", ".join(parts) + f" SELECT count(*) FROM c{count - 1}"


def _nested_subqueries(depth: int) -> str:
    sql = "SELECT order_id FROM orders"
    for _ in range(depth):
        sql = f"SELECT order_id FROM ({sql}) AS s"
    return sql


def _many_joins(count: int) -> str:
    joins = " ".join(f"JOIN orders o{i} ON o{i}.order_id = o0.order_id" for i in range(1, count + 1))
    return f"SELECT count(*) FROM orders o0 {joins}"


def _u_amp(name: str) -> str:
    """Spell a function name as a PostgreSQL Unicode-escaped identifier, hiding its last underscore."""
    head, _, tail = name.rpartition("_")
    return 'U&"' + head + "\\005f" + tail + '"'


_PLUS_CHAIN = "SELECT " + "+".join(["1"] * 100_000)  # ~200 KB: parsed four times it took minutes

# (family, name, sql, dialects) for texts the guard must refuse.
_REFUSED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- write: DML, DDL and writes hidden inside queries -------------------------------
    ("write", "delete", "DELETE FROM shipments", BOTH),
    ("write", "update", "UPDATE orders SET total = 0", BOTH),
    ("write", "insert", "INSERT INTO customers (customer_id, name) VALUES (99, 'Mallory')", BOTH),
    (
        "write",
        "insert-select",
        "INSERT INTO customers (customer_id, name) SELECT customer_id + 1000, name FROM customers",
        BOTH,
    ),
    ("write", "replace-into", "REPLACE INTO customers (customer_id, name) VALUES (1, 'Mallory')", LITE),
    (
        "write",
        "upsert",
        "INSERT INTO customers VALUES (1, 'x', NULL) ON CONFLICT (customer_id) DO UPDATE SET name = 'x'",
        BOTH,
    ),
    ("write", "drop-table", "DROP TABLE shipments", BOTH),
    ("write", "drop-table-cascade", "DROP TABLE orders CASCADE", PG),
    ("write", "truncate", "TRUNCATE shipments", PG),
    ("write", "alter-table", "ALTER TABLE orders ADD COLUMN pwned INTEGER", BOTH),
    ("write", "create-table-as", "CREATE TABLE stolen AS SELECT * FROM customers", BOTH),
    ("write", "create-index", "CREATE INDEX pwned_idx ON orders (status)", BOTH),
    ("write", "create-temp-table", "CREATE TEMP TABLE scratch (x int)", BOTH),
    ("write", "create-view", "CREATE VIEW pwned AS SELECT 1", BOTH),
    ("write", "create-function", "CREATE FUNCTION pwn() RETURNS int LANGUAGE sql AS 'SELECT 1'", PG),
    ("write", "create-trigger", "CREATE TRIGGER t AFTER INSERT ON orders BEGIN DELETE FROM shipments; END", LITE),
    ("write", "create-extension", "CREATE EXTENSION dblink", PG),
    (
        "write",
        "merge",
        "MERGE INTO orders o USING customers c ON o.customer_id = c.customer_id WHEN MATCHED THEN DELETE",
        PG,
    ),
    ("write", "vacuum", "VACUUM", BOTH),
    ("write", "vacuum-into", "VACUUM INTO '/tmp/docket-probes-pwned.db'", LITE),
    ("write", "analyze", "ANALYZE orders", BOTH),
    ("write", "reindex", "REINDEX TABLE orders", PG),
    ("write", "cluster", "CLUSTER orders", PG),
    ("write", "refresh-matview", "REFRESH MATERIALIZED VIEW pwned", PG),
    ("write", "comment-on", "COMMENT ON TABLE orders IS 'pwned'", PG),
    ("write", "grant", "GRANT ALL ON orders TO PUBLIC", PG),
    ("write", "revoke", "REVOKE SELECT ON orders FROM PUBLIC", PG),
    ("write", "delete-in-cte", "WITH d AS (DELETE FROM shipments RETURNING *) SELECT count(*) FROM d", PG),
    ("write", "update-in-cte", "WITH u AS (UPDATE orders SET total = 0 RETURNING order_id) SELECT count(*) FROM u", PG),
    (
        "write",
        "insert-in-cte",
        "WITH i AS (INSERT INTO customers (customer_id, name) VALUES (98, 'Eve') RETURNING *) SELECT * FROM i",
        PG,
    ),
    ("write", "delete-after-cte", "WITH x AS (SELECT 1) DELETE FROM shipments", BOTH),
    (
        "write",
        "nested-cte-delete",
        "WITH a AS (SELECT 1), b AS (WITH c AS (DELETE FROM shipments RETURNING 1) SELECT * FROM c) SELECT * FROM b",
        PG,
    ),
    ("write", "select-into", "SELECT * INTO orders_copy FROM orders", PG),
    ("write", "select-into-temp", "SELECT * INTO TEMP scratch FROM orders", PG),
    ("write", "writing-function-in-select", "SELECT shop_wipe()", PG),
    ("write", "writing-function-in-where", "SELECT order_id FROM orders WHERE shop_wipe() > 0", PG),
    ("write", "writing-function-in-from", "SELECT * FROM shop_wipe()", PG),
    ("write", "call-procedure", "CALL shop_wipe_proc()", PG),
    ("write", "do-block", "DO $$ BEGIN DELETE FROM shipments; END $$", PG),
    ("write", "explain-analyze-delete", "EXPLAIN ANALYZE DELETE FROM shipments", PG),
    ("write", "explain-select", "EXPLAIN SELECT * FROM orders", BOTH),
    ("write", "bare-values", "VALUES (1)", BOTH),
    # --- multi_statement ----------------------------------------------------------------
    ("multi_statement", "select-then-delete", "SELECT * FROM orders; DELETE FROM shipments", BOTH),
    ("multi_statement", "two-selects", "SELECT 1; SELECT 2", BOTH),
    ("multi_statement", "stacked-drop-with-comment", "SELECT 1;DROP TABLE shipments;--", BOTH),
    ("multi_statement", "many-semicolons", "SeLeCt * FrOm orders;;;  DeLeTe FROM shipments", BOTH),
    ("multi_statement", "union-then-drop", "(SELECT 1) UNION (SELECT 2); DROP TABLE shipments", BOTH),
    ("multi_statement", "begin-commit", "BEGIN; DELETE FROM shipments; COMMIT", BOTH),
    ("multi_statement", "rollback-then-write", "ROLLBACK; SET TRANSACTION READ WRITE; DELETE FROM shipments", PG),
    ("multi_statement", "commit-then-write", "SELECT 1; COMMIT; DELETE FROM shipments", BOTH),
    ("multi_statement", "select-then-set-role", "SELECT 1; SET ROLE postgres", PG),
    ("multi_statement", "newline-separated", "SELECT 1\n;\nUPDATE orders SET total = 0", BOTH),
    ("multi_statement", "comment-before-delete", "/* just a comment */ DELETE FROM shipments", BOTH),
    ("multi_statement", "comment-inside-keyword-gap", "DELETE/**/FROM shipments", BOTH),
    (
        "multi_statement",
        "escaped-quote-then-delete",
        "SELECT 'x''; DELETE FROM shipments; --' AS x; DELETE FROM shipments",
        BOTH,
    ),
    # --- lexer_differential: texts sqlglot and the database could read differently -------
    (
        "lexer_differential",
        "u-amp-terminate-backend",
        f"SELECT {_u_amp('pg_terminate_backend')}(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
        PG,
    ),
    (
        "lexer_differential",
        "u-amp-cancel-backend",
        f"SELECT {_u_amp('pg_cancel_backend')}(pid) FROM pg_stat_activity",
        PG,
    ),
    ("lexer_differential", "u-amp-set-config-role", f"SELECT {_u_amp('set_config')}('role', 'none', true)", PG),
    ("lexer_differential", "u-amp-read-file", f"SELECT {_u_amp('pg_read_file')}('/etc/passwd')", PG),
    ("lexer_differential", "u-amp-ls-dir", f"SELECT {_u_amp('pg_ls_dir')}('.')", PG),
    ("lexer_differential", "u-amp-lo-export", f"SELECT {_u_amp('lo_export')}(1, '/tmp/docket-probes-pwned')", PG),
    ("lexer_differential", "u-amp-stat-reset", f"SELECT {_u_amp('pg_stat_reset')}()", PG),
    ("lexer_differential", "u-amp-advisory-lock", f"SELECT {_u_amp('pg_advisory_lock')}(42)", PG),
    ("lexer_differential", "u-amp-sleep", f"SELECT {_u_amp('pg_sleep')}(30)", PG),
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
    # --- side_effect_function ------------------------------------------------------------
    ("side_effect_function", "terminate-backend", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity", PG),
    ("side_effect_function", "terminate-own-backend", "SELECT pg_terminate_backend(pg_backend_pid())", PG),
    ("side_effect_function", "cancel-backend", "SELECT pg_cancel_backend(pg_backend_pid())", PG),
    ("side_effect_function", "stat-reset", "SELECT pg_stat_reset()", PG),
    ("side_effect_function", "stat-reset-shared", "SELECT pg_stat_reset_shared('bgwriter')", PG),
    ("side_effect_function", "stat-reset-table", "SELECT pg_stat_reset_single_table_counters('orders'::regclass)", PG),
    ("side_effect_function", "stat-statements-reset", "SELECT pg_stat_statements_reset()", PG),
    ("side_effect_function", "reload-conf", "SELECT pg_reload_conf()", PG),
    ("side_effect_function", "rotate-logfile", "SELECT pg_rotate_logfile()", PG),
    ("side_effect_function", "switch-wal", "SELECT pg_switch_wal()", PG),
    ("side_effect_function", "create-restore-point", "SELECT pg_create_restore_point('docket')", PG),
    ("side_effect_function", "notify", "SELECT pg_notify('docket', 'hello')", PG),
    ("side_effect_function", "logical-emit-message", "SELECT pg_logical_emit_message(true, 'docket', 'hello')", PG),
    ("side_effect_function", "nextval", "SELECT nextval('shop_seq')", PG),
    ("side_effect_function", "setval", "SELECT setval('shop_seq', 100)", PG),
    ("side_effect_function", "currval", "SELECT currval('shop_seq')", PG),
    ("side_effect_function", "lastval", "SELECT lastval()", PG),
    ("side_effect_function", "txid-current", "SELECT txid_current()", PG),
    ("side_effect_function", "current-xact-id", "SELECT pg_current_xact_id()", PG),
    ("side_effect_function", "export-snapshot", "SELECT pg_export_snapshot()", PG),
    ("side_effect_function", "upper-case-terminate", "SELECT PG_TERMINATE_BACKEND(PID) FROM PG_STAT_ACTIVITY", PG),
    ("side_effect_function", "quoted-function-name", 'SELECT "pg_terminate_backend"(pid) FROM pg_stat_activity', PG),
    (
        "side_effect_function",
        "schema-qualified-terminate",
        "SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_stat_activity",
        PG,
    ),
    ("side_effect_function", "unknown-user-function", "SELECT shop_wipe() AS n", PG),
    ("side_effect_function", "changes", "SELECT changes(), total_changes(), last_insert_rowid()", LITE),
    # --- file_network ----------------------------------------------------------------------
    ("file_network", "read-file", "SELECT pg_read_file('/etc/passwd')", PG),
    ("file_network", "read-binary-file", "SELECT pg_read_binary_file('/etc/passwd')", PG),
    ("file_network", "read-file-in-from", "SELECT * FROM pg_read_file('/etc/hostname') AS f(x)", PG),
    ("file_network", "ls-dir", "SELECT pg_ls_dir('.')", PG),
    ("file_network", "ls-logdir", "SELECT * FROM pg_ls_logdir()", PG),
    ("file_network", "ls-waldir", "SELECT * FROM pg_ls_waldir()", PG),
    ("file_network", "stat-file", "SELECT pg_stat_file('postgresql.conf')", PG),
    ("file_network", "lo-import", "SELECT lo_import('/etc/passwd')", PG),
    ("file_network", "lo-export", "SELECT lo_export(lo_from_bytea(0, 'pwned'), '/tmp/docket-probes-pwned')", PG),
    ("file_network", "lo-create", "SELECT lo_create(0)", PG),
    ("file_network", "lo-unlink", "SELECT lo_unlink(1)", PG),
    ("file_network", "lo-from-bytea", "SELECT lo_from_bytea(0, 'x')", PG),
    ("file_network", "lo-get", "SELECT lo_get(1)", PG),
    ("file_network", "lo-put", "SELECT lo_put(1, 0, 'x')", PG),
    ("file_network", "dblink", "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(x int)", PG),
    ("file_network", "dblink-exec", "SELECT dblink_exec('dbname=postgres', 'DELETE FROM shipments')", PG),
    ("file_network", "dblink-connect", "SELECT dblink_connect('host=127.0.0.1 dbname=postgres')", PG),
    ("file_network", "copy-to-stdout", "COPY orders TO STDOUT", PG),
    ("file_network", "copy-from-file", "COPY orders FROM '/etc/passwd'", PG),
    ("file_network", "copy-to-file", "COPY orders TO '/tmp/docket-probes-pwned'", PG),
    ("file_network", "copy-to-program", "COPY (SELECT 1) TO PROGRAM 'touch /tmp/docket-probes-pwned'", PG),
    ("file_network", "load-extension", "SELECT load_extension('/tmp/evil')", LITE),
    ("file_network", "readfile", "SELECT readfile('/etc/passwd')", LITE),
    ("file_network", "writefile", "SELECT writefile('/tmp/docket-probes-pwned', 'x')", LITE),
    ("file_network", "fts3-tokenizer", "SELECT fts3_tokenizer('simple')", LITE),
    ("file_network", "attach", "ATTACH DATABASE '/tmp/docket-probes-pwned.db' AS pwned", LITE),
    ("file_network", "detach", "DETACH DATABASE main", LITE),
    ("file_network", "call-pg-stat-file", "SELECT pg_stat_file('.')", PG),
    ("file_network", "call-lo-export", "SELECT lo_export(1, '/tmp/docket-probes-pwned')", PG),
    ("file_network", "call-dblink", "SELECT dblink('dbname=postgres', 'DELETE FROM shipments')", PG),
    ("file_network", "inet-server-addr", "SELECT inet_server_addr(), inet_server_port()", PG),
    # --- sql_in_string: functions that run SQL held in a string ----------------------------
    (
        "sql_in_string",
        "query-to-xml-delete",
        "SELECT query_to_xml('DELETE FROM shipments RETURNING 1', true, true, '')",
        PG,
    ),
    ("sql_in_string", "query-to-xml-and-schema", "SELECT query_to_xml_and_xmlschema('SELECT 1', true, true, '')", PG),
    ("sql_in_string", "query-to-xml-sleep", "SELECT query_to_xml('SELECT pg_sleep(30)', true, true, '')", PG),
    ("sql_in_string", "cursor-to-xml", "SELECT cursor_to_xml('c', 1, true, true, '')", PG),
    ("sql_in_string", "table-to-xml", "SELECT table_to_xml('orders', true, true, '')", PG),
    ("sql_in_string", "schema-to-xml", "SELECT schema_to_xml('public', true, true, '')", PG),
    ("sql_in_string", "database-to-xml", "SELECT database_to_xml(true, true, '')", PG),
    ("sql_in_string", "ts-stat", "SELECT * FROM ts_stat('SELECT to_tsvector(pg_read_file(''/etc/passwd''))')", PG),
    (
        "sql_in_string",
        "ts-stat-terminate",
        "SELECT * FROM ts_stat('SELECT pg_terminate_backend(pid)::text::tsvector FROM pg_stat_activity')",
        PG,
    ),
    (
        "sql_in_string",
        "ts-rewrite",
        "SELECT ts_rewrite('a & b'::tsquery, 'SELECT t, s FROM (SELECT pg_sleep(30)) x(t, s)')",
        PG,
    ),
    ("sql_in_string", "xpath-of-query", "SELECT xpath('/row', query_to_xml('SELECT 1', true, true, ''))", PG),
    ("sql_in_string", "prepare", "PREPARE p AS DELETE FROM shipments", PG),
    ("sql_in_string", "execute", "EXECUTE p", PG),
    ("sql_in_string", "declare-cursor", "DECLARE c CURSOR FOR SELECT 1", PG),
    ("sql_in_string", "dblink-in-string", "SELECT dblink_exec('', 'DROP TABLE shipments')", PG),
    # --- role_setting_escape ---------------------------------------------------------------
    ("role_setting_escape", "set-config-role", "SELECT set_config('role', 'none', true)", PG),
    (
        "role_setting_escape",
        "set-config-read-only-off",
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        PG,
    ),
    ("role_setting_escape", "set-config-timeout", "SELECT set_config('statement_timeout', '0', true)", PG),
    (
        "role_setting_escape",
        "set-config-in-where",
        "SELECT count(*) FROM orders WHERE set_config('role', 'none', true) IS NOT NULL",
        PG,
    ),
    ("role_setting_escape", "current-setting", "SELECT current_setting('data_directory')", PG),
    ("role_setting_escape", "set-role", "SET ROLE postgres", PG),
    ("role_setting_escape", "reset-role", "RESET ROLE", PG),
    ("role_setting_escape", "set-session-authorization", "SET SESSION AUTHORIZATION postgres", PG),
    ("role_setting_escape", "set-timeout", "SET statement_timeout = 0", PG),
    ("role_setting_escape", "set-local-timeout", "SET LOCAL statement_timeout = 0", PG),
    ("role_setting_escape", "read-write", "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", PG),
    ("role_setting_escape", "set-transaction-read-write", "SET TRANSACTION READ WRITE", PG),
    ("role_setting_escape", "start-read-write", "START TRANSACTION READ WRITE", PG),
    ("role_setting_escape", "reset-all", "RESET ALL", PG),
    ("role_setting_escape", "alter-system", "ALTER SYSTEM SET statement_timeout = 0", PG),
    ("role_setting_escape", "alter-role", "ALTER ROLE CURRENT_USER SUPERUSER", PG),
    ("role_setting_escape", "pragma-query-only-off", "PRAGMA query_only = OFF", LITE),
    ("role_setting_escape", "pragma-writable-schema", "PRAGMA writable_schema = ON", LITE),
    ("role_setting_escape", "pragma-function", "SELECT * FROM pragma_compile_options()", LITE),
    ("role_setting_escape", "listen", "LISTEN docket", PG),
    ("role_setting_escape", "notify-statement", "NOTIFY docket, 'hello'", PG),
    ("role_setting_escape", "show-all", "SHOW ALL", PG),
    # --- lock ------------------------------------------------------------------------------
    ("lock", "for-update", "SELECT * FROM orders FOR UPDATE", PG),
    ("lock", "for-share", "SELECT * FROM orders FOR SHARE", PG),
    ("lock", "for-no-key-update", "SELECT * FROM orders FOR NO KEY UPDATE", PG),
    ("lock", "for-key-share", "SELECT * FROM orders FOR KEY SHARE", PG),
    ("lock", "for-update-skip-locked", "SELECT * FROM orders FOR UPDATE SKIP LOCKED", PG),
    (
        "lock",
        "nested-for-update",
        "SELECT * FROM orders WHERE order_id IN (SELECT order_id FROM orders FOR UPDATE)",
        PG,
    ),
    ("lock", "lock-table", "LOCK TABLE orders IN ACCESS EXCLUSIVE MODE", PG),
    ("lock", "advisory-lock", "SELECT pg_advisory_lock(42)", PG),
    ("lock", "advisory-xact-lock", "SELECT pg_advisory_xact_lock(42)", PG),
    ("lock", "try-advisory-lock", "SELECT pg_try_advisory_lock(42)", PG),
    ("lock", "advisory-lock-shared", "SELECT pg_advisory_lock_shared(42)", PG),
    ("lock", "advisory-lock-per-row", "SELECT pg_advisory_lock(order_id) FROM orders", PG),
    ("lock", "advisory-unlock-all", "SELECT pg_advisory_unlock_all()", PG),
    ("lock", "begin-exclusive", "BEGIN EXCLUSIVE", LITE),
    # --- catalogue_read --------------------------------------------------------------------
    ("catalogue_read", "stat-activity", "SELECT pid, usename, query FROM pg_stat_activity", PG),
    ("catalogue_read", "shadow", "SELECT usename, passwd FROM pg_shadow", PG),
    ("catalogue_read", "authid", "SELECT rolname, rolpassword FROM pg_authid", PG),
    ("catalogue_read", "roles", "SELECT rolname, rolsuper FROM pg_roles", PG),
    ("catalogue_read", "settings", "SELECT name, setting FROM pg_settings", PG),
    ("catalogue_read", "file-settings", "SELECT * FROM pg_file_settings", PG),
    ("catalogue_read", "hba-file-rules", "SELECT * FROM pg_hba_file_rules", PG),
    ("catalogue_read", "qualified-class", "SELECT relname FROM pg_catalog.pg_class", PG),
    ("catalogue_read", "qualified-proc", "SELECT proname, prosrc FROM pg_catalog.pg_proc", PG),
    ("catalogue_read", "database", "SELECT datname FROM pg_database", PG),
    ("catalogue_read", "largeobject", "SELECT * FROM pg_largeobject", PG),
    ("catalogue_read", "stat-statements", "SELECT query FROM pg_stat_statements", PG),
    (
        "catalogue_read",
        "catalogue-in-subquery",
        "SELECT count(*) FROM orders WHERE customer_id IN (SELECT usesysid FROM pg_user)",
        PG,
    ),
    ("catalogue_read", "catalogue-in-cte", "WITH s AS (SELECT * FROM pg_stat_ssl) SELECT * FROM s", PG),
    ("catalogue_read", "quoted-catalogue", 'SELECT * FROM "pg_catalog"."pg_authid"', PG),
    ("catalogue_read", "sqlite-master", "SELECT sql FROM sqlite_master", LITE),
    ("catalogue_read", "sqlite-schema", "SELECT name, sql FROM sqlite_schema", LITE),
    ("catalogue_read", "sqlite-temp-master", "SELECT * FROM sqlite_temp_master", LITE),
    ("catalogue_read", "main-sqlite-master", "SELECT * FROM main.sqlite_master", LITE),
    ("catalogue_read", "pragma-table-info", "SELECT * FROM pragma_table_info('orders')", LITE),
    ("catalogue_read", "server-version", "SELECT version()", PG),
    # --- planning_bomb -----------------------------------------------------------------------
    ("planning_bomb", "cte-chain-900", _cte_chain(900), BOTH),
    ("planning_bomb", "cte-chain-1500", _cte_chain(1500), BOTH),
    ("planning_bomb", "cte-chain-120", _cte_chain(120), BOTH),
    ("planning_bomb", "plus-chain-200kb", _PLUS_CHAIN, BOTH),
    ("planning_bomb", "joins-120", _many_joins(120), BOTH),
    ("planning_bomb", "nested-subqueries-300", _nested_subqueries(300), BOTH),
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

# Texts the guard may allow: legitimate shapes whose cost only execution caps can bound.
_CAPPED: list[tuple[str, str, str, tuple[str, ...]]] = [
    # --- harmless tricks: a read that only looks dangerous; running it must change nothing --
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

CORPUS: tuple[HostileSQL, ...] = tuple(
    [HostileSQL(family, name, sql, dialects) for family, name, sql, dialects in _REFUSED]
    + [HostileSQL(family, name, sql, dialects, guard_must_refuse=False) for family, name, sql, dialects in _CAPPED]
)
