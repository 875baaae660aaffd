"""Warehouse settings, imported by `config/settings.py`: the guard's limits and the walls during execution.

Each value is read from the environment by `config/env.py`'s helpers and fails loudly on a
bad value. README "Configuration" lists every one; a new dialect adds its block here.
"""

from config.env import env_bool, env_positive_float, env_positive_int

# --- SQL guard: size and shape limits checked before a text reaches a database (issue 13) --
# Each refusal names the setting it hit. Real analysts' SQL (the defog gold set) stays far
# below every one: at most ~900 bytes, 140 parse-tree nodes, depth 14, 3 CTEs, 4 joins.
WAREHOUSE_MAX_SQL_BYTES = env_positive_int("WAREHOUSE_MAX_SQL_BYTES", 65_536)
WAREHOUSE_MAX_SQL_NODES = env_positive_int("WAREHOUSE_MAX_SQL_NODES", 5_000)
WAREHOUSE_MAX_SQL_DEPTH = env_positive_int("WAREHOUSE_MAX_SQL_DEPTH", 100)
WAREHOUSE_MAX_SQL_CTES = env_positive_int("WAREHOUSE_MAX_SQL_CTES", 32)
WAREHOUSE_MAX_SQL_JOINS = env_positive_int("WAREHOUSE_MAX_SQL_JOINS", 32)
# A recursive CTE must be bounded: a literal LIMIT (+ OFFSET) no larger than this, or a counter
# predicate the guard can prove stops within this many steps, or read only as a stream.
WAREHOUSE_MAX_RECURSIVE_ROWS = env_positive_int("WAREHOUSE_MAX_RECURSIVE_ROWS", 1_000_000)
# What may grow inside one function call (issue 27): a string literal, a string the text
# builds (repeat/lpad/rpad/format widths and what is concatenated from them), a pattern or
# search argument (LIKE, regex, strpos, translate, trim sets), and grouping sets per GROUP BY.
WAREHOUSE_MAX_SQL_LITERAL_BYTES = env_positive_int("WAREHOUSE_MAX_SQL_LITERAL_BYTES", 4096)
WAREHOUSE_MAX_SQL_WIDTH = env_positive_int("WAREHOUSE_MAX_SQL_WIDTH", 10_000)
WAREHOUSE_MAX_SQL_PATTERN_BYTES = env_positive_int("WAREHOUSE_MAX_SQL_PATTERN_BYTES", 512)
WAREHOUSE_MAX_SQL_GROUPING_SETS = env_positive_int("WAREHOUSE_MAX_SQL_GROUPING_SETS", 64)
# --- end of SQL guard limits ---------------------------------------------------------------

# --- Warehouse security: the role check and the caps during execution (issue 13) --------
# A PostgreSQL warehouse whose login role can do more than read is refused; this lets it
# run anyway, for the deliberately insecure case only (shown in red on every page).
WAREHOUSE_ALLOW_UNSAFE_ROLE = env_bool("WAREHOUSE_ALLOW_UNSAFE_ROLE", False)
# A result stops at the row cap or at this many bytes, whichever comes first.
WAREHOUSE_RESULT_MAX_BYTES = env_positive_int("WAREHOUSE_RESULT_MAX_BYTES", 1_048_576)
# A longer cell is cut to this many bytes (on the server for PostgreSQL) and marked.
WAREHOUSE_CELL_MAX_BYTES = env_positive_int("WAREHOUSE_CELL_MAX_BYTES", 16_384)
# PostgreSQL planner limits for model SQL (join_collapse_limit, from_collapse_limit; and
# geqo_threshold): planning stays short enough for the statement timeout to hold.
WAREHOUSE_PG_COLLAPSE_LIMIT = env_positive_int("WAREHOUSE_PG_COLLAPSE_LIMIT", 8)
WAREHOUSE_PG_GEQO_THRESHOLD = max(2, env_positive_int("WAREHOUSE_PG_GEQO_THRESHOLD", 8))
# PostgreSQL cost limits (issue 27): per session where a reader may set them, and carried by
# the reader role itself (ALTER ROLE ... SET), which the role check requires at most these.
WAREHOUSE_PG_WORK_MEM_KB = env_positive_int("WAREHOUSE_PG_WORK_MEM_KB", 4096)
WAREHOUSE_PG_HASH_MEM_MULTIPLIER = env_positive_float("WAREHOUSE_PG_HASH_MEM_MULTIPLIER", 1.0)
WAREHOUSE_PG_TEMP_FILE_LIMIT_KB = env_positive_int("WAREHOUSE_PG_TEMP_FILE_LIMIT_KB", 262_144)
WAREHOUSE_PG_ROLE_STATEMENT_TIMEOUT_S = env_positive_float("WAREHOUSE_PG_ROLE_STATEMENT_TIMEOUT_S", 30.0)
# SQLite: the longest string or blob a query may build, the heap SQLite may use, and the
# address space and CPU slack of the process of its own each query runs in.
WAREHOUSE_SQLITE_MAX_LENGTH = env_positive_int("WAREHOUSE_SQLITE_MAX_LENGTH", 8_388_608)
WAREHOUSE_SQLITE_HEAP_LIMIT = env_positive_int("WAREHOUSE_SQLITE_HEAP_LIMIT", 134_217_728)
WAREHOUSE_SQLITE_PROCESS_MEMORY = env_positive_int("WAREHOUSE_SQLITE_PROCESS_MEMORY", 268_435_456)
# DuckDB (issue 34): the memory and threads one query's connection may use.
WAREHOUSE_DUCKDB_MEMORY_LIMIT_MB = env_positive_int("WAREHOUSE_DUCKDB_MEMORY_LIMIT_MB", 256)
WAREHOUSE_DUCKDB_THREADS = env_positive_int("WAREHOUSE_DUCKDB_THREADS", 1)
# --- end of warehouse security ------------------------------------------------------------
