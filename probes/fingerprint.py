"""A normalised fingerprint of a SQL text: same query, same fingerprint.

Whitespace, keyword and identifier case, comments, `AS` or no `AS`, and the names chosen
for table aliases do not change it; anything that changes what the query means does.
"""

import hashlib

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from probes.allowlist import SQLGLOT_DIALECTS as DIALECTS
from probes.allowlist import sqlglot_dialect
from probes.guard import parse_sql

__all__ = ["DIALECTS", "canonical_sql", "sql_fingerprint", "sqlglot_dialect"]


def _rename_table_aliases(tree: exp.Expression) -> exp.Expression:
    """Replace table aliases with positional names (t1, t2, ...) in order of appearance."""
    renames: dict[str, str] = {}
    for table in tree.find_all(exp.Table):
        alias = table.alias
        if alias and alias not in renames:
            renames[alias] = f"t{len(renames) + 1}"
            table.set("alias", exp.TableAlias(this=exp.to_identifier(renames[alias])))
        elif alias in renames:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(renames[alias])))
    for column in tree.find_all(exp.Column):
        if column.table in renames:
            column.set("table", exp.to_identifier(renames[column.table]))
    return tree


def canonical_sql(sql: str, dialect: str = "sqlite") -> str:
    """Return the canonical text the fingerprint hashes; the stripped text if unparseable.

    The tree comes from the guard's shared parse (`parse_sql`) and is copied before it is
    normalised. A text the guard refused before parsing is parsed here on its own, unless
    it is over the size limits, which are never parsed at all.
    """
    read = sqlglot_dialect(dialect)
    parsed = parse_sql(sql, dialect)
    if parsed.tree is not None:
        tree = parsed.tree.copy()
    elif (parsed.stage == "syntax" and not parsed.statements) or "WAREHOUSE_MAX_SQL" in (parsed.verdict.reason or ""):
        return _stripped(sql)  # not SQL, or too large to parse
    else:
        try:
            tree = sqlglot.parse_one(sql, read=read)
        except (SqlglotError, RecursionError, UnicodeError):
            return _stripped(sql)
    tree = normalize_identifiers(tree, dialect=read)
    tree = _rename_table_aliases(tree)
    return tree.sql(dialect=read, normalize=True, comments=False)


def _stripped(sql: str) -> str:
    return " ".join(sql.split()).lower()


def sql_fingerprint(sql: str, dialect: str = "sqlite") -> str:
    """Return a 64-hex-digit fingerprint of the SQL's normalised form."""
    return hashlib.sha256(canonical_sql(sql, dialect).encode("utf-8", "surrogatepass")).hexdigest()
