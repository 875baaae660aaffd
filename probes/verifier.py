"""The deterministic verifier: a function of the schema, not of a model (seed 000).

`verify(sql, catalogue)` reads the text once through the guard (`probes.guard.parse_sql`, a
parse shared with the fingerprint and the fan-out detector), takes the guard's verdict,
resolves every table and column against the catalogue, and applies the cost rules (cross
join without a predicate, no LIMIT on a non-aggregate query, an unbounded scan of a large
table). With a
warehouse it also asks the database: `EXPLAIN (FORMAT JSON)` on PostgreSQL, `EXPLAIN QUERY
PLAN` on SQLite, through the same read-only enforcement as every probe.

The result's `outcome` (`probes.outcome.Outcome`) is `passed`, `failed` with a class from the
failure taxonomy (seed 001) and a message specific enough to act on, or `fault` with a cause.
Classes: `syntax`, `dialect`, `unknown_object`, `empty_result`, `timeout` (the cost rules:
budget problems of the SQL, not phrasing). Faults — the check could not decide — are never a
verdict on the SQL: the warehouse unreachable (`transport`), the EXPLAIN itself out of time
(`timeout`), a role that cannot read (`privilege`), a server limit (`limit`), Docket's own size
limits refusing the text (`size_limit`), an error not known to mean "this SQL is wrong"
(`database_error`).

The checks live by job: names in `probes.verifier_names`, cost rules in
`probes.verifier_costs`, the database's EXPLAIN and the plan's analysis in
`probes.verifier_plan`, findings and the result they add up to in `probes.verifier_result`.
"""

from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import traverse_scope

from probes.catalogue_index import catalogue_index
from probes.guard import parse_sql
from probes.models import Catalogue, Warehouse
from probes.outcome import OutcomeKind, parse_outcome
from probes.verifier_costs import check_cross_joins, check_limit, check_unbounded_scans
from probes.verifier_names import check_columns, check_table_names
from probes.verifier_plan import check_empty_result, check_plan
from probes.verifier_result import Finding, VerifierResult, verifier_result_build

DEFAULT_RULES = {
    "unknown_object": True,
    "cross_join": True,
    # The seed's rule, off unless a warehouse opts in: on correct queries written by others
    # it rejects listings by the dozen (defog gold: 31% false rejects; demo gold: 8%), and a
    # false reject acts on the majority of traffic (seed 000).
    "require_limit": False,
    "unbounded_scan": True,
    "max_scan_rows": 5_000_000,
    "explain": True,
    "empty_result": False,
}


def effective_rules(warehouse: Warehouse | None, rules: dict | None) -> dict:
    merged = dict(DEFAULT_RULES)
    if warehouse is not None and not warehouse.has_connection:
        # A catalogue from a file: the static rules run; the checks that ask the database are
        # off unless the warehouse turns them on (then each is a `no_connection` fault).
        merged.update(explain=False, empty_result=False)
    if warehouse is not None:
        merged.update(warehouse.verifier_rules or {})
    if rules:
        merged.update(rules)
    return merged


def verify(
    sql: str, catalogue: Catalogue | dict | None, *, warehouse: Warehouse | None = None, rules: dict | None = None
) -> VerifierResult:
    """Check a SQL text against the catalogue (and the warehouse, if given)."""
    rules = effective_rules(warehouse, rules)
    if catalogue is None:
        # Never introspected: names cannot be checked, and guessing would reject everything.
        rules["unknown_object"] = False
        catalogue = {"dialect": warehouse.dialect if warehouse is not None else "sqlite", "tables": {}}
    catalogue_version = getattr(catalogue, "version", None)
    index = catalogue_index(catalogue)
    dialect = warehouse.dialect if warehouse is not None else index.dialect
    findings: list[Finding] = []

    def result() -> VerifierResult:
        return verifier_result_build(findings=findings, catalogue_version=catalogue_version, rules=rules)

    # One parse, shared with the guard (and the fingerprint and fan-out detector).
    parsed = parse_sql(sql, dialect)
    read = parse_outcome(parsed)
    match read.kind:
        case OutcomeKind.FAULT:  # Docket's own size limits refused it: nothing was checked
            findings.append(Finding.of("size_limit", read))
            return result()
        case OutcomeKind.FAILED:
            findings.append(Finding.of("syntax" if read.failure_class == "syntax" else "read_only", read))
            return result()
    tree = parsed.tree
    try:
        scopes = traverse_scope(tree)
    except (SqlglotError, RecursionError, KeyError, ValueError):
        scopes = []  # a shape sqlglot's scoping cannot follow: leave names to EXPLAIN
    if rules.get("unknown_object"):
        check_table_names(scopes, index, findings)
        check_columns(scopes, index, findings)
    if rules.get("cross_join"):
        check_cross_joins(scopes, index, findings)
    if rules.get("unbounded_scan"):
        check_unbounded_scans(scopes, tree, index, float(rules.get("max_scan_rows") or 0), findings)
    if rules.get("require_limit"):
        check_limit(tree, findings)
    if warehouse is not None and rules.get("explain"):
        check_plan(sql, tree, warehouse, rules, findings)
    if warehouse is not None and rules.get("empty_result") and not findings:
        check_empty_result(tree, warehouse, findings)
    return result()
