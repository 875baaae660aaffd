"""Load a gold-set version's labels and verdicts into arrays: the input of every calibration figure.

`judges.report` builds the report from these arrays; the dashboard, `judge_report`, the JSON
download and triage's calibration all read them. Loading takes one query per table (gold
items, runs, judge versions) and two on verdicts: one row of three numbers per verdict
(`judges.verdict_rows`, packed by the database), and one per-judge sum of costs done by the
database (costs are Decimals; summing them in SQL spares a million Decimal objects). Every
number is then computed by `judges.metrics` and `judges.ensembles` on the arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db.models import Count, Q, Sum

from judges import metrics
from judges.draws import DrawTable, draws_from_rows
from judges.examples import example_items, rows_outside_examples
from judges.models import JudgeVersion, Verdict
from judges.run_selection import SOURCE_BOTH, RunSelection, calibration_run_ids_get, gold_items_of_source
from judges.verdict_rows import DRAW_RUN_SHIFT, fetch_verdict_rows
from labelling.models import UNCLASSIFIED, GoldSetVersion, GoldSetVersionItem, LabelDecision
from labelling.split_models import SPLIT_ALL
from labelling.splits import items_of_split


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
    cost_sum: np.ndarray  # per judge; NaN where none of its verdicts has a measured cost
    latencies: list[np.ndarray]
    # Per verdict row (in the version): item, column, decision code, draw key, latency.
    rows: tuple[np.ndarray, ...] = field(default=(), repr=False)
    # Judge version id -> verdicts its calls recorded as made by the simulator.
    simulated_verdicts: dict = field(default_factory=dict)
    # Read when the report is built (judges.report) unless given: the version's taxonomy (a
    # TaxonomyIndex), the judges' class guesses on wrong items (a judges.class_guesses.GuessTable)
    # and the runs' labels.
    taxonomy: object | None = field(default=None, repr=False)
    guesses: object | None = field(default=None, repr=False)
    run_labels: dict | None = field(default=None, repr=False)  # {run id: label}, read with the report
    # Which part of the version's dev/test split the items are (labelling.splits): dev, test or all.
    split: str = SPLIT_ALL
    # Per judge column: how many of the items are its own worked examples, left out of its figures.
    excluded_examples: np.ndarray | None = field(default=None, repr=False)
    _probs: np.ndarray | None = field(default=None, repr=False)
    _draws: DrawTable | None = field(default=None, repr=False)

    @property
    def probs(self) -> np.ndarray:
        """Return reject_prob per item × judge (NaN where unjudged), computed once."""
        if self._probs is None:
            self._probs = metrics.reject_prob(self.counts)
        return self._probs

    @property
    def draws(self) -> DrawTable:
        """Return the answered verdicts laid out as draws (for ensembles), built once."""
        if self._draws is None:
            item, column, decision, draw_key, latency = self.rows
            self._draws = draws_from_rows(
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
        """Return each judge's mean cost per verdict; NaN where no verdict's cost was measured."""
        return np.divide(self.cost_sum, self.verdicts, out=self.cost_sum.copy(), where=self.verdicts > 0)

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
    return calibration_run_ids_get(gold_set_version=gold_set_version, selection=selection)


def gold_items(gold_set_version: GoldSetVersion, source: str = SOURCE_BOTH, split: str = SPLIT_ALL):
    """Return the version's correct/wrong items of `source` and `split`: the rows of every table of the report."""
    items = GoldSetVersionItem.objects.filter(
        version=gold_set_version, decision__in=[LabelDecision.CORRECT, LabelDecision.WRONG]
    )
    return items_of_split(gold_items_of_source(items, source), split)


def load_gold_items(gold_set_version: GoldSetVersion, source: str = SOURCE_BOTH, split: str = SPLIT_ALL):
    """Return (query ids sorted, external ids, is_wrong, error class) of correct/wrong items of `source` and `split`.

    A wrong item without an error class is `unclassified` (the product's one word for it).
    """
    rows = (
        gold_items(gold_set_version, source, split)
        .order_by("query_id")
        .values_list("query_id", "query__external_id", "decision", "error_class")
    )
    rows = list(rows)
    query_ids = np.array([row[0] for row in rows], dtype=np.int64)
    external_ids = [row[1] for row in rows]
    is_wrong = np.array([row[2] == LabelDecision.WRONG for row in rows], dtype=bool)
    error_class = np.array(
        [(row[3] or UNCLASSIFIED) if row[2] == LabelDecision.WRONG else "" for row in rows], dtype=object
    )
    return query_ids, external_ids, is_wrong, error_class


def fetch_verdict_costs(run_ids: list[int], items=None) -> dict[int, tuple[int, float, int, int]]:
    """Return {judge version id: (verdicts, total cost, verdicts with a cost, simulated verdicts)}.

    Summed by the database, over every verdict of the runs, or only those on `items` (a
    queryset of gold-set version items: the report's rows, so that every column of a table
    obeys the same selection). Whether a verdict was simulated is what its call recorded.

    Verdicts whose cost was not measured (NULL, imported) count at the mean of the measured
    ones, so that the cost per verdict is the mean over measured verdicts only; a judge with
    no measured cost at all has a total cost of NaN (unknown, never $0).
    """
    verdicts = Verdict.objects.filter(run_id__in=run_ids)
    if items is not None:
        verdicts = verdicts.filter(query_id__in=items.values("query_id"))
    rows = (
        verdicts.values_list("judge_version_id")
        .annotate(
            verdicts=Count("id"),
            costed=Count("cost_usd"),
            cost=Sum("cost_usd"),
            simulated=Count("id", filter=Q(simulated=True)),
        )
        .order_by()
    )
    return {
        judge_version_id: (verdicts, float(cost or 0) * verdicts / costed if costed else np.nan, costed, simulated)
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
    *, gold_set_version: GoldSetVersion, selection: RunSelection | None = None, run_ids=None, split: str = SPLIT_ALL
) -> CalibrationData:
    """Load labels and verdicts of a gold-set version into arrays (one query per table).

    `selection` says which runs count (default: every completed run on the version);
    `run_ids` is a shorthand for a selection of named runs. Raises ValueError for runs
    that are not on the version. `split` keeps one part of the version's dev/test split.
    """
    if selection is None:
        named = tuple(sorted(int(i) for i in run_ids)) if run_ids is not None else None
        selection = RunSelection(run_ids=named)
    runs = calibration_run_ids_get(gold_set_version=gold_set_version, selection=selection)
    query_ids, external_ids, is_wrong, error_class = load_gold_items(gold_set_version, selection.source, split)
    # Every verdict of the runs: its judge ids size the packed rows.
    costs = fetch_verdict_costs(runs)
    query_of_row, judge_of_row, decision_of_row, draw_key_of_row, latency_of_row = fetch_verdict_rows(
        runs, max(costs, default=0)
    )
    item_of_row = np.searchsorted(query_ids, query_of_row)
    in_version = item_of_row < len(query_ids)
    in_version[in_version] = query_ids[item_of_row[in_version]] == query_of_row[in_version]
    if not in_version.all():
        # Some verdicts are on items outside the report (another source, an unsure item):
        # count and price only the report's, as every other column does.
        costs = fetch_verdict_costs(runs, gold_items(gold_set_version, selection.source, split))
    judges = load_judge_columns(np.unique(judge_of_row[in_version]))
    column_of_row = columns_of(np.array([judge.id for judge in judges], dtype=np.int64), judge_of_row[in_version])
    item_of_row = item_of_row[in_version]
    latency_of_row = latency_of_row[in_version]
    decision_of_row = decision_of_row[in_version]
    draw_key_of_row = draw_key_of_row[in_version]
    n_items, n_judges = len(query_ids), len(judges)
    # A judge version is never scored on its own worked examples (judges.examples).
    examples = example_items([judge.id for judge in judges], query_ids)
    outside = rows_outside_examples(item_of_row, column_of_row, examples, n_items)
    if not outside.all():
        item_of_row, column_of_row = item_of_row[outside], column_of_row[outside]
        decision_of_row, draw_key_of_row = decision_of_row[outside], draw_key_of_row[outside]
        latency_of_row = latency_of_row[outside]
    counts = metrics.counts_from_rows(item_of_row, column_of_row, decision_of_row, n_items, n_judges)
    verdicts = np.array([costs.get(judge.id, (0, np.nan))[0] for judge in judges], dtype=np.int64)
    cost_sum = np.array([costs.get(judge.id, (0, np.nan))[1] for judge in judges], dtype=np.float64)
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
        rows=(item_of_row, column_of_row, decision_of_row, draw_key_of_row, latency_of_row),
        simulated_verdicts={judge_id: simulated for judge_id, (*_, simulated) in costs.items()},
        split=split,
        excluded_examples=np.array([len(items) for items in examples], dtype=np.int64),
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
