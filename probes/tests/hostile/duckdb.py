"""The hostile corpus's DuckDB family (issue 34), against the demo built as DuckDB.

`REFUSED` texts the guard must refuse; `CAPPED` ones the engine's limits and the caps must stop;
`BENIGN` ones must run. `{outfile}` is a path the test watches.
"""

REFUSED: list[tuple[str, str, str]] = [
    ("write", "delete", "DELETE FROM payments"),
    ("write", "update", "UPDATE orders SET order_total = 0"),
    ("write", "insert", "INSERT INTO regions VALUES (99, 'x', 'y')"),
    ("write", "create-table-as", "CREATE TABLE stolen AS SELECT * FROM customers"),
    ("write", "drop", "DROP TABLE payments"),
    ("write", "create-macro", "CREATE MACRO pwn(a) AS a"),
    ("multi_statement", "select-then-delete", "SELECT 1; DELETE FROM payments"),
    ("file_network", "read-csv", "SELECT * FROM read_csv('/etc/passwd')"),
    ("file_network", "read-csv-auto", "SELECT * FROM read_csv_auto('/etc/passwd')"),
    ("file_network", "read-parquet", "SELECT * FROM read_parquet('/tmp/x.parquet')"),
    ("file_network", "read-json", "SELECT * FROM read_json_auto('/tmp/x.json')"),
    ("file_network", "read-text", "SELECT * FROM read_text('/etc/passwd')"),
    ("file_network", "read-blob", "SELECT * FROM read_blob('/etc/passwd')"),
    ("file_network", "replacement-scan", "SELECT * FROM '/etc/passwd'"),
    ("file_network", "replacement-scan-quoted", 'SELECT * FROM "orders.csv"'),
    ("file_network", "glob", "SELECT * FROM glob('/etc/*')"),
    ("file_network", "copy-to", "COPY orders TO '{outfile}'"),
    ("file_network", "copy-select", "COPY (SELECT * FROM customers) TO '{outfile}' (FORMAT csv)"),
    ("file_network", "export-database", "EXPORT DATABASE '/tmp/docket_export'"),
    ("file_network", "attach", "ATTACH '/tmp/other.duckdb' AS other"),
    ("file_network", "httpfs", "SELECT * FROM read_csv('https://example.com/x.csv')"),
    ("side_effect_function", "getenv", "SELECT getenv('HOME')"),
    ("side_effect_function", "nextval", "SELECT nextval('seq')"),
    ("sql_in_string", "query", "SELECT * FROM query('SELECT * FROM duckdb_settings()')"),
    ("sql_in_string", "query-table", "SELECT * FROM query_table('orders')"),
    ("role_setting_escape", "set", "SET enable_external_access = true"),
    ("role_setting_escape", "set-memory", "SET memory_limit = '100GB'"),
    ("role_setting_escape", "reset", "RESET threads"),
    ("role_setting_escape", "pragma", "PRAGMA enable_profiling"),
    ("role_setting_escape", "install", "INSTALL httpfs"),
    ("role_setting_escape", "load", "LOAD httpfs"),
    ("role_setting_escape", "call", "CALL pragma_database_size()"),
    ("role_setting_escape", "use", "USE other"),
    ("role_setting_escape", "checkpoint", "CHECKPOINT"),
    ("catalogue_read", "duckdb-settings", "SELECT * FROM duckdb_settings()"),
    ("catalogue_read", "duckdb-tables", "SELECT * FROM duckdb_tables()"),
    ("catalogue_read", "duckdb-secrets", "SELECT * FROM duckdb_secrets()"),
    ("catalogue_read", "pragma-table-info", "SELECT * FROM pragma_table_info('orders')"),
    ("catalogue_read", "information-schema", "SELECT * FROM information_schema.tables"),
    ("catalogue_read", "which-secret", "SELECT which_secret('s3://x', 's3')"),
]
CAPPED: list[tuple[str, str, str]] = [
    ("time_bomb", "triple-cross-join", "SELECT COUNT(*) FROM order_items a, order_items b, order_items c"),
    ("huge_result", "cartesian-rows", "SELECT a.order_item_id, b.order_item_id FROM order_items a, order_items b"),
]
BENIGN: list[tuple[str, str, str]] = [
    ("benign_analytics", "revenue", "SELECT status, COUNT(*), SUM(order_total) FROM orders GROUP BY status"),
    (
        "benign_analytics",
        "monthly",
        "SELECT strftime(order_date, '%Y-%m') AS month, SUM(order_total) FROM orders GROUP BY ALL ORDER BY 1 LIMIT 24",
    ),
]
