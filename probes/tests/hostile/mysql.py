"""The hostile corpus's MySQL / MariaDB family (issue 34): one group of texts per attack kind.

Written against the demo warehouse's tables (`probes.mysql_demo`: regions, customers,
orders, order_items, payments, ...) or against the server itself. `REFUSED` texts the guard
must refuse before anything reaches the server; `CAPPED` texts are queries in shape that the
server's enforcement and the caps must stop (statement time, row and byte caps); `BENIGN`
texts must run. `{outfile}` is replaced by a path the test watches.
"""

REFUSED: list[tuple[str, str, str]] = [
    # --- write ---------------------------------------------------------------------------
    ("write", "delete", "DELETE FROM payments"),
    ("write", "update", "UPDATE orders SET order_total = 0"),
    ("write", "insert", "INSERT INTO regions VALUES (99, 'x', 'y')"),
    ("write", "replace", "REPLACE INTO regions VALUES (1, 'x', 'y')"),
    ("write", "insert-ignore", "INSERT IGNORE INTO regions VALUES (1, 'x', 'y')"),
    ("write", "drop", "DROP TABLE payments"),
    ("write", "truncate", "TRUNCATE TABLE payments"),
    ("write", "alter", "ALTER TABLE orders ADD COLUMN pwned INT"),
    ("write", "create-table-select", "CREATE TABLE stolen AS SELECT * FROM customers"),
    ("write", "create-temporary", "CREATE TEMPORARY TABLE scratch (x INT)"),
    ("write", "rename", "RENAME TABLE payments TO gone"),
    ("write", "multi-table-delete", "DELETE o FROM orders o JOIN payments p ON p.order_id = o.order_id"),
    ("write", "optimize", "OPTIMIZE TABLE orders"),
    # --- multi_statement -----------------------------------------------------------------
    ("multi_statement", "select-then-delete", "SELECT 1; DELETE FROM payments"),
    ("multi_statement", "select-then-drop", "SELECT * FROM regions; DROP TABLE regions"),
    ("multi_statement", "comment-hidden", "SELECT 1 -- ;\n; DELETE FROM payments"),
    # --- lexer_differential: what sqlglot and the server could read differently ----------
    ("lexer_differential", "backslash-quote", "SELECT 'a\\' OR 1 = 1 -- ' FROM regions"),
    ("lexer_differential", "backslash-in-double", 'SELECT "a\\" , (DELETE FROM payments) -- " FROM regions'),
    ("lexer_differential", "executable-comment", "SELECT 1 /*! , SLEEP(5) */ FROM regions"),
    ("lexer_differential", "mariadb-executable-comment", "SELECT 1 /*M! , SLEEP(5) */ FROM regions"),
    ("lexer_differential", "versioned-comment", "SELECT 1 /*!50000 UNION SELECT user FROM mysql.user */"),
    ("lexer_differential", "hash-comment", "SELECT region_id FROM regions # WHERE 1 = 0"),
    ("lexer_differential", "hash-newline", "SELECT region_id FROM regions #\n; DELETE FROM payments"),
    ("lexer_differential", "dash-dash-no-space", "SELECT 1--1 FROM regions"),
    ("lexer_differential", "user-variable-assign", "SELECT @x := region_id FROM regions"),
    ("lexer_differential", "user-variable-read", "SELECT @x FROM regions"),
    ("lexer_differential", "system-variable", "SELECT @@global.secure_file_priv"),
    ("lexer_differential", "client-g", "SELECT * FROM regions\\G"),
    ("lexer_differential", "backslash-n-null", "SELECT \\N FROM regions"),
    ("lexer_differential", "odbc-escape", "SELECT {fn user()} FROM regions"),
    ("lexer_differential", "optimizer-hint-time", "SELECT /*+ MAX_EXECUTION_TIME(999999) */ * FROM order_items"),
    ("lexer_differential", "set-var-hint", "SELECT /*+ SET_VAR(max_statement_time = 0) */ * FROM order_items"),
    # --- side_effect_function ------------------------------------------------------------
    ("side_effect_function", "sleep", "SELECT SLEEP(5)"),
    ("side_effect_function", "sleep-in-where", "SELECT * FROM regions WHERE SLEEP(1) = 0"),
    ("side_effect_function", "benchmark", "SELECT BENCHMARK(100000000, MD5('x'))"),
    ("side_effect_function", "get-lock", "SELECT GET_LOCK('docket', 10)"),
    ("side_effect_function", "release-all-locks", "SELECT RELEASE_ALL_LOCKS()"),
    ("side_effect_function", "uuid-short", "SELECT UUID_SHORT()"),
    ("side_effect_function", "nextval", "SELECT NEXTVAL(seq)"),
    ("side_effect_function", "last-insert-id", "SELECT LAST_INSERT_ID(99)"),
    ("side_effect_function", "master-pos-wait", "SELECT MASTER_POS_WAIT('log', 4, 10)"),
    ("side_effect_function", "user", "SELECT CURRENT_USER()"),
    ("side_effect_function", "version", "SELECT VERSION()"),
    ("side_effect_function", "connection-id", "SELECT CONNECTION_ID()"),
    # --- file_network --------------------------------------------------------------------
    ("file_network", "into-outfile", "SELECT * FROM customers INTO OUTFILE '{outfile}'"),
    ("file_network", "into-dumpfile", "SELECT email FROM customers LIMIT 1 INTO DUMPFILE '{outfile}'"),
    ("file_network", "into-outfile-after-limit", "SELECT * FROM customers LIMIT 5 INTO OUTFILE '{outfile}'"),
    ("file_network", "load-file", "SELECT LOAD_FILE('/etc/passwd')"),
    ("file_network", "load-data", "LOAD DATA INFILE '/etc/passwd' INTO TABLE regions"),
    ("file_network", "load-data-local", "LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE regions"),
    ("file_network", "into-variable", "SELECT region_name INTO @stolen FROM regions LIMIT 1"),
    # --- sql_in_string -------------------------------------------------------------------
    ("sql_in_string", "prepare", "PREPARE s FROM 'DELETE FROM payments'"),
    ("sql_in_string", "execute", "EXECUTE s"),
    ("sql_in_string", "execute-immediate", "EXECUTE IMMEDIATE 'DELETE FROM payments'"),
    ("sql_in_string", "call", "CALL mysql.rds_kill(1)"),
    ("sql_in_string", "do", "DO SLEEP(5)"),
    # --- role_setting_escape -------------------------------------------------------------
    ("role_setting_escape", "set-session", "SET SESSION max_statement_time = 0"),
    ("role_setting_escape", "set-transaction", "SET SESSION TRANSACTION READ WRITE"),
    ("role_setting_escape", "set-global", "SET GLOBAL general_log = 1"),
    ("role_setting_escape", "set-role", "SET ROLE ALL"),
    ("role_setting_escape", "set-names", "SET NAMES latin1"),
    ("role_setting_escape", "set-statement", "SET STATEMENT max_statement_time = 0 FOR SELECT * FROM order_items"),
    ("role_setting_escape", "grant", "GRANT ALL ON *.* TO CURRENT_USER"),
    ("role_setting_escape", "create-user", "CREATE USER mallory IDENTIFIED BY 'x'"),
    ("role_setting_escape", "kill", "KILL 1"),
    ("role_setting_escape", "flush", "FLUSH PRIVILEGES"),
    ("role_setting_escape", "commit", "COMMIT"),
    ("role_setting_escape", "start-transaction", "START TRANSACTION READ WRITE"),
    ("role_setting_escape", "use", "USE mysql"),
    # --- lock ----------------------------------------------------------------------------
    ("lock", "for-update", "SELECT * FROM orders FOR UPDATE"),
    ("lock", "lock-in-share-mode", "SELECT * FROM orders LOCK IN SHARE MODE"),
    ("lock", "for-update-nowait", "SELECT * FROM orders FOR UPDATE NOWAIT"),
    ("lock", "lock-tables", "LOCK TABLES orders WRITE"),
    ("lock", "handler-open", "HANDLER orders OPEN"),
    ("lock", "flush-tables-read-lock", "FLUSH TABLES WITH READ LOCK"),
    # --- catalogue_read ------------------------------------------------------------------
    ("catalogue_read", "mysql-user", "SELECT user, password FROM mysql.user"),
    ("catalogue_read", "mysql-global-priv", "SELECT * FROM mysql.global_priv"),
    ("catalogue_read", "performance-schema", "SELECT * FROM performance_schema.threads"),
    ("catalogue_read", "sys-schema", "SELECT * FROM sys.session"),
    ("catalogue_read", "information-schema-processlist", "SELECT info FROM information_schema.processlist"),
    ("catalogue_read", "information-schema-tables", "SELECT table_name FROM information_schema.tables"),
    ("catalogue_read", "backticked-mysql", "SELECT * FROM `mysql`.`user`"),
    ("catalogue_read", "show-grants", "SHOW GRANTS"),
    ("catalogue_read", "show-processlist", "SHOW PROCESSLIST"),
    ("catalogue_read", "show-variables", "SHOW VARIABLES"),
    ("catalogue_read", "handler-read", "HANDLER orders READ FIRST"),
    ("catalogue_read", "procedure-analyse", "SELECT * FROM orders PROCEDURE ANALYSE()"),
    ("catalogue_read", "database", "SELECT DATABASE()"),
]

CAPPED: list[tuple[str, str, str]] = [
    ("time_bomb", "triple-cross-join", "SELECT COUNT(*) FROM order_items a JOIN order_items b JOIN order_items c"),
    (
        "time_bomb",
        "distinct-of-a-cross-join",
        "SELECT COUNT(DISTINCT a.order_id * 10000 + b.order_id) FROM orders a JOIN orders b",
    ),
    ("huge_result", "cartesian-rows", "SELECT a.order_item_id, b.order_item_id FROM order_items a JOIN order_items b"),
    ("huge_result", "wide-rows", "SELECT *, REPEAT('x', 60) AS pad FROM order_items"),
]

BENIGN: list[tuple[str, str, str]] = [
    ("benign_analytics", "revenue-by-status", "SELECT status, COUNT(*), SUM(order_total) FROM orders GROUP BY status"),
    (
        "benign_analytics",
        "monthly",
        "SELECT DATE_FORMAT(order_date, '%Y-%m') AS month, SUM(order_total) FROM orders "
        "WHERE status = 'completed' GROUP BY month ORDER BY month LIMIT 24",
    ),
    (
        "benign_analytics",
        "top-customers-window",
        "SELECT customer_id, total, RANK() OVER (ORDER BY total DESC) AS r FROM "
        "(SELECT customer_id, SUM(order_total) AS total FROM orders GROUP BY customer_id) t ORDER BY r LIMIT 10",
    ),
    (
        "benign_analytics",
        "backticks-and-double-quoted-string",
        "SELECT `r`.`region_name`, COUNT(*) FROM `customers` c JOIN regions r ON r.region_id = c.region_id "
        'WHERE r.country = "US" GROUP BY `r`.`region_name`',
    ),
]
