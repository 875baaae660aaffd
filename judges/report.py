"""Load a gold-set version's verdicts into arrays and build the calibration report from them.

This is the one implementation behind the dashboard, `judge_report`, the JSON download and
triage's calibration. Loading takes one query per table (gold items, runs, judge versions)
and two on verdicts: one row of three numbers per verdict, and one per-judge sum of costs
done by the database (costs are Decimals; summing them in SQL spares a million Decimal
objects). Every number is then computed by `judges.metrics` on the arrays.
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from django.db import connection
from django.db.models import Count, Q, Sum

from judges import metrics
from judges.ladder_selectors import ladder_report
from judges.models import JudgeVersion, Verdict
from judges.run_selection import SOURCE_BOTH, RunSelection, calibration_run_ids, gold_items_of_source
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
    selection: RunSelection
    query_ids: np.ndarray
    external_ids: list[str]
    is_wrong: np.ndarray
    error_class: np.ndarray
    judges: list[JudgeColumn]
    counts: metrics.VerdictCounts
    verdicts: np.ndarray
    cost_sum: np.ndarray
    latencies: list[np.ndarray]
    # Per verdict row (in the version): item, column, decision code, draw key, latency.
    rows: tuple[np.ndarray, ...] = field(default=(), repr=False)
    # Judge version ids none of whose verdicts has a measured cost.
    unmeasured_cost: frozenset = frozenset()
    # Judge version id -> verdicts its calls recorded as made by the simulator.
    simulated_verdicts: dict = field(default_factory=dict)
    _probs: np.ndarray | None = field(default=None, repr=False)
    _draws: metrics.DrawTable | None = field(default=None, repr=False)

    @property
    def probs(self) -> np.ndarray:
        """Return reject_prob per item × judge (NaN where unjudged), computed once."""
        if self._probs is None:
            self._probs = metrics.reject_prob(self.counts)
        return self._probs

    @property
    def draws(self) -> metrics.DrawTable:
        """Return the answered verdicts laid out as draws (for ensembles), built once."""
        if self._draws is None:
            item, column, decision, draw_key, latency = self.rows
            self._draws = metrics.draws_from_rows(
                item, column, decision, draw_key, latency, len(self.is_wrong), len(self.judges)
            )
        return self._draws

    @property
    def common_items(self) -> np.ndarray:
        """Return True for items every judge of the selection judged (ensembles and Pareto use them)."""
        if not self.judges:
            return np.zeros(len(self.is_wrong), dtype=bool)
        return ~np.isnan(self.probs).any(axis=1)

    def runs_of_judges(self) -> list[list[int]]:
        """Return, per judge column, the selected runs in which it has verdicts."""
        _, column, _, draw_key, _ = self.rows
        run_of_row = draw_key >> DRAW_RUN_SHIFT
        result = [[] for _ in self.judges]
        for run in self.run_ids:
            present = np.bincount(column[run_of_row == run], minlength=len(self.judges)) > 0
            for index in np.flatnonzero(present):
                result[index].append(run)
        return result

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
    selection = RunSelection(run_ids=tuple(sorted(int(i) for i in run_ids))) if run_ids is not None else None
    return calibration_run_ids(gold_set_version=gold_set_version, selection=selection)


def load_gold_items(gold_set_version: GoldSetVersion, source: str = SOURCE_BOTH):
    """Return (query ids sorted, external ids, is_wrong, error class) of correct/wrong items of `source`."""
    items = GoldSetVersionItem.objects.filter(
        version=gold_set_version, decision__in=[LabelDecision.CORRECT, LabelDecision.WRONG]
    )
    rows = (
        gold_items_of_source(items, source)
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
# A draw key orders a judge's verdicts on an item: run × 2**16 + repeat (repeats < 2**15).
DRAW_RUN_SHIFT = 16


def verdict_rows_sql(run_ids: list[int], max_judge_version_id: int) -> tuple[str, tuple, int | None]:
    """Return (SELECT, its column dtypes, packing span or None) of the report's verdict fetch.

    Three numbers per verdict: SQL packs query id, judge version id and a decision code
    into one integer (query × span + judge × 4 + code), run and repeat into another, and
    the latency. Judge version ids too large to pack fall back to a separate query id.
    """
    placeholders = ", ".join(["%s"] * len(run_ids))
    span = 1 << int(max_judge_version_id * 4 + 3).bit_length()
    table = Verdict._meta.db_table
    draw = f"run_id * {1 << DRAW_RUN_SHIFT} + repeat"
    where = f"FROM {table} WHERE run_id IN ({placeholders})"
    if span <= MAX_PACKING_SPAN:
        sql = f"SELECT query_id * {span} + judge_version_id * 4 + {DECISION_SQL}, {draw}, {LATENCY_SQL} {where}"
        return sql, (np.int64, np.int64, np.float64), span
    sql = f"SELECT query_id, judge_version_id * 4 + {DECISION_SQL}, {draw}, {LATENCY_SQL} {where}"
    return sql, (np.int64, np.int64, np.int64, np.float64), None


def fetch_verdict_rows(run_ids: list[int], max_judge_version_id: int) -> tuple[np.ndarray, ...]:
    """Fetch (query id, judge version id, decision code, draw key, latency) of the runs' verdicts.

    The driver builds three Python numbers per row and no strings (`verdict_rows_sql`). A
    latency that was not measured (imported verdicts) is NaN: left out of percentiles and means.
    """
    if not run_ids:
        empty = np.empty(0, np.int64)
        return empty, empty, empty, empty, np.empty(0, np.float64)
    sql, dtypes, span = verdict_rows_sql(run_ids, max_judge_version_id)
    if span is not None:
        packed, draw_key, latency = fetch_columns(sql, run_ids, dtypes)
        query_ids, judge_and_code = np.divmod(packed, span)
    else:
        query_ids, judge_and_code, draw_key, latency = fetch_columns(sql, run_ids, dtypes)
    judge_ids, codes = np.divmod(judge_and_code, 4)
    latency[latency < 0] = np.nan
    return query_ids, judge_ids, codes, draw_key, latency


def fetch_verdict_costs(run_ids: list[int]) -> dict[int, tuple[int, float, int, int]]:
    """Return {judge version id: (verdicts, total cost, verdicts with a cost, simulated verdicts)}.

    Summed by the database. Whether a verdict was simulated is what its call recorded.

    Verdicts whose cost was not measured (NULL, imported) count at the mean of the measured
    ones, so that the cost per verdict is the mean over measured verdicts only.
    """
    rows = (
        Verdict.objects.filter(run_id__in=run_ids)
        .values_list("judge_version_id")
        .annotate(
            verdicts=Count("id"),
            costed=Count("cost_usd"),
            cost=Sum("cost_usd"),
            simulated=Count("id", filter=Q(simulated=True)),
        )
        .order_by()
    )
    return {
        judge_version_id: (verdicts, float(cost or 0) * verdicts / costed if costed else 0.0, costed, simulated)
        for judge_version_id, verdicts, costed, cost, simulated in rows
    }


def load_judge_columns(judge_version_ids) -> list[JudgeColumn]:
    """Return the judge versions as columns, ordered by judge name then version number."""
    versions = JudgeVersion.objects.filter(pk__in=[int(i) for i in judge_version_ids]).values_list(
        "pk", "judge__name", "number", "backend", "family", "model", "is_simulated", "judge__display_name"
    )
    columns = [JudgeColumn(pk, display or slug, *rest, slug=slug) for pk, slug, *rest, display in versions]
    return sorted(columns, key=lambda column: (column.name, column.number))


def load_calibration(
    *, gold_set_version: GoldSetVersion, selection: RunSelection | None = None, run_ids=None
) -> CalibrationData:
    """Load labels and verdicts of a gold-set version into arrays (one query per table).

    `selection` says which runs count (default: every completed run on the version);
    `run_ids` is a shorthand for a selection of named runs. Raises ValueError for runs
    that are not on the version.
    """
    if selection is None:
        named = tuple(sorted(int(i) for i in run_ids)) if run_ids is not None else None
        selection = RunSelection(run_ids=named)
    runs = calibration_run_ids(gold_set_version=gold_set_version, selection=selection)
    query_ids, external_ids, is_wrong, error_class = load_gold_items(gold_set_version, selection.source)
    costs = fetch_verdict_costs(runs)
    query_of_row, judge_of_row, decision_of_row, draw_key_of_row, latency_of_row = fetch_verdict_rows(
        runs, max(costs, default=0)
    )
    item_of_row = np.searchsorted(query_ids, query_of_row)
    in_version = item_of_row < len(query_ids)
    in_version[in_version] = query_ids[item_of_row[in_version]] == query_of_row[in_version]
    judges = load_judge_columns(np.unique(judge_of_row[in_version]))
    column_of_row = columns_of(np.array([judge.id for judge in judges], dtype=np.int64), judge_of_row[in_version])
    item_of_row = item_of_row[in_version]
    latency_of_row = latency_of_row[in_version]
    decision_of_row = decision_of_row[in_version]
    n_items, n_judges = len(query_ids), len(judges)
    counts = metrics.counts_from_rows(item_of_row, column_of_row, decision_of_row, n_items, n_judges)
    verdicts = np.array([costs.get(judge.id, (0, 0.0))[0] for judge in judges], dtype=np.int64)
    cost_sum = np.array([costs.get(judge.id, (0, 0.0))[1] for judge in judges], dtype=np.float64)
    latencies = [values[~np.isnan(values)] for values in split_by_column(latency_of_row, column_of_row, n_judges)]
    return CalibrationData(
        gold_set_version=gold_set_version,
        run_ids=runs,
        selection=selection,
        query_ids=query_ids,
        external_ids=external_ids,
        is_wrong=is_wrong,
        error_class=error_class,
        judges=judges,
        counts=counts,
        verdicts=verdicts,
        cost_sum=cost_sum,
        latencies=latencies,
        rows=(item_of_row, column_of_row, decision_of_row, draw_key_of_row[in_version], latency_of_row),
        unmeasured_cost=frozenset(judge_id for judge_id, (_, _, costed, _) in costs.items() if not costed),
        simulated_verdicts={judge_id: simulated for judge_id, (*_, simulated) in costs.items()},
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


def judge_entry(data: CalibrationData, column: int, generation_cost_usd: float, runs: list[int] | None = None) -> dict:
    """Return one judge version's entry of the report (`runs`: the selected runs it took part in)."""
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
    # What the calls recorded, not what the version was registered as (issue 16): a run
    # whose verdicts are of both kinds is "mixed", and both counts are given.
    verdict_count = int(data.verdicts[column])
    simulated = data.simulated_verdicts.get(judge.id, 0)
    if not verdict_count:
        entry["simulation"] = "simulated" if judge.is_simulated else "real"
    else:
        entry["simulation"] = "simulated" if simulated == verdict_count else "real" if not simulated else "mixed"
    entry["simulated"] = entry["simulation"] == "simulated"
    entry["simulated_verdicts"] = simulated
    entry["runs"] = data.runs_of_judges()[column] if runs is None else runs
    entry.update(summary)
    if judge.id in data.unmeasured_cost:
        # No verdict of this judge has a cost (imported without one): unknown, not free.
        entry["cost_per_verdict_usd"] = entry["cost_per_accepted_usd"] = None
    return entry


def sample_warnings(data: CalibrationData, judges: list[dict]) -> list[str]:
    """Say when the judges compared rest on different item sets or different repeat counts."""
    warnings = []
    if len(judges) < 2:
        return warnings
    judged = ~np.isnan(data.probs)
    if not (judged == judged[:, :1]).all():
        listed = ", ".join(f"{j['name']} v{j['version']} {j['items']}" for j in judges)
        warnings.append(
            f"The judges rest on different item sets (items judged: {listed}). Each judge's rates use "
            f"its own items, pairs the items both judged, and ensembles and the Pareto chart the "
            f"{int(data.common_items.sum())} items every judge judged."
        )
    if len({j["repeats"] for j in judges}) > 1:
        listed = ", ".join(f"{j['name']} v{j['version']} {j['repeats']}" for j in judges)
        warnings.append(
            f"The judges rest on different repeat counts (most verdicts on one item: {listed}); "
            f"flip rates and interval widths are not comparable between them."
        )
    return warnings


def report_from_data(data: CalibrationData, *, generation_cost_usd: float = 0.0, baseline: str | None = None) -> dict:
    """Build the report dict (the JSON contract of `judge_report`) from loaded arrays."""
    total = len(data.is_wrong)
    wrong = int(data.is_wrong.sum())
    runs_of_judges = data.runs_of_judges()
    judges = [
        judge_entry(data, column, generation_cost_usd, runs=runs_of_judges[column])
        for column in range(len(data.judges))
    ]
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
        "run_selection": data.selection.as_dict(),
        "generation_cost_usd": generation_cost_usd,
        "baseline": baseline,
        "items": {"total": total, "wrong": wrong, "correct": total - wrong},
        "common_items": {
            "items": int(data.common_items.sum()),
            "wrong": int((data.common_items & data.is_wrong).sum()),
            "rule": "items every judge of the selection judged (ensembles and the Pareto chart)",
        },
        "warnings": sample_warnings(data, judges),
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
        # The verification ladder's rungs among the judges (seed 002): cumulative and marginal.
        "ladder": ladder_report(data=data),
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
    selection: RunSelection | None = None,
) -> dict:
    """Load a gold-set version's verdicts and return the calibration report dict.

    `baseline` names a judge ("name" or "name:N") for break-even costs; `run_ids` limits
    the runs to named ones, `selection` chooses them by ids and dates (default: every
    completed run on the version). Raises ValueError when the baseline judge has no
    verdicts there or a named run is not on the version.
    """
    data = load_calibration(gold_set_version=gold_set_version, selection=selection, run_ids=run_ids)
    return report_from_data(data, generation_cost_usd=generation_cost_usd, baseline=baseline)


def ensemble_entry(
    data: CalibrationData, members: list[int], rule: str, *, generation_cost_usd: float = 0.0, k: int | None = None
) -> dict:
    """Return an ensemble's metrics over the judge columns `members`, on single draws and common items.

    Raises ValueError for an unknown rule or a k outside 1..len(members).
    """
    result = metrics.ensemble_metrics(
        data.draws,
        data.is_wrong,
        members,
        rule,
        items=data.common_items,
        cost_per_verdict=data.cost_per_verdict,
        generation_cost=generation_cost_usd,
        k=k,
    )
    result["members"] = [data.judges[i].label for i in members]
    result["rule"] = rule
    result["description"] = metrics.ensemble_description(result["members"], rule, k)
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

    Every point is scored on the same items (`CalibrationData.common_items`). Points above
    the false-reject ceiling are kept but flagged `over_ceiling` and left off the frontier,
    which runs over cost per accepted (lower) and catch rate (higher).
    """
    points = []
    for size in range(1, min(max_size, len(data.judges)) + 1):
        for members in itertools.combinations(range(len(data.judges)), size):
            for rule in rules if size > 1 else ("any",):
                entry = ensemble_entry(data, list(members), rule, generation_cost_usd=generation_cost_usd)
                if size == 1:
                    entry["rule"] = "single"
                    entry["description"] = metrics.ensemble_description(entry["members"], "single")
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


def marginal_values(data: CalibrationData, members: list[int], generation_cost_usd: float) -> list[dict]:
    """Return, for each judge not in the ensemble, extra errors caught per extra dollar ("any" rule).

    Per output: wrong share × Δ catch rate ÷ Δ cost per accepted output, on the common items.
    """
    base = ensemble_entry(data, members, "any", generation_cost_usd=generation_cost_usd)
    common = data.common_items
    wrong_share = float(data.is_wrong[common].mean()) if common.any() else 0.0
    rows = []
    for column in range(len(data.judges)):
        if column in members:
            continue
        grown = ensemble_entry(data, [*members, column], "any", generation_cost_usd=generation_cost_usd)
        extra_catch = (grown["catch_rate"] or 0) - (base["catch_rate"] or 0)
        extra_cost = (grown["cost_per_accepted_usd"] or 0) - (base["cost_per_accepted_usd"] or 0)
        rows.append(
            {
                "judge": data.judges[column],
                "extra_catch_rate": extra_catch,
                "extra_false_reject_rate": (grown["false_reject_rate"] or 0) - (base["false_reject_rate"] or 0),
                "extra_cost_per_accepted_usd": extra_cost,
                "catches_per_dollar": wrong_share * extra_catch / extra_cost if extra_cost > 0 else None,
            }
        )
    return sorted(rows, key=lambda row: -(row["catches_per_dollar"] or 0))
