"""The verifier's cost rules, read from the tree: budget problems, classed `timeout` (seed 001).

A cross join without a predicate, no LIMIT on a non-aggregate query (off by default), an
unbounded scan of a table the catalogue estimates as large.
"""

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from probes.catalogue_index import CatalogueIndex
from probes.verifier_result import Finding


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


def check_cross_joins(scopes, index: CatalogueIndex, findings: list[Finding]) -> None:
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


def check_limit(tree: exp.Expression, findings: list[Finding]) -> None:
    if not _has_limit(tree) and not _is_aggregate_select(tree):
        findings.append(Finding("require_limit", "timeout", "no LIMIT on a non-aggregate query; add a LIMIT"))


def check_unbounded_scans(scopes, tree, index: CatalogueIndex, threshold: float, findings) -> None:
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
