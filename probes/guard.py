"""The read-only guard: the first of three locks between model-written SQL and a warehouse.

The guard parses the text with sqlglot in the warehouse's dialect and admits exactly one
query (SELECT, a set operation, WITH ... SELECT) whose tree holds no data-modifying or DDL
node anywhere, no SELECT ... INTO, no locking clause and no side-effecting function. It is
deliberately strict: anything it cannot parse is refused. The database enforcement in
`probes.execution` runs whatever the guard said, so a guard bug is not a breach by itself.
"""

import logging
import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from probes.fingerprint import sqlglot_dialect

# sqlglot logs a warning when it falls back to an opaque Command; the guard refuses those.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


@dataclass(frozen=True)
class GuardResult:
    allowed: bool
    reason: str | None = None


ALLOWED = GuardResult(True, None)

# Statement or clause nodes that write, change the schema, change the session or escape
# the query language. Any of them anywhere in the tree (a CTE body included) refuses.
FORBIDDEN_NODES: tuple[tuple[type, str], ...] = tuple(
    (getattr(exp, name), label)
    for name, label in [
        ("Insert", "INSERT"),
        ("Update", "UPDATE"),
        ("Delete", "DELETE"),
        ("Merge", "MERGE"),
        ("Create", "CREATE"),
        ("Drop", "DROP"),
        ("Alter", "ALTER"),
        ("TruncateTable", "TRUNCATE"),
        ("Copy", "COPY"),
        ("Set", "SET"),
        ("Pragma", "PRAGMA"),
        ("Attach", "ATTACH"),
        ("Detach", "DETACH"),
        ("Into", "SELECT ... INTO"),
        ("Lock", "a locking clause (FOR UPDATE/SHARE)"),
        ("Transaction", "a transaction statement"),
        ("Commit", "COMMIT"),
        ("Rollback", "ROLLBACK"),
        ("Grant", "GRANT"),
        ("Revoke", "REVOKE"),
        ("Use", "USE"),
        ("Analyze", "ANALYZE"),
        ("LoadData", "LOAD DATA"),
        ("Comment", "COMMENT"),
        ("Refresh", "REFRESH"),
        ("Kill", "KILL"),
        ("Cache", "CACHE"),
        ("Uncache", "UNCACHE"),
        ("Declare", "DECLARE"),
        ("Execute", "EXECUTE"),
        ("Export", "EXPORT"),
        ("Describe", "DESCRIBE"),
        ("Show", "SHOW"),
        ("Command", "a statement sqlglot cannot read as a query"),
    ]
    if hasattr(exp, name)
)

# Side-effecting or dangerous functions: sleeping, session/config changes, sequences,
# locks, server file access, large objects, remote connections, killing backends,
# transaction ids, executors of SQL held in strings, server admin, SQLite extensions.
DENIED_FUNCTIONS = frozenset(
    {
        "pg_sleep",
        "pg_sleep_for",
        "pg_sleep_until",
        "set_config",
        "nextval",
        "setval",
        "currval",
        "lastval",
        "pg_read_file",
        "pg_read_binary_file",
        "pg_ls_dir",
        "pg_stat_file",
        "pg_file_write",
        "pg_file_rename",
        "pg_file_unlink",
        "pg_logdir_ls",
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_switch_wal",
        "pg_create_restore_point",
        "pg_promote",
        "pg_notify",
        "pg_logical_emit_message",
        "pg_current_xact_id",
        "pg_current_xact_id_if_assigned",
        "pg_export_snapshot",
        "pg_import_snapshot",
        "query_to_xml",
        "query_to_xmlschema",
        "query_to_xml_and_xmlschema",
        "cursor_to_xml",
        "cursor_to_xmlschema",
        "table_to_xml",
        "table_to_xmlschema",
        "table_to_xml_and_xmlschema",
        "schema_to_xml",
        "schema_to_xmlschema",
        "schema_to_xml_and_xmlschema",
        "database_to_xml",
        "database_to_xmlschema",
        "database_to_xml_and_xmlschema",
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "fts3_tokenizer",
    }
)
DENIED_PREFIXES = (
    "pg_advisory_",
    "pg_try_advisory_",
    "lo_",
    "dblink",
    "txid_",
    "pg_replication_",
    "pg_create_",
    "pg_drop_",
    "pg_stop_",
    "pg_start_",
    "pg_backup_",
)

ROOT_QUERY_TYPES = (exp.Select, exp.SetOperation, exp.Subquery)


def function_is_denied(name: str) -> bool:
    lowered = name.lower().rsplit(".", 1)[-1]
    return lowered in DENIED_FUNCTIONS or lowered.startswith(DENIED_PREFIXES)


FORBIDDEN_TYPES = tuple(node_type for node_type, _ in FORBIDDEN_NODES)


def _forbidden_label(node: exp.Expression) -> str:
    for node_type, label in FORBIDDEN_NODES:
        if isinstance(node, node_type):
            return label
    return type(node).__name__.upper()


def _function_name(node: exp.Func) -> str:
    return node.name if isinstance(node, exp.Anonymous) else node.sql_name()


def parse_error_message(error: ParseError) -> str:
    """Return 'parse error at line L, column C: description' for the first error."""
    if error.errors:
        first = error.errors[0]
        description = re.sub(r"\x1b\[[0-9;]*m", "", str(first.get("description", "")))
        description = description.split(". Line ")[0]
        incomplete = re.match(r"Required keyword: '\w+' missing for <class '[\w.]+\.(\w+)'>", description)
        if incomplete:
            description = f"incomplete {incomplete.group(1).upper()} clause"
        return f"parse error at line {first.get('line')}, column {first.get('col')}: {description}"
    return f"parse error: {str(error).splitlines()[0]}"


def parse_statements(sql: str, dialect: str) -> list[exp.Expression]:
    """Parse every statement of the text; raise ParseError/SqlglotError if it is not SQL."""
    return [tree for tree in sqlglot.parse(sql, read=sqlglot_dialect(dialect)) if tree is not None]


def guard_tree(tree: exp.Expression) -> GuardResult:
    """Check one parsed statement: a read-only query and nothing else."""
    if not isinstance(tree, ROOT_QUERY_TYPES) or (
        isinstance(tree, exp.Subquery) and not isinstance(tree.unnest(), exp.Query)
    ):
        return GuardResult(False, f"only a query may run; this is {type(tree).__name__.upper()}")
    # One walk over the tree: forbidden statements and clauses, then denied functions.
    for node in tree.walk():
        if isinstance(node, FORBIDDEN_TYPES):
            return GuardResult(False, f"{_forbidden_label(node)} is not allowed in a read-only probe")
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if function_is_denied(name) or function_is_denied(type(node).__name__):
                return GuardResult(False, f"function {name.lower()}() is not allowed")
    return ALLOWED


def guard_sql(sql: str, dialect: str) -> GuardResult:
    """Decide whether a SQL text may be sent to a warehouse of this dialect."""
    if not sql or not sql.strip():
        return GuardResult(False, "empty SQL text")
    if "\x00" in sql:
        return GuardResult(False, "NUL byte in SQL text")
    try:
        statements = parse_statements(sql, dialect)
    except ParseError as error:
        return GuardResult(False, f"unparseable: {parse_error_message(error)}")
    except SqlglotError as error:
        return GuardResult(False, f"unparseable: {str(error).splitlines()[0]}")
    except RecursionError:
        return GuardResult(False, "unparseable: nested too deeply")
    if len(statements) != 1:
        return GuardResult(False, f"exactly one statement is allowed; found {len(statements)}")
    return guard_tree(statements[0])
