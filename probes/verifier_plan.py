"""The verifier asks the database: EXPLAIN and the plan's analysis, and the empty-result probe.

`EXPLAIN (FORMAT JSON)` on PostgreSQL, `EXPLAIN QUERY PLAN` on SQLite, through the same
read-only enforcement as every probe (`probes.execution.execute_guarded`: the text was
guarded before it was wrapped). What the database's refusal means is read in one place,
`probes.outcome.execution_outcome`: an error known to mean "this SQL is wrong" (syntax,
unknown object, a type or grouping error) is a failure; an unreachable database, the
EXPLAIN itself timing out, a role that cannot read, a server limit or any other error is a
fault finding — the checker could not check, never a verdict on the SQL.
"""

import json

from django.conf import settings
from sqlglot import exp

from probes.execution import execute_guarded, run_readonly
from probes.fingerprint import sqlglot_dialect
from probes.models import Warehouse
from probes.mysql_plan import mysql_cross_join, mysql_estimated_rows
from probes.outcome import OutcomeKind, execution_outcome
from probes.verifier_result import Finding


def _plan_nodes(plan: dict):
    yield plan
    for child in plan.get("Plans") or []:
        yield from _plan_nodes(child)


def _relation(node: dict) -> str | None:
    for candidate in _plan_nodes(node):
        if candidate.get("Relation Name"):
            alias = candidate.get("Alias")
            name = candidate["Relation Name"]
            return name if not alias or alias == name else f"{name} ({alias})"
    return None


def _plan_cross_join(plan: dict) -> str | None:
    """Find a Nested Loop whose inner side scans with no condition linking it to the outer."""
    for node in _plan_nodes(plan):
        if node.get("Node Type") != "Nested Loop" or node.get("Join Filter") or len(node.get("Plans") or []) < 2:
            continue
        outer, inner = node["Plans"][0], node["Plans"][1]
        while inner.get("Node Type") in ("Materialize", "Memoize") and inner.get("Plans"):
            inner = inner["Plans"][0]
        if inner.get("Node Type") not in ("Seq Scan", "Index Only Scan", "Index Scan", "Bitmap Heap Scan"):
            continue
        linked = any(inner.get(key) for key in ("Index Cond", "Recheck Cond", "Filter"))
        if linked or outer.get("Plan Rows", 0) <= 1 or inner.get("Plan Rows", 0) <= 1:
            continue
        return f"cross join between {_relation(outer) or 'a subplan'} and {_relation(inner) or 'a subplan'}"
    return None


def _explain_finding(result) -> Finding:
    """What an EXPLAIN the database did not answer says: the SQL is wrong, or the check could not run."""
    outcome = execution_outcome(result)
    match outcome.kind:
        case OutcomeKind.FAILED:
            return Finding("explain", outcome.failure_class, f"the database refused the query: {result.error}")
        case _:
            return Finding.fault("explain", outcome.cause, f"the database could not check the query: {outcome.message}")


def check_plan(sql: str, tree: exp.Expression, warehouse: Warehouse, rules: dict, findings: list[Finding]) -> None:
    dialect = warehouse.dialect
    body = sql.strip().rstrip(";")
    prefixes = {"postgres": "EXPLAIN (FORMAT JSON) ", "mysql": "EXPLAIN FORMAT=JSON ", "duckdb": "EXPLAIN "}
    prefix = prefixes.get(dialect, "EXPLAIN QUERY PLAN ")
    result = execute_guarded(
        warehouse=warehouse, sql=prefix + body, row_cap=10_000, timeout_s=settings.WAREHOUSE_STATEMENT_TIMEOUT_S
    )
    if not result.executed:
        findings.append(_explain_finding(result))
        return
    if dialect not in ("postgres", "mysql") or not result.rows:
        return
    document = result.rows[0][0]
    if isinstance(document, str):
        document = json.loads(document)
    if dialect == "mysql":
        found, rows = mysql_cross_join(document), mysql_estimated_rows(document)
    else:
        plan = document[0]["Plan"]
        found, rows = _plan_cross_join(plan), plan.get("Plan Rows", 0)
    if rules.get("cross_join") and found and not any(f.rule == "cross_join" for f in findings):
        findings.append(Finding("explain_cross_join", "timeout", f"the plan has a {found}"))
    unbounded = rules.get("unbounded_scan") and not tree.find(exp.Limit, exp.Fetch)
    over = rows > float(rules.get("max_scan_rows") or 0)
    if unbounded and over and not any(f.rule == "unbounded_scan" for f in findings):
        findings.append(
            Finding(
                "explain_unbounded_scan",
                "timeout",
                f"the plan estimates {int(rows):,} rows with no LIMIT; add a LIMIT or a filter",
            )
        )


def check_empty_result(tree: exp.Expression, warehouse: Warehouse, findings: list[Finding]) -> None:
    dialect = sqlglot_dialect(warehouse.dialect)
    probe = f"SELECT 1 FROM ({tree.sql(dialect=dialect)}) AS docket_verify LIMIT 1"
    result = run_readonly(warehouse=warehouse, sql=probe, row_cap=1)
    outcome = execution_outcome(result)
    if outcome.kind is not OutcomeKind.PASSED:
        findings.append(Finding.of("empty_result", outcome))
    elif not result.rows:
        findings.append(Finding("empty_result", "empty_result", "the query returned no rows"))
