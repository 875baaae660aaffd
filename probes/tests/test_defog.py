"""Schemas nobody here wrote: the verifier's false-reject rate on defog's correct gold queries.

Every gold query is correct, so every rejection is a false reject. The ceilings are
asserted per rule; the LIMIT rule's cost is asserted to be visible (it is the rule that
rejects correct listings), and switching it off per warehouse removes that cost.
"""

import pytest

from probes import defog
from probes.execution import run_readonly
from probes.fanout import detect_fanout
from probes.selectors import catalogue_get_latest
from probes.tests.conftest import SQLITE_DEFOG, register
from probes.verifier import verify

# Ceilings: a strict rule costs on the majority of traffic (seed 000).
NAME_RULE_CEILING = 0.0  # unknown table/column, syntax, read-only, EXPLAIN errors
CROSS_JOIN_CEILING = 0.01
WITHOUT_LIMIT_RULE_CEILING = 0.01

# The warehouses are defog's; the app database only holds their registrations.
pytestmark = pytest.mark.any_app_database


@pytest.fixture
def defog_postgres(db, defog_postgres_dsns, monkeypatch):
    return {name: register(monkeypatch, f"defog-{name}", "postgres", dsn) for name, dsn in defog_postgres_dsns.items()}


@pytest.fixture
def defog_sqlite(db, defog_sqlite_dsns, monkeypatch):
    return {
        name: register(monkeypatch, f"defog-lite-{name}", "sqlite", load.dsn)
        for name, load in defog_sqlite_dsns.items()
    }


def verify_gold(warehouses, queries, rules=None):
    catalogues = {name: catalogue_get_latest(warehouse_id=w.pk) for name, w in warehouses.items()}
    return [verify(q.sql, catalogues[q.db], warehouse=warehouses[q.db], rules=rules) for q in queries]


def print_report(title, report):
    print(
        f"\n{title}: {report['queries']} gold queries, false-reject rate {report['false_reject_rate']:.1%} "
        f"({report['false_reject_rate_without_require_limit']:.1%} without require_limit)"
    )
    for rule, rate in report["rate_by_rule"].items():
        print(f"  {rule:24s} {report['by_rule'][rule]:4d}  {rate:.1%}")


def assert_ceilings(report):
    rates = report["rate_by_rule"]
    for rule in ("syntax", "read_only", "unknown_table", "unknown_column", "explain", "transport"):
        assert rates.get(rule, 0.0) <= NAME_RULE_CEILING, (rule, report)
    assert rates.get("cross_join", 0.0) + rates.get("explain_cross_join", 0.0) <= CROSS_JOIN_CEILING, report
    assert report["false_reject_rate_without_require_limit"] <= WITHOUT_LIMIT_RULE_CEILING, report


def test_gold_queries_on_postgres_false_reject_rate_by_rule(defog_postgres):
    queries = defog.gold_queries("postgres")
    assert len(queries) >= 300
    # Every rule on, the LIMIT rule included, so its cost shows next to the others.
    report = defog.false_reject_report(verify_gold(defog_postgres, queries, {"require_limit": True}))
    print_report("defog on PostgreSQL", report)
    assert_ceilings(report)
    # The LIMIT rule's cost is real and visible: it rejects correct listings by the dozen.
    assert report["rate_by_rule"]["require_limit"] >= 0.2
    assert report["rate_by_rule"]["require_limit"] == max(report["rate_by_rule"].values())


def test_the_limit_rule_is_switched_per_warehouse_and_off_by_default(defog_postgres):
    queries = defog.gold_queries("postgres")
    default = defog.false_reject_report(verify_gold(defog_postgres, queries, {"explain": False}))
    assert "require_limit" not in default["by_rule"]
    assert default["false_reject_rate"] <= WITHOUT_LIMIT_RULE_CEILING
    for warehouse in defog_postgres.values():
        warehouse.verifier_rules = {"require_limit": True}
        warehouse.save()
    strict = defog.false_reject_report(verify_gold(defog_postgres, queries, {"explain": False}))
    assert strict["rate_by_rule"]["require_limit"] >= 0.2


def test_gold_queries_on_sqlite_false_reject_rate_by_rule(defog_sqlite):
    queries = [q for q in defog.gold_queries("sqlite") if q.db in SQLITE_DEFOG]
    assert len(queries) >= 60
    report = defog.false_reject_report(verify_gold(defog_sqlite, queries, {"require_limit": True}))
    print_report("defog on SQLite", report)
    assert_ceilings(report)


def test_every_generated_fanout_probe_passes_the_guard_and_runs(defog_postgres):
    """Detection on code written by others must produce probes that the warehouse can answer."""
    suspected = confirmed = 0
    for query in defog.gold_queries("postgres"):
        warehouse = defog_postgres[query.db]
        hypothesis = detect_fanout(query.sql, catalogue_get_latest(warehouse_id=warehouse.pk), dialect="postgres")
        if not hypothesis.suspected:
            continue
        suspected += 1
        result = run_readonly(warehouse=warehouse, sql=hypothesis.probe_sql, row_cap=1)
        assert result.allowed, (query.sql, hypothesis.probe_sql, result.reason)
        assert result.executed, (query.sql, hypothesis.probe_sql, result.error)
        confirmed += result.rows[0][0] > result.rows[0][1]
    print(f"\nfan-out on defog gold: {suspected} suspected, {confirmed} confirmed by probe")
    assert suspected > 0
