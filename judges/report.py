"""Load a gold-set version's verdicts into arrays and build the calibration report from them.

This is the one implementation behind the dashboard, `judge_report` and the JSON download.
Loading takes one query per table (gold items, runs, judge versions) and two on verdicts:
one row of two numbers per verdict, and one per-judge sum of costs done by the database
(costs are Decimals; summing them in SQL spares a million Decimal objects). Every number is
then computed by `judges.metrics` on the arrays.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from django.db import connection
from django.db.models import Count, Sum

from judges import metrics
from judges.models import CalibrationRun, JudgeVersion, RunStatus, Verdict
from labelling.models import UNCLASSIFIED, GoldSetVersion, GoldSetVersionItem, LabelDecision


@dataclass(frozen=True)
class JudgeColumn:
    """What the report says about the judge version behind one column of the arrays."""

    id: int
    name: str
    number: int
    backend: str
    family: str
    model: str
    is_simulated: bool
    # The judge's slug; `name` is its display name ("openai/gpt-4o"), the slug when it has none.
    slug: str = ""

    @property
    def label(self) -> str:
        return f"{self.name} v{self.number}"


@dataclass
class CalibrationData:
    """A gold-set version's labels and its judges' verdicts, as arrays (items × judges)."""

    gold_set_version: GoldSetVersion
    run_ids: list[int]
    query_ids: np.ndarray
    external_ids: list[str]
    is_wrong: np.ndarray
    error_class: np.ndarray
    judges: list[JudgeColumn]
    counts: metrics.VerdictCounts
    verdicts: np.ndarray
    cost_sum: np.ndarray
    latencies: list[np.ndarray]
    item_latency: np.ndarray
    # Judge version ids none of whose verdicts has a measured cost.
    unmeasured_cost: frozenset = frozenset()
    _probs: np.ndarray | None = field(default=None, repr=False)

    @property
    def probs(self) -> np.ndarray:
        """Return reject_prob per item × judge (NaN where unjudged), computed once."""
        if self._probs is None:
            self._probs = metrics.reject_prob(self.counts)
        return self._probs

    @property
    def cost_per_verdict(self) -> np.ndarray:
        return np.divide(self.cost_sum, self.verdicts, out=np.zeros_like(self.cost_sum), where=self.verdicts > 0)

    def judge_index(self, ref: str) -> int:
        """Find a judge column by "name" (its latest version here) or "name:N"."""
        name, _, number = ref.partition(":")
        matches = [i for i, judge in enumerate(self.judges) if name in (judge.name, judge.slug)]
        if number:
            matches = [i for i in matches if str(self.judges[i].number) == number.lstrip("v")]
        if not matches:
            raise ValueError(f"judge {ref!r} has no verdicts on {self.gold_set_version}")
        return max(matches, key=lambda i: self.judges[i].number)


def selected_run_ids(gold_set_version: GoldSetVersion, run_ids=None) -> list[int]:
    """Return the given runs on this version, or by default all its completed runs."""
    runs = CalibrationRun.objects.filter(gold_set_version=gold_set_version)
    runs = runs.filter(status=RunStatus.COMPLETED) if run_ids is None else runs.filter(pk__in=list(run_ids))
    return sorted(runs.values_list("pk", flat=True))


def load_gold_items(gold_set_version: GoldSetVersion):
    """Return (query ids sorted, external ids, is_wrong, error class) of correct/wrong items."""
    rows = (
        GoldSetVersionItem.objects.filter(
            version=gold_set_version, decision__in=[LabelDecision.CORRECT, LabelDecision.WRONG]
        )
        .order_by("query_id")
        .values_list("query_id", "query__external_id", "decision", "error_class")
    )
    rows = list(rows)
    query_ids = np.array([row[0] for row in rows], dtype=np.int64)
    external_ids = [row[1] for row in rows]
    is_wrong = np.array([row[2] == LabelDecision.WRONG for row in rows], dtype=bool)
    error_class = np.array([row[3] if row[2] == LabelDecision.WRONG else "" for row in rows], dtype=object)
    return query_ids, external_ids, is_wrong, error_class


@contextmanager
def raw_cursor():
    """Yield a DB-API cursor; on PostgreSQL one that receives results in binary.

    psycopg parses text-format floats slowly (a million latencies cost more than the rest
    of the row); binary results come as machine numbers.
    """
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            yield cursor
        return
    import psycopg

    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.format = psycopg.pq.Format.BINARY
        yield cursor


def fetch_columns(sql: str, params, dtypes, chunk_rows: int = 100_000) -> list[np.ndarray]:
    """Run one SELECT and return its columns as numpy arrays, converting chunk by chunk.

    Chunks keep peak memory to one chunk of Python row objects instead of all of them.
    """
    parts = [[] for _ in dtypes]
    with raw_cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(chunk_rows):
            for part, column, dtype in zip(parts, zip(*rows, strict=True), dtypes, strict=True):
                part.append(np.fromiter(column, dtype=dtype, count=len(rows)))
    return [np.concatenate(part) if part else np.empty(0, dtype) for part, dtype in zip(parts, dtypes, strict=True)]


DECISION_SQL = (
    f"CASE decision WHEN 'accept' THEN {metrics.ACCEPT} WHEN 'reject' THEN {metrics.REJECT} ELSE {metrics.ERROR} END"
)
# A latency that was not measured (NULL) comes back as -1, then NaN.
LATENCY_SQL = "COALESCE(latency_ms, -1.0)"
# Packing (query, judge version, decision) into one int64 needs query id × span < 2**63.
MAX_PACKING_SPAN = 2**24


def fetch_verdict_rows(run_ids: list[int], max_judge_version_id: int) -> tuple[np.ndarray, ...]:
    """Fetch (query id, judge version id, decision code, latency) of the runs' verdicts.

    One SELECT of two numbers per verdict: SQL packs query id, judge version id and a
    decision code into one integer (query × span + judge × 4 + code), so the driver builds
    two Python objects per row instead of four and no strings. Judge version ids too large
    to pack fall back to three columns.
    """
    if not run_ids:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64)
    placeholders = ", ".join(["%s"] * len(run_ids))
    span = 1 << int(max_judge_version_id * 4 + 3).bit_length()
    table = Verdict._meta.db_table
    if span <= MAX_PACKING_SPAN:
        sql = (
            f"SELECT query_id * {span} + judge_version_id * 4 + {DECISION_SQL}, {LATENCY_SQL} "
            f"FROM {table} WHERE run_id IN ({placeholders})"
        )
        packed, latency = fetch_columns(sql, run_ids, (np.int64, np.float64))
        query_ids, judge_and_code = np.divmod(packed, span)
    else:
        sql = (
            f"SELECT query_id, judge_version_id * 4 + {DECISION_SQL}, {LATENCY_SQL} "
            f"FROM {table} WHERE run_id IN ({placeholders})"
        )
        query_ids, judge_and_code, latency = fetch_columns(sql, run_ids, (np.int64, np.int64, np.float64))
    judge_ids, codes = np.divmod(judge_and_code, 4)
    latency[latency < 0] = np.nan  # not measured (imported verdicts): left out of percentiles and means
    return query_ids, judge_ids, codes, latency


def fetch_verdict_costs(run_ids: list[int]) -> dict[int, tuple[int, float, int]]:
    """Return {judge version id: (verdicts, total cost, verdicts with a cost)}, summed by the database.

    Verdicts whose cost was not measured (NULL, imported) count at the mean of the measured
    ones, so that the cost per verdict is the mean over measured verdicts only.
    """
    rows = (
        Verdict.objects.filter(run_id__in=run_ids)
        .values_list("judge_version_id")
        .annotate(verdicts=Count("id"), costed=Count("cost_usd"), cost=Sum("cost_usd"))
        .order_by()
    )
    return {
        judge_version_id: (verdicts, float(cost or 0) * verdicts / costed if costed else 0.0, costed)
        for judge_version_id, verdicts, costed, cost in rows
    }


def load_judge_columns(judge_version_ids) -> list[JudgeColumn]:
    """Return the judge versions as columns, ordered by judge name then version number."""
    versions = JudgeVersion.objects.filter(pk__in=[int(i) for i in judge_version_ids]).values_list(
        "pk", "judge__name", "number", "backend", "family", "model", "is_simulated", "judge__display_name"
    )
    columns = [JudgeColumn(pk, display or slug, *rest, slug=slug) for pk, slug, *rest, display in versions]
    return sorted(columns, key=lambda column: (column.name, column.number))


def load_calibration(*, gold_set_version: GoldSetVersion, run_ids=None) -> CalibrationData:
    """Load labels and verdicts of a gold-set version into arrays (one query per table)."""
    runs = selected_run_ids(gold_set_version, run_ids)
    query_ids, external_ids, is_wrong, error_class = load_gold_items(gold_set_version)
    costs = fetch_verdict_costs(runs)
    query_of_row, judge_of_row, decision_of_row, latency_of_row = fetch_verdict_rows(runs, max(costs, default=0))
    item_of_row = np.searchsorted(query_ids, query_of_row)
    in_version = item_of_row < len(query_ids)
    in_version[in_version] = query_ids[item_of_row[in_version]] == query_of_row[in_version]
    judges = load_judge_columns(np.unique(judge_of_row[in_version]))
    column_of_row = columns_of(np.array([judge.id for judge in judges], dtype=np.int64), judge_of_row[in_version])
    item_of_row = item_of_row[in_version]
    latency_of_row = latency_of_row[in_version]
    n_items, n_judges = len(query_ids), len(judges)
    counts = metrics.counts_from_rows(item_of_row, column_of_row, decision_of_row[in_version], n_items, n_judges)
    verdicts = np.array([costs.get(judge.id, (0, 0.0))[0] for judge in judges], dtype=np.int64)
    cost_sum = np.array([costs.get(judge.id, (0, 0.0))[1] for judge in judges], dtype=np.float64)
    latencies = [values[~np.isnan(values)] for values in split_by_column(latency_of_row, column_of_row, n_judges)]
    item_latency = mean_latency_per_cell(item_of_row, column_of_row, latency_of_row, n_items, n_judges)
    return CalibrationData(
        gold_set_version=gold_set_version,
        run_ids=runs,
        query_ids=query_ids,
        external_ids=external_ids,
        is_wrong=is_wrong,
        error_class=error_class,
        judges=judges,
        counts=counts,
        verdicts=verdicts,
        cost_sum=cost_sum,
        latencies=latencies,
        item_latency=item_latency,
        unmeasured_cost=frozenset(judge_id for judge_id, (_, _, costed) in costs.items() if not costed),
    )


def columns_of(judge_ids: np.ndarray, judge_of_row: np.ndarray) -> np.ndarray:
    """Map judge version ids to column numbers (columns are ordered by name, not by id)."""
    if not len(judge_ids):
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(judge_ids, kind="stable")
    return order[np.searchsorted(judge_ids[order], judge_of_row)]


def split_by_column(values: np.ndarray, column_of_row, n_judges: int) -> list[np.ndarray]:
    """Group per-verdict values by judge column."""
    if not n_judges:
        return []
    order = np.argsort(column_of_row, kind="stable")
    bounds = np.searchsorted(np.asarray(column_of_row)[order], np.arange(n_judges + 1))
    ordered = values[order]
    return [ordered[bounds[i] : bounds[i + 1]] for i in range(n_judges)]


def mean_latency_per_cell(item_of_row, column_of_row, latency, n_items: int, n_judges: int) -> np.ndarray:
    """Return the mean verdict latency per item × judge (NaN where the judge has none)."""
    if not n_judges:
        return np.empty((n_items, 0))
    measured = ~np.isnan(latency)
    cell = (np.asarray(column_of_row, dtype=np.int64) * n_items + item_of_row)[measured]
    size = n_items * n_judges
    total = np.bincount(cell, weights=latency[measured], minlength=size)
    count = np.bincount(cell, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total / count).reshape(n_judges, n_items).T


def judge_entry(data: CalibrationData, column: int, generation_cost_usd: float) -> dict:
    """Return one judge version's entry of the report."""
    judge = data.judges[column]
    summary = metrics.judge_summary(
        data.counts,
        column,
        data.is_wrong,
        data.error_class,
        cost_sum=float(data.cost_sum[column]),
        verdicts=int(data.verdicts[column]),
        latencies=data.latencies[column],
        generation_cost=generation_cost_usd,
    )
    entry = {"name": judge.name, "slug": judge.slug, "version": judge.number, "judge_version_id": judge.id}
    entry["simulated"] = judge.is_simulated
    entry.update(summary)
    if judge.id in data.unmeasured_cost:
        # No verdict of this judge has a cost (imported without one): unknown, not free.
        entry["cost_per_verdict_usd"] = entry["cost_per_accepted_usd"] = None
    return entry


def report_from_data(data: CalibrationData, *, generation_cost_usd: float = 0.0, baseline: str | None = None) -> dict:
    """Build the report dict (the JSON contract of `judge_report`) from loaded arrays."""
    total = len(data.is_wrong)
    wrong = int(data.is_wrong.sum())
    judges = [judge_entry(data, column, generation_cost_usd) for column in range(len(data.judges))]
    add_break_even(data, judges, baseline, wrong_share=wrong / total if total else 0.0)
    pairs = []
    for a, b in itertools.combinations(range(len(data.judges)), 2):
        pair = metrics.pair_overlap(data.probs[:, a], data.probs[:, b], data.is_wrong)
        pairs.append(
            {
                "a": data.judges[a].name,
                "a_version": data.judges[a].number,
                "b": data.judges[b].name,
                "b_version": data.judges[b].number,
                **pair,
            }
        )
    version = data.gold_set_version
    return {
        "gold_set": version.gold_set.name,
        "version": version.number,
        "runs": data.run_ids,
        "generation_cost_usd": generation_cost_usd,
        "baseline": baseline,
        "items": {"total": total, "wrong": wrong, "correct": total - wrong},
        # Items the version left out at publish (e.g. unresolved ties), and how it resolved the rest.
        "left_out": {
            "count": version.unresolved_count,
            "summary": version.left_out_summary,
            "resolution": version.resolution or "manual",
        },
        # Wrong items without an error class: left out of every per-class figure.
        "unclassified_wrong": int((data.is_wrong & (data.error_class == UNCLASSIFIED)).sum()),
        "judges": judges,
        "pairs": pairs,
    }


def add_break_even(data: CalibrationData, judges: list[dict], baseline: str | None, wrong_share: float) -> None:
    """Fill each judge's break_even_error_cost_usd against the baseline (None without one)."""
    base = judges[data.judge_index(baseline)] if baseline else None
    for entry in judges:
        entry["break_even_error_cost_usd"] = (
            None
            if base is None or entry is base
            else metrics.break_even_error_cost(
                entry["cost_per_accepted_usd"],
                entry["catch_rate"],
                base["cost_per_accepted_usd"],
                base["catch_rate"],
                wrong_share,
            )
        )


def build_report(
    *,
    gold_set_version: GoldSetVersion,
    generation_cost_usd: float = 0.0,
    baseline: str | None = None,
    run_ids=None,
) -> dict:
    """Load a gold-set version's verdicts and return the calibration report dict.

    `baseline` names a judge ("name" or "name:N") for break-even costs; `run_ids` limits
    the runs (default: every completed run on the version). Raises ValueError when the
    baseline judge has no verdicts there.
    """
    data = load_calibration(gold_set_version=gold_set_version, run_ids=run_ids)
    return report_from_data(data, generation_cost_usd=generation_cost_usd, baseline=baseline)


def ensemble_entry(
    data: CalibrationData, members: list[int], rule: str, *, generation_cost_usd: float = 0.0, k: int | None = None
) -> dict:
    """Return an ensemble's metrics over the judge columns `members`."""
    result = metrics.ensemble_metrics(
        data.probs,
        data.is_wrong,
        members,
        rule,
        cost_per_verdict=data.cost_per_verdict,
        item_latency=data.item_latency,
        generation_cost=generation_cost_usd,
        k=k,
    )
    result["members"] = [data.judges[i].label for i in members]
    result["rule"] = rule
    return result


def ensembles_up_to(
    data: CalibrationData,
    *,
    max_size: int = 3,
    rules=("any", "majority"),
    generation_cost_usd: float = 0.0,
    false_reject_ceiling: float = 1.0,
) -> list[dict]:
    """Score every ensemble of up to `max_size` judges; mark the Pareto frontier.

    Points above the false-reject ceiling are kept but flagged `over_ceiling` and left off
    the frontier, which runs over cost per accepted (lower) and catch rate (higher).
    """
    points = []
    for size in range(1, min(max_size, len(data.judges)) + 1):
        for members in itertools.combinations(range(len(data.judges)), size):
            for rule in rules if size > 1 else ("any",):
                entry = ensemble_entry(data, list(members), rule, generation_cost_usd=generation_cost_usd)
                entry["rule"] = rule if size > 1 else "single"
                entry["over_ceiling"] = (entry["false_reject_rate"] or 0) > false_reject_ceiling
                points.append(entry)
    eligible = [
        p
        for p in points
        if not p["over_ceiling"] and p["cost_per_accepted_usd"] is not None and p["catch_rate"] is not None
    ]
    frontier = metrics.pareto_frontier(
        [p["cost_per_accepted_usd"] for p in eligible], [p["catch_rate"] for p in eligible]
    )
    for point in points:
        point["pareto"] = False
    for point, on_frontier in zip(eligible, frontier, strict=True):
        point["pareto"] = on_frontier
    return points
