"""The deterministic verifier: a function of the schema, not of a model (seed 000).

`verify(sql, catalogue)` reads the text once through the guard (`probes.guard.parse_sql`, a
parse shared with the fingerprint and the fan-out detector), takes the guard's verdict,
resolves every table and column against the catalogue, and applies the cost rules (cross join without a
predicate, no LIMIT on a non-aggregate query, an unbounded scan of a large table). With a
warehouse it also asks the database: `EXPLAIN (FORMAT JSON)` on PostgreSQL, `EXPLAIN QUERY
PLAN` on SQLite, through the same read-only enforcement as every probe. A failure carries
a class from the failure taxonomy (seed 001) and a message specific enough to act on.

Classes: `syntax`, `dialect`, `unknown_object`, `empty_result`, `timeout` (the cost rules
too: they are budget problems, not phrasing), `transport` (the warehouse could not be
reached: a fault of the checker, never a verdict on the SQL).
"""

import difflib
from dataclasses import asdict, dataclass, field

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from probes.fingerprint import sqlglot_dialect
from probes.guard import parse_sql
from probes.models import Catalogue, Warehouse

VERIFIER_VERSION = "verifier-1.0"

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
# Rule name → failure class (seed 001).
RULE_CLASSES = {
    "syntax": "syntax",
    "read_only": "dialect",
    "unknown_table": "unknown_object",
    "unknown_column": "unknown_object",
    "cross_join": "timeout",
    "require_limit": "timeout",
    "unbounded_scan": "timeout",
    "explain": "dialect",
    "explain_cross_join": "timeout",
    "explain_unbounded_scan": "timeout",
    "empty_result": "empty_result",
    "transport": "transport",
}
PSEUDO_COLUMNS = {"rowid", "oid", "_rowid_", "ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"}


@dataclass
class Finding:
    rule: str
    failure_class: str
    message: str


@dataclass
class VerifierResult:
    passed: bool
    failure_class: str | None
    message: str | None
    findings: list[dict] = field(default_factory=list)
    verifier_version: str = VERIFIER_VERSION
    catalogue_version: int | None = None
    rules: dict = field(default_factory=dict)

    @property
    def is_fault(self) -> bool:
        """True when the checker, not the SQL, failed (the warehouse was unreachable)."""
        return self.failure_class == "transport"

    @property
    def rules_failed(self) -> list[str]:
        return sorted({finding["rule"] for finding in self.findings})

    def as_dict(self) -> dict:
        return asdict(self)


# --- the catalogue, indexed for case-insensitive lookups -------------------------------


@dataclass
class TableInfo:
    name: str
    columns: dict[str, str]  # lower-case name → name as stored
    keys: list[frozenset[str]]  # primary key and unique constraints, lower-case
    row_estimate: int | None
    primary_key: list[str]


class CatalogueIndex:
    def __init__(self, snapshot: dict):
        self.dialect = snapshot.get("dialect", "sqlite")
        self.tables: dict[str, TableInfo] = {}
        for name, entry in (snapshot.get("tables") or {}).items():
            keys = []
            if entry.get("primary_key"):
                keys.append(frozenset(c.lower() for c in entry["primary_key"]))
            keys.extend(frozenset(c.lower() for c in unique) for unique in entry.get("unique") or [])
            self.tables[name.lower()] = TableInfo(
                name=name,
                columns={c["name"].lower(): c["name"] for c in entry.get("columns") or []},
                keys=keys,
                row_estimate=entry.get("row_estimate"),
                primary_key=list(entry.get("primary_key") or []),
            )

    def table(self, node: exp.Table) -> TableInfo | None:
        name = node.name.lower()
        schema = (node.db or "").lower()
        if schema and schema not in ("public", "main"):
            return self.tables.get(f"{schema}.{name}")
        return self.tables.get(name)

    def table_names(self) -> list[str]:
        return [info.name for info in self.tables.values()]


def catalogue_index(catalogue: Catalogue | dict) -> CatalogueIndex:
    """Index a catalogue once per loaded instance (kept on the instance, never shared by pk)."""
    if isinstance(catalogue, dict):
        return CatalogueIndex(catalogue)
    index = getattr(catalogue, "_docket_index", None)
    if index is None:
        index = CatalogueIndex(catalogue.snapshot)
        catalogue._docket_index = index
    return index


def did_you_mean(name: str, candidates: list[str]) -> str | None:
    lowered = {c.lower(): c for c in candidates}
    match = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.5)
    return lowered[match[0]] if match else None


# --- name resolution -------------------------------------------------------------------


def _scope_outputs(scope: Scope) -> set[str] | None:
    """Return the lower-case column names a derived table or CTE exposes; None if unknown."""
    expression = scope.expression
    if isinstance(expression, exp.SetOperation):
        expression = expression.left
        while isinstance(expression, exp.SetOperation):
            expression = expression.left
    if isinstance(expression, exp.Subquery):
        expression = expression.unnest()
    if not isinstance(expression, exp.Select):
        return None
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star) for e in expression.expressions):
        return None
    return {name.lower() for name in expression.named_selects}


def _declared_columns(source) -> set[str] | None:
    """Columns declared in `AS alias(a, b)` (or `WITH name(a, b)`) for this source, if any."""
    if isinstance(source, exp.Table):
        node = source
    elif isinstance(source, Scope):
        node = source.expression.parent
    else:
        return None
    alias = node.args.get("alias") if node is not None else None
    if isinstance(alias, exp.TableAlias) and alias.columns:
        return {c.name.lower() for c in alias.columns}
    return None


def _source_columns(scope: Scope, alias: str, source, index: CatalogueIndex):
    """Return (label, set of columns or None if unknowable, TableInfo or None)."""
    declared = _declared_columns(source)
    if declared is not None:
        return alias, declared, None
    if isinstance(source, exp.Table):
        info = index.table(source)
        if info is None:
            return source.name, None, None
        return info.name, set(info.columns), info
    if isinstance(source, Scope):
        return alias, _scope_outputs(source), None
    return alias, None, None


def _select_aliases(scope: Scope) -> set[str]:
    expression = scope.expression
    if isinstance(expression, exp.SetOperation):
        left = expression.left
        while isinstance(left, exp.SetOperation):
            left = left.left
        expression = left
    if isinstance(expression, exp.Select):
        return {e.alias.lower() for e in expression.expressions if isinstance(e, exp.Alias)}
    return set()


def _ancestry(scope: Scope):
    while scope is not None:
        yield scope
        scope = scope.parent


def _check_table_names(scopes, index: CatalogueIndex, findings: list[Finding]) -> None:
    seen = set()
    for scope in scopes:
        for source in scope.sources.values():
            if not isinstance(source, exp.Table) or isinstance(source.this, exp.Func):
                continue
            if not source.name or index.table(source) is not None:
                continue
            label = f"{source.db}.{source.name}" if source.db else source.name
            if label.lower() in seen:
                continue
            seen.add(label.lower())
            suggestion = did_you_mean(label, index.table_names())
            message = f"unknown table {label}" + (f"; did you mean {suggestion}?" if suggestion else "")
            findings.append(Finding("unknown_table", "unknown_object", message))


def _check_columns(scopes, index: CatalogueIndex, findings: list[Finding]) -> None:
    reported = set()

    def report(message):
        if message not in reported:
            reported.add(message)
            findings.append(Finding("unknown_column", "unknown_object", message))

    for scope in scopes:
        for column in scope.columns:
            if isinstance(scope.expression, exp.Select) and column.find_ancestor(exp.Select) is not scope.expression:
                continue  # a child scope's column, listed here in case it is correlated
            name = column.name
            lowered = name.lower()
            if not name or lowered in PSEUDO_COLUMNS or isinstance(column.this, exp.Star):
                continue
            if column.table:
                _check_qualified(scope, column, index, report)
            else:
                _check_unqualified(scope, column, index, report)


def _check_qualified(scope, column, index, report):
    alias = column.table
    for ancestor in _ancestry(scope):
        source = ancestor.sources.get(alias) or ancestor.sources.get(alias.lower())
        if source is None:
            matches = [s for key, s in ancestor.sources.items() if key.lower() == alias.lower()]
            source = matches[0] if matches else None
        if source is None:
            continue
        label, columns, info = _source_columns(ancestor, alias, source, index)
        if columns is None or column.name.lower() in columns:
            return
        candidates = list(info.columns.values()) if info else sorted(columns)
        suggestion = did_you_mean(column.name, candidates)
        if suggestion:
            report(f"unknown column {label}.{column.name}; did you mean {label}.{suggestion}?")
        else:
            report(f"unknown column {label}.{column.name}; {label} has columns {', '.join(candidates[:12])}")
        return
    if column.db or alias.lower() in index.tables:
        return  # a schema-qualified reference to a table not in FROM: leave it to EXPLAIN
    report(f"unknown table or alias {alias} in {alias}.{column.name}")


def _check_unqualified(scope, column, index, report):
    lowered = column.name.lower()
    candidates: list[str] = []
    for depth, ancestor in enumerate(_ancestry(scope)):
        if depth == 0 and lowered in _select_aliases(ancestor):
            return
        for alias, source in ancestor.sources.items():
            label, columns, info = _source_columns(ancestor, alias, source, index)
            if columns is None or lowered in columns:
                return
            names = list(info.columns.values()) if info else sorted(columns)
            candidates.extend(f"{label}.{name}" for name in names)
        if not ancestor.sources and depth == 0 and not isinstance(ancestor.expression, exp.Select):
            return
    if not candidates:
        return  # no catalogue source to check against (e.g. SELECT without FROM)
    by_column = {c.split(".")[-1].lower(): c for c in candidates}
    match = difflib.get_close_matches(lowered, list(by_column), n=1, cutoff=0.5)
    if match:
        report(f"unknown column {column.name}; did you mean {by_column[match[0]]}?")
    else:
        report(f"unknown column {column.name}")


# --- cost rules --------------------------------------------------------------------------


def _is_aggregate_select(select: exp.Expression) -> bool:
    """True for a SELECT with GROUP BY or an aggregate in its projection (not in a subquery)."""
    if isinstance(select, exp.Subquery):
        select = select.unnest()
    if isinstance(select, exp.SetOperation):
        return _is_aggregate_select(select.left) and _is_aggregate_select(select.right)
    if not isinstance(select, exp.Select):
        return False
    if select.args.get("group"):
        return True
    for projection in select.expressions:
        for node in projection.walk(prune=lambda n: isinstance(n, exp.Subquery | exp.Window)):
            if isinstance(node, exp.AggFunc) and not isinstance(node.parent, exp.Window):
                return True
    return False


def _has_limit(query: exp.Expression) -> bool:
    if isinstance(query, exp.Subquery):
        return _has_limit(query.unnest()) or bool(query.args.get("limit"))
    return bool(query.args.get("limit") or query.args.get("fetch"))


def _is_single_row(source, index: CatalogueIndex) -> bool:
    if isinstance(source, exp.Table):
        info = index.table(source)
        return info is not None and info.row_estimate is not None and info.row_estimate <= 1
    if isinstance(source, Scope):
        expression = source.expression
        if isinstance(expression, exp.Select):
            limit = expression.args.get("limit")
            if limit is not None and limit.expression is not None and limit.expression.name == "1":
                return True
            if _is_aggregate_select(expression) and not expression.args.get("group"):
                return True
            # A derived table filtered to a constant (`WHERE name = 'Everest'`) is a lookup,
            # not one side of the cartesian product this rule is about.
            where = expression.args.get("where")
            return where is not None and any(
                isinstance(eq.expression, exp.Literal) or isinstance(eq.this, exp.Literal)
                for eq in where.find_all(exp.EQ)
            )
        return False
    return True  # VALUES, table functions and the like: assume small


class _Components:
    """Union-find over source aliases: which sources a predicate connects."""

    def __init__(self, names):
        self.parent = {name: name for name in names}

    def find(self, name):
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def union(self, a, b):
        if a in self.parent and b in self.parent:
            self.parent[self.find(a)] = self.find(b)


def _check_cross_joins(scopes, index: CatalogueIndex, findings: list[Finding]) -> None:
    for scope in scopes:
        select = scope.expression
        if not isinstance(select, exp.Select) or not select.args.get("joins"):
            continue
        aliases = list(scope.selected_sources)
        if len(aliases) < 2:
            continue
        components_of = _Components(alias.lower() for alias in aliases)
        union, find, parent = components_of.union, components_of.find, components_of.parent

        order = [alias.lower() for alias in aliases]
        for join in select.args["joins"]:
            joined = join.alias_or_name.lower()
            if join.args.get("on") is not None:
                tables = {c.table.lower() for c in join.args["on"].find_all(exp.Column) if c.table}
                tables.add(joined)
                previous = order[: order.index(joined)] if joined in order else []
                if len(tables) == 1 and previous:
                    tables.add(previous[-1])  # ON with unqualified columns still joins
                tables = [t for t in tables if t in parent]
                for other in tables[1:]:
                    union(tables[0], other)
            elif (
                join.args.get("using") or join.args.get("method") or isinstance(join.this, exp.Lateral | exp.Unnest)
            ) and (joined in parent and order.index(joined) > 0):
                union(joined, order[order.index(joined) - 1])
        where = select.args.get("where")
        if where is not None:
            for predicate in where.find_all(exp.EQ, exp.NullSafeEQ, exp.In, exp.GT, exp.LT, exp.GTE, exp.LTE):
                tables = {c.table.lower() for c in predicate.find_all(exp.Column) if c.table}
                tables = [t for t in tables if t in parent]
                for other in tables[1:]:
                    union(tables[0], other)
        components: dict[str, list[str]] = {}
        for alias in aliases:
            components.setdefault(find(alias.lower()), []).append(alias)
        big = [
            members
            for members in components.values()
            if not all(_is_single_row(scope.selected_sources[m][1], index) for m in members)
        ]
        if len(big) > 1:
            left, right = big[0][0], big[1][0]
            findings.append(
                Finding(
                    "cross_join",
                    "timeout",
                    f"cross join between {_label(scope, left)} and {_label(scope, right)} without a join predicate",
                )
            )


def _label(scope: Scope, alias: str) -> str:
    source = scope.selected_sources[alias][1]
    if isinstance(source, exp.Table) and source.name.lower() != alias.lower():
        return f"{source.name} ({alias})"
    return alias


def _check_limit(tree: exp.Expression, findings: list[Finding]) -> None:
    if not _has_limit(tree) and not _is_aggregate_select(tree):
        findings.append(Finding("require_limit", "timeout", "no LIMIT on a non-aggregate query; add a LIMIT"))


def _check_unbounded_scans(scopes, tree, index: CatalogueIndex, threshold: float, findings) -> None:
    if tree.find(exp.Limit, exp.Fetch):
        return
    for scope in scopes:
        if not isinstance(scope.expression, exp.Select) or scope.expression.args.get("where") is not None:
            continue
        for source in scope.sources.values():
            if not isinstance(source, exp.Table):
                continue
            info = index.table(source)
            if info and info.row_estimate and info.row_estimate > threshold:
                findings.append(
                    Finding(
                        "unbounded_scan",
                        "timeout",
                        f"unbounded scan of {info.name} (~{info.row_estimate:,} rows); add a LIMIT or a filter",
                    )
                )
                return


# --- EXPLAIN -------------------------------------------------------------------------------


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


def _explain(sql: str, tree: exp.Expression, warehouse: Warehouse, rules: dict, findings: list[Finding]) -> None:
    from probes.execution import execute_guarded

    dialect = warehouse.dialect
    body = sql.strip().rstrip(";")
    prefix = "EXPLAIN (FORMAT JSON) " if dialect == "postgres" else "EXPLAIN QUERY PLAN "
    from django.conf import settings

    result = execute_guarded(
        warehouse=warehouse, sql=prefix + body, row_cap=10_000, timeout_s=settings.WAREHOUSE_STATEMENT_TIMEOUT_S
    )
    if not result.executed:
        code = result.error_code or "dialect"
        failure_class = {
            "unknown_object": "unknown_object",
            "syntax": "syntax",
            "timeout": "timeout",
            "transport": "transport",
        }.get(code, "dialect")
        rule = "transport" if failure_class == "transport" else "explain"
        findings.append(Finding(rule, failure_class, f"the database refused the query: {result.error}"))
        return
    if dialect != "postgres" or not result.rows:
        return
    document = result.rows[0][0]
    if isinstance(document, str):
        import json

        document = json.loads(document)
    plan = document[0]["Plan"]
    if rules.get("cross_join"):
        found = _plan_cross_join(plan)
        if found and not any(f.rule == "cross_join" for f in findings):
            findings.append(Finding("explain_cross_join", "timeout", f"the plan has a {found}"))
    if rules.get("unbounded_scan") and not tree.find(exp.Limit, exp.Fetch):
        rows = plan.get("Plan Rows", 0)
        if rows > float(rules.get("max_scan_rows") or 0) and not any(f.rule == "unbounded_scan" for f in findings):
            findings.append(
                Finding(
                    "explain_unbounded_scan",
                    "timeout",
                    f"the plan estimates {int(rows):,} rows with no LIMIT; add a LIMIT or a filter",
                )
            )


def _check_empty_result(tree: exp.Expression, warehouse: Warehouse, findings: list[Finding]) -> None:
    from probes.execution import run_readonly

    dialect = sqlglot_dialect(warehouse.dialect)
    probe = f"SELECT 1 FROM ({tree.sql(dialect=dialect)}) AS docket_verify LIMIT 1"
    result = run_readonly(warehouse=warehouse, sql=probe, row_cap=1)
    if result.executed and not result.rows:
        findings.append(Finding("empty_result", "empty_result", "the query returned no rows"))


# --- the entry point ---------------------------------------------------------------------


def effective_rules(warehouse: Warehouse | None, rules: dict | None) -> dict:
    merged = dict(DEFAULT_RULES)
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
        first = findings[0] if findings else None
        return VerifierResult(
            passed=first is None,
            failure_class=first.failure_class if first else None,
            message=first.message if first else None,
            findings=[asdict(f) for f in findings],
            catalogue_version=catalogue_version,
            rules=rules,
        )

    # One parse, shared with the guard (and the fingerprint and fan-out detector).
    parsed = parse_sql(sql, dialect)
    if parsed.stage == "syntax":
        message = parsed.syntax_error or "parse error"
        if message.startswith("exactly one statement") or message == "empty SQL text":
            message = f"expected exactly one statement; found {len(parsed.statements)}"
        findings.append(Finding("syntax", "syntax", message))
        return result()
    if parsed.stage == "text":
        findings.append(Finding("read_only", "dialect", f"refused before parsing: {parsed.verdict.reason}"))
        return result()
    if not parsed.verdict.allowed:
        if parsed.verdict.kind == "statement":
            # A DELETE or an UPDATE is no dialect slip: it is not a query at all.
            findings.append(Finding("read_only", "other", f"not a read-only query: {parsed.verdict.reason}"))
        else:
            findings.append(Finding("read_only", "dialect", f"refused by the guard: {parsed.verdict.reason}"))
        return result()
    tree = parsed.tree
    try:
        scopes = traverse_scope(tree)
    except (SqlglotError, RecursionError, KeyError, ValueError):
        scopes = []  # a shape sqlglot's scoping cannot follow: leave names to EXPLAIN
    if rules.get("unknown_object"):
        _check_table_names(scopes, index, findings)
        _check_columns(scopes, index, findings)
    if rules.get("cross_join"):
        _check_cross_joins(scopes, index, findings)
    if rules.get("unbounded_scan"):
        _check_unbounded_scans(scopes, tree, index, float(rules.get("max_scan_rows") or 0), findings)
    if rules.get("require_limit"):
        _check_limit(tree, findings)
    if warehouse is not None and rules.get("explain"):
        _explain(sql, tree, warehouse, rules, findings)
    if warehouse is not None and rules.get("empty_result") and not findings:
        _check_empty_result(tree, warehouse, findings)
    return result()
