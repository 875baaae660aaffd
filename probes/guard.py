"""The guard: the second wall between model-written SQL and a warehouse (issue 13).

The first wall is the warehouse's own privileges (a login role that can only read) and the
caps during execution in `probes.execution`; the guard is advice that refuses early and
says why. It works in three steps, and refuses at the first that fails:

1. Before parsing, the raw text (`probes.guard_text`): over `WAREHOUSE_MAX_SQL_BYTES`, not
   valid UTF-8, a control character (tab, CR and LF are fine), or anything two readers
   (sqlglot and the database) could read differently: `U&` identifiers and strings,
   `UESCAPE`, a backslash in a quoted identifier, `E'...'` escape strings, dollar quoting,
   nested block comments (PostgreSQL nests them, SQLite does not).
2. Parsing, once per text and dialect (`parse_sql`, cached): the guard, the fingerprint,
   the verifier and the fan-out detector share the tree. Exactly one statement.
3. After parsing, one walk over the tree (`probes.guard_tree`): a query at the root and no
   statement, write, lock, or session clause anywhere; every function on the dialect's
   allow-list; nothing beyond the grant (`probes.guard_visibility`); no more parse-tree
   nodes, depth, CTEs or joins than the settings allow (`probes.guard_limits`); nothing that
   grows past its limit inside one call (`probes.guard_growth`); a recursive CTE only when it
   provably stops (`probes.guard_recursive`).
"""

import functools
import logging
import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from probes.allowlist import sqlglot_dialect
from probes.guard_duckdb import duckdb_text_refusal
from probes.guard_limits import GuardLimits, current_limits
from probes.guard_mysql import mysql_text_refusal
from probes.guard_text import text_refusal
from probes.guard_tree import GuardResult, guard_tree

# sqlglot logs a warning when it falls back to an opaque Command; the guard refuses those.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


def _no_refusal(sql: str) -> None:
    return None


# A dialect's own refusals before parsing (issue 34): what its server and sqlglot read differently.
DIALECT_TEXT_REFUSALS = {"mysql": mysql_text_refusal, "duckdb": duckdb_text_refusal}


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


@dataclass(frozen=True)
class ParsedSQL:
    """A text read once: its statements (shared, do not mutate) and the guard's verdict.

    `stage` says where it stopped: "text" (refused before parsing), "syntax" (not one
    statement of SQL), "guard" (parsed, refused by the checks on the tree) or "ok".
    """

    dialect: str
    statements: tuple[exp.Expression, ...]
    verdict: GuardResult
    stage: str
    syntax_error: str | None = None

    @property
    def tree(self) -> exp.Expression | None:
        return self.statements[0] if len(self.statements) == 1 else None


def parse_sql(sql: str, dialect: str) -> ParsedSQL:
    """Read a text in a dialect, once: later calls with the same text share the result."""
    limits = current_limits()
    if sql and len(sql) > limits.max_bytes:
        # Refused unread; not cached, so a few huge posted texts cannot fill memory.
        return _parse_cached.__wrapped__(sql, sqlglot_dialect(dialect), limits)
    return _parse_cached(sql or "", sqlglot_dialect(dialect), limits)


@functools.lru_cache(maxsize=64)
def _parse_cached(sql: str, dialect: str, limits: GuardLimits) -> ParsedSQL:
    if not sql.strip():
        return ParsedSQL(dialect, (), GuardResult(False, "empty SQL text", "syntax"), "syntax", "empty SQL text")
    refusal = text_refusal(sql, limits) or DIALECT_TEXT_REFUSALS.get(dialect, _no_refusal)(sql)
    if refusal:
        return ParsedSQL(dialect, (), GuardResult(False, refusal, "text"), "text")
    try:
        statements = tuple(parse_statements(sql, dialect))
    except ParseError as error:
        message = parse_error_message(error)
        return ParsedSQL(dialect, (), GuardResult(False, f"unparseable: {message}", "syntax"), "syntax", message)
    except SqlglotError as error:
        message = f"parse error: {str(error).splitlines()[0]}"
        return ParsedSQL(dialect, (), GuardResult(False, f"unparseable: {message}", "syntax"), "syntax", message)
    except RecursionError:
        message = f"nested too deeply to parse (WAREHOUSE_MAX_SQL_DEPTH is {limits.max_depth})"
        return ParsedSQL(dialect, (), GuardResult(False, f"unparseable: {message}", "syntax"), "syntax", message)
    if len(statements) != 1:
        found = f"exactly one statement is allowed; found {len(statements)}"
        return ParsedSQL(dialect, statements, GuardResult(False, found, "syntax"), "syntax", found)
    verdict = guard_tree(statements[0], dialect, limits, sql)
    return ParsedSQL(dialect, statements, verdict, "ok" if verdict.allowed else "guard")


def guard_sql(sql: str, dialect: str) -> GuardResult:
    """Decide whether a SQL text may be sent to a warehouse of this dialect."""
    return parse_sql(sql, dialect).verdict
