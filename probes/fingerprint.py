"""A normalised fingerprint of a SQL text: same query, same fingerprint.

Whitespace, keyword and identifier case, comments, `AS` or no `AS`, and the names chosen
for table aliases do not change it; anything that changes what the query means does.
"""

import hashlib

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

DIALECTS = {"sqlite": "sqlite", "postgres": "postgres", "postgresql": "postgres"}


def sqlglot_dialect(dialect: str) -> str:
    return DIALECTS.get((dialect or "sqlite").lower(), dialect)


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
    """Return the canonical text the fingerprint hashes; the stripped text if unparseable."""
    read = sqlglot_dialect(dialect)
    try:
        tree = sqlglot.parse_one(sql, read=read)
    except SqlglotError:
        return " ".join(sql.split()).lower()
    tree = normalize_identifiers(tree, dialect=read)
    tree = _rename_table_aliases(tree)
    return tree.sql(dialect=read, normalize=True, comments=False)


def sql_fingerprint(sql: str, dialect: str = "sqlite") -> str:
    """Return a 64-hex-digit fingerprint of the SQL's normalised form."""
    return hashlib.sha256(canonical_sql(sql, dialect).encode()).hexdigest()
