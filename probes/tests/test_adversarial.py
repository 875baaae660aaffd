"""The adversarial corpus through `run_sql`: refused, or run without changing the warehouse."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from probes.execution import execute_guarded, run_readonly
from probes.guard import guard_sql
from probes.tests import shop
from probes.tests.adversarial import CORPUS

TIMEOUT_S = 0.5
# Enforcement, not speed: without a working timeout these texts would run for minutes.
# The slack covers connecting and process scheduling on a busy machine.
DEADLINE_MS = TIMEOUT_S * 1000 + 4000
# Texts that are harmless, so the guard may pass them; running them must still change nothing.
HARMLESS = {
    "line comment hides delete",
    "block comment hides drop",
    "semicolon in string",
    "escaped quote in string",
    "dollar quoted",
    "quoted identifier",
    "writing function in select",
    "recursive cte forever",
    "generate_series cross join",
    "self cross join",
    "huge blob",
    "nested comment",
    "table shorthand",
}
PWNED_FILES = [Path("/tmp/docket-probes-pwned"), Path("/tmp/docket-probes-pwned.db")]


def test_the_corpus_holds_at_least_sixty_texts():  # the hostile corpus, folded in
    assert len(CORPUS) >= 60
    assert len({label for label, _ in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("dialect", ["postgres", "sqlite"])
@pytest.mark.parametrize(("label", "sql"), [c for c in CORPUS if c[0] not in HARMLESS], ids=lambda v: str(v)[:40])
def test_guard_refuses_every_dangerous_text(label, sql, dialect):
    result = guard_sql(sql, dialect)
    assert not result.allowed, f"{label} passed the guard"
    assert result.reason


def run_sql_json(tmp_path, warehouse, sql):
    path = tmp_path / "probe.sql"
    path.write_text(sql)
    out = io.StringIO()
    call_command(
        "run_sql",
        "--warehouse",
        warehouse.name,
        "--sql-file",
        str(path),
        "--format",
        "json",
        "--timeout",
        str(TIMEOUT_S),
        stdout=out,
    )
    return json.loads(out.getvalue())


def run_corpus(tmp_path, warehouse) -> list[str]:
    """Run every text; return the problems found (empty when the warehouse held)."""
    problems = []
    for label, sql in CORPUS:
        result = run_sql_json(tmp_path, warehouse, sql)
        assert set(result) == {"allowed", "reason", "executed", "rows", "columns", "elapsed_ms", "error"}
        if result["allowed"] and label not in HARMLESS:
            problems.append(f"{label}: allowed by the guard")
        if not result["allowed"] and not result["reason"]:
            problems.append(f"{label}: refused without a reason")
        if result["elapsed_ms"] > DEADLINE_MS:
            problems.append(f"{label}: ran {result['elapsed_ms']:.0f} ms, past the {TIMEOUT_S:g}s timeout")
    return problems


def test_corpus_leaves_a_sqlite_warehouse_unchanged(shop_sqlite, tmp_path):
    before = shop.sqlite_fingerprint(shop_sqlite.path)
    problems = run_corpus(tmp_path, shop_sqlite)
    assert problems == []
    assert shop.sqlite_fingerprint(shop_sqlite.path) == before
    assert not any(p.exists() for p in PWNED_FILES)
    assert sorted(p.name for p in shop_sqlite.path.parent.iterdir() if p.suffix != ".json") == [
        "probe.sql",
        "shop.sqlite3",
    ]


def test_corpus_leaves_a_postgres_warehouse_unchanged(shop_postgres, tmp_path):
    before = shop.postgres_state(shop_postgres.dsn)
    problems = run_corpus(tmp_path, shop_postgres)
    assert problems == []
    assert shop.postgres_state(shop_postgres.dsn) == before
    assert not any(p.exists() for p in PWNED_FILES)


def test_a_writing_function_is_refused_by_the_guard_and_stopped_by_the_database(shop_postgres):

    result = run_readonly(warehouse=shop_postgres, sql="SELECT shop_wipe()")
    assert not result.allowed and "shop_wipe()" in result.reason
    # Past the guard (as if it had a bug), the database's own wall still holds.
    result = execute_guarded(warehouse=shop_postgres, sql="SELECT shop_wipe()", row_cap=10, timeout_s=5)
    assert not result.executed


def test_long_queries_end_as_timeouts_on_both_dialects(shop_sqlite, shop_postgres):

    # A counted recursion the guard can prove stops, joined to itself: 10^10 rows to count.
    forever = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100000) SELECT count(*) FROM r a, r b"
    )
    for warehouse in (shop_sqlite, shop_postgres):
        result = run_readonly(warehouse=warehouse, sql=forever, timeout_s=0.5)
        assert result.timed_out, warehouse.dialect
        assert result.error.startswith("timeout:")
