"""The defog schemas and gold queries: a warehouse nobody on this project designed.

Loads `shared/data/defog/schemas/<db>.sql` into a PostgreSQL database (`probes_<db>`)
or, where sqlglot can translate the DDL, into a SQLite file; reads the gold queries of
`questions/*.csv` with the data set's two conventions undone (`{a,b}` → `a, b`, repeated
by `GROUP BY {}`; several `;`-joined alternatives → the first).
"""

import csv
import hashlib
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import psycopg
import sqlglot
from psycopg import sql as pgsql
from sqlglot.errors import SqlglotError

from config.env import env_path

DEFOG_DIR = env_path("DOCKET_DEFOG_DIR", Path("/work/shared/data/defog"))
DATABASES = (
    "academic",
    "advising",
    "atis",
    "broker",
    "car_dealership",
    "derm_treatment",
    "ewallet",
    "geography",
    "restaurants",
    "scholar",
    "yelp",
)
POSTGRES_QUESTION_FILES = (
    "questions_gen_postgres.csv",
    "instruct_basic_postgres.csv",
    "instruct_advanced_postgres.csv",
)
SQLITE_QUESTION_FILES = ("questions_gen_sqlite.csv",)


@dataclass(frozen=True)
class GoldQuery:
    db: str
    sql: str
    category: str
    source: str
    row: int


def available() -> bool:
    return (DEFOG_DIR / "schemas").is_dir()


def schema_sql(db: str) -> str:
    return (DEFOG_DIR / "schemas" / f"{db}.sql").read_text()


def schema_digest(db: str) -> str:
    return hashlib.sha256(schema_sql(db).encode()).hexdigest()[:16]


def split_statements(text: str) -> list[str]:
    """Split SQL text on semicolons outside quotes and comments."""
    statements, current, quote, i = [], [], None, 0
    while i < len(text):
        ch = text[i]
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
        elif ch in ("'", '"'):
            quote = ch
            current.append(ch)
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif ch == ";":
            statements.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
        i += 1
    statements.append("".join(current).strip())
    return [s for s in statements if s]


_BRACES = re.compile(r"\{([^{}]*)\}")


def expand_conventions(cell: str) -> str:
    """Undo the data set's conventions: take the first alternative, expand `{a,b}`."""
    first = split_statements(cell)[0] if cell.strip() else ""
    chosen: list[str] = []

    def replace(match):
        inner = match.group(1).strip()
        if not inner:
            return ", ".join(chosen) if chosen else "1"
        parts = [p.strip() for p in inner.split(",") if p.strip()]
        chosen[:] = parts
        return ", ".join(parts)

    return _BRACES.sub(replace, first)


def gold_queries(dialect: str = "postgres") -> list[GoldQuery]:
    files = POSTGRES_QUESTION_FILES if dialect == "postgres" else SQLITE_QUESTION_FILES
    queries = []
    for filename in files:
        path = DEFOG_DIR / "questions" / filename
        with path.open(newline="") as handle:
            for number, row in enumerate(csv.DictReader(handle), start=2):
                sql = expand_conventions(row.get("query") or "")
                if sql:
                    queries.append(GoldQuery(row["db_name"], sql, row.get("query_category", ""), filename, number))
    return queries


def load_postgres(db: str, admin_dsn: str, prefix: str = "probes_") -> str:
    """Create (or reuse, if the schema file is unchanged) database `<prefix><db>`; return its DSN."""
    name = f"{prefix}{db}"
    marker = f"docket defog {schema_digest(db)}"
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        row = admin.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if row is not None and row[0] == marker:
            return _dsn_with_database(admin_dsn, name)
        if row is not None:
            admin.execute(pgsql.SQL("DROP DATABASE {} WITH (FORCE)").format(pgsql.Identifier(name)))
        admin.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name)))
    dsn = _dsn_with_database(admin_dsn, name)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(schema_sql(db))
        conn.execute("ANALYZE")
        conn.execute(pgsql.SQL("COMMENT ON DATABASE {} IS {}").format(pgsql.Identifier(name), pgsql.Literal(marker)))
    return dsn


def _dsn_with_database(dsn: str, database: str) -> str:

    parts = urlparse(dsn)
    return urlunparse(parts._replace(path="/" + database))


def _to_sqlite(statement: str) -> list[str]:
    """Translate one PostgreSQL statement; schemas do not exist in SQLite, so drop them."""
    if re.match(r"\s*CREATE\s+SCHEMA", statement, re.IGNORECASE):
        return []
    texts = []
    for tree in sqlglot.parse(statement, read="postgres"):
        if tree is None:
            continue
        for table in tree.find_all(sqlglot.exp.Table):
            table.set("db", None)
        texts.append(tree.sql(dialect="sqlite"))
    return texts


@dataclass
class SqliteLoad:
    dsn: str = field(repr=False)  # a DSN is never printed, even a file's
    statements: int
    failed: list[str]


def load_sqlite(db: str, directory: Path) -> SqliteLoad:
    """Translate the PostgreSQL DDL/INSERTs with sqlglot into a fresh SQLite file."""
    path = Path(directory) / f"{db}.sqlite3"
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    failed = []
    statements = split_statements(schema_sql(db))
    for statement in statements:
        try:
            for text in _to_sqlite(statement):
                conn.execute(text)
        except (SqlglotError, sqlite3.Error) as exc:
            failed.append(f"{statement[:60]}...: {str(exc).splitlines()[0][:120]}")
    conn.commit()
    conn.close()
    return SqliteLoad(f"sqlite:///{path.resolve()}", len(statements), failed)


def false_reject_report(results: list) -> dict:
    """Summarise verifier results on correct queries: every rejection is a false reject.

    Counts each rule that fired on a query (a query may fail several rules), and the share
    of queries rejected overall and without the LIMIT rule.
    """
    total = len(results)
    by_rule: dict[str, int] = {}
    rejected = rejected_without_limit = 0
    for result in results:
        rules = result.rules_failed
        for rule in rules:
            by_rule[rule] = by_rule.get(rule, 0) + 1
        rejected += bool(rules)
        rejected_without_limit += bool([r for r in rules if r != "require_limit"])

    def rate(count: int) -> float:
        return count / total if total else 0.0

    return {
        "queries": total,
        "rejected": rejected,
        "false_reject_rate": rate(rejected),
        "false_reject_rate_without_require_limit": rate(rejected_without_limit),
        "by_rule": dict(sorted(by_rule.items())),
        "rate_by_rule": {rule: rate(count) for rule, count in sorted(by_rule.items())},
    }
