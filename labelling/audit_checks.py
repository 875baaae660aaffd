"""The audit's checks on one item: pure functions over a sqlglot tree, a question and a result.

Each returns findings (`Finding`) and touches no database or warehouse; `labelling.audit`
runs the SQL and feeds them. A finding has a class, a severity (`error`: the item's gold
answer is not trustworthy as it stands; `warning`: it may not be; `check`: a heuristic a
person should look at), a message and its evidence.
"""

import re
from dataclasses import asdict, dataclass, field

from sqlglot import exp

REFERENCE_FAILS = "reference_fails"
LIMIT_WITHOUT_ORDER = "limit_without_order"
LIMIT_SPLITS_TIE = "limit_splits_tie"
NONDETERMINISTIC = "nondeterministic_function"
SHAPE_UNPINNED = "shape_unpinned"
EMPTY_REFERENCE = "empty_reference"
IDENTICAL_RESULTS_DISAGREE = "identical_results_disagreeing_labels"
FINDING_CLASSES = [
    REFERENCE_FAILS,
    LIMIT_WITHOUT_ORDER,
    LIMIT_SPLITS_TIE,
    NONDETERMINISTIC,
    SHAPE_UNPINNED,
    EMPTY_REFERENCE,
    IDENTICAL_RESULTS_DISAGREE,
]

NONDETERMINISTIC_NODES = (exp.CurrentDate, exp.CurrentTimestamp, exp.CurrentTime, exp.CurrentDatetime, exp.Rand)
NONDETERMINISTIC_NAMES = {
    "now",
    "random",
    "rand",
    "uuid",
    "gen_random_uuid",
    "newid",
    "sysdate",
    "getdate",
    "localtimestamp",
    "clock_timestamp",
    "statement_timestamp",
    "transaction_timestamp",
    "timeofday",
    "random_uuid",
}
# SQLite reads the clock through a 'now' argument: date('now'), strftime('%Y', 'now').
CLOCK_WORDS = {"now", "localtime", "utc"}
TOP_WORDS = re.compile(r"\b(top|highest|lowest|most|least|largest|smallest|best|worst|biggest|fewest)\b", re.I)
# "at least 6", "at most 3" are filters, not rankings; "each"/"per" rank within groups.
NOT_A_RANKING = re.compile(r"\bat (least|most)\b", re.I)
PER_GROUP = re.compile(r"\b(each|per)\b", re.I)
TOP_N = re.compile(r"\btop\s+(\d+)\b", re.I)
ONE_VALUE = re.compile(
    r"^\s*(how many|how much|what (is|was|were|are) the (total|number|average|share|percentage|sum|count))\b", re.I
)
GROUPING_WORDS = re.compile(r"\b(each|per|by|every|which|list|breakdown)\b", re.I)
NAMED_COLUMNS = re.compile(r"\(([^()]*\b(?:and|,)\b[^()]*)\)|\(([^()]*,[^()]*)\)")
KEY_COLUMN_PREFIX = "_audit_key_"
EVIDENCE_ROWS = 5


@dataclass
class Finding:
    item: str
    cls: str
    severity: str
    message: str
    evidence: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        data = asdict(self)
        data["class"] = data.pop("cls")
        return data


def outer_select(tree: exp.Expression) -> exp.Select | None:
    return tree if isinstance(tree, exp.Select) else None


def limit_of(select: exp.Select) -> int | None:
    """Return the literal row limit of a SELECT (LIMIT n or TOP n), or None."""
    limit = select.args.get("limit")
    value = limit.expression if isinstance(limit, exp.Limit) else None
    if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
        return int(value.this)
    return None


def limits_without_order(item: str, tree: exp.Expression) -> list[Finding]:
    """Flag every SELECT that cuts its rows with LIMIT/TOP and orders nothing: the cut is arbitrary."""
    findings = []
    for select in tree.find_all(exp.Select):
        if select.args.get("limit") is not None and select.args.get("order") is None:
            findings.append(
                Finding(
                    item,
                    LIMIT_WITHOUT_ORDER,
                    "error",
                    "LIMIT without ORDER BY: which rows survive the cut is up to the engine.",
                    {"select": select.sql()[:300]},
                )
            )
    return findings


def nondeterministic_functions(item: str, tree: exp.Expression) -> list[Finding]:
    """Flag functions whose value changes between runs: the clock and random numbers."""
    names = set()
    for node in tree.walk():
        if isinstance(node, NONDETERMINISTIC_NODES):
            names.add(node.sql().lower())
        elif isinstance(node, exp.Anonymous) and node.name.lower() in NONDETERMINISTIC_NAMES:
            names.add(node.name.lower() + "()")
        elif isinstance(node, exp.Literal) and node.is_string and node.this.lower() in CLOCK_WORDS:
            parent = node.parent
            names.add(parent.sql().lower() if isinstance(parent, exp.Func) else f"'{node.this}'")
    if not names:
        return []
    return [
        Finding(
            item,
            NONDETERMINISTIC,
            "warning",
            "The reference reads the clock or a random number: its result changes between runs.",
            {"functions": sorted(names)},
        )
    ]


def tie_probe(select: exp.Select) -> tuple[exp.Select, list[int], int] | None:
    """Return (probe, key column positions, limit) to run for the tie check, or None.

    The probe is the query with LIMIT n+1 and, appended to its select list, each ORDER BY
    key that is not already a column of it (an alias or a position is read in place).
    """
    limit = limit_of(select)
    order = select.args.get("order")
    if limit is None or order is None:
        return None
    probe = select.copy()
    aliases = [column.alias_or_name.lower() for column in probe.expressions]
    positions = []
    for ordered in order.expressions:
        key = ordered.this
        if isinstance(key, exp.Literal) and not key.is_string and key.this.isdigit():
            positions.append(int(key.this) - 1)
        elif isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
            positions.append(aliases.index(key.name.lower()))
        else:
            positions.append(len(probe.expressions))
            probe.append("expressions", exp.alias_(key.copy(), f"{KEY_COLUMN_PREFIX}{len(positions)}"))
    probe.set("limit", exp.Limit(expression=exp.Literal.number(limit + 1)))
    return probe, positions, limit


def tie_at_cut(item: str, rows: list, columns: list[str], positions: list[int], limit: int) -> list[Finding]:
    """Flag a cut whose last kept row and first dropped row share the ordering key."""
    if len(rows) <= limit or limit == 0:
        return []
    last, first_dropped = rows[limit - 1], rows[limit]
    key_last = [last[p] for p in positions]
    if key_last != [first_dropped[p] for p in positions]:
        return []
    shown = [i for i, name in enumerate(columns) if not name.startswith(KEY_COLUMN_PREFIX)]
    return [
        Finding(
            item,
            LIMIT_SPLITS_TIE,
            "error",
            f"LIMIT {limit} cuts a tie: row {limit} and row {limit + 1} share the ordering key {key_last}, so which"
            " one is in the answer is arbitrary.",
            {
                "limit": limit,
                "ordering_key": key_last,
                "columns": [columns[i] for i in shown],
                "rows_at_tie": [[last[i] for i in shown], [first_dropped[i] for i in shown]],
            },
        )
    ]


def named_column_count(question: str) -> int | None:
    """Return how many columns the question names in a parenthesised list ("(carrier and ship date)")."""
    match = NAMED_COLUMNS.search(question)
    if match is None:
        return None
    text = match.group(1) or match.group(2)
    parts = [part for part in re.split(r",|\band\b", text) if part.strip()]
    return len(parts) if len(parts) >= 2 else None


def shape_checks(item: str, question: str, tree: exp.Expression, columns: list[str], rows: list) -> list[Finding]:
    """Heuristics on whether the question pins the result's shape; reported as "check"."""
    findings = []
    ranking = TOP_WORDS.search(NOT_A_RANKING.sub("", question))
    ordered = tree.find(exp.Order) is not None
    if ranking and not PER_GROUP.search(question) and not ordered and len(rows) > 1:
        word = ranking.group(1)
        findings.append(
            Finding(
                item,
                SHAPE_UNPINNED,
                "check",
                f"The question says '{word}' but the reference returns {len(rows)} unordered rows.",
                {"rows": len(rows), "word": word},
            )
        )
    top_n = TOP_N.search(question)
    if top_n and int(top_n.group(1)) != len(rows):
        findings.append(
            Finding(
                item,
                SHAPE_UNPINNED,
                "check",
                f"The question asks for the top {top_n.group(1)}; the reference returns {len(rows)} rows.",
                {"rows": len(rows), "asked": int(top_n.group(1))},
            )
        )
    if ONE_VALUE.search(question) and not GROUPING_WORDS.search(question) and len(columns) != 1:
        findings.append(
            Finding(
                item,
                SHAPE_UNPINNED,
                "check",
                f"The question asks for one value; the reference returns {len(columns)} columns.",
                {"columns": columns},
            )
        )
    named = named_column_count(question)
    if named is not None and named != len(columns):
        findings.append(
            Finding(
                item,
                SHAPE_UNPINNED,
                "check",
                f"The question names {named} columns; the reference returns {len(columns)}.",
                {"named": named, "columns": columns},
            )
        )
    return findings


def empty_result(item: str, columns: list[str], rows: list) -> list[Finding]:
    """Flag a reference with no rows, or only NULLs: it cannot tell a right answer from a wrong one."""
    if rows and any(value is not None for row in rows for value in row):
        return []
    what = "no rows" if not rows else f"{len(rows)} row(s) of NULLs only"
    return [
        Finding(
            item,
            EMPTY_REFERENCE,
            "warning",
            f"The reference returns {what}: an empty answer matches many wrong queries.",
            {"columns": columns, "rows": [list(row) for row in rows[:EVIDENCE_ROWS]]},
        )
    ]
