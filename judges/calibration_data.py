"""Load a gold-set version's labels and verdicts into arrays: the input of every calibration figure.

`judges.report` builds the report from these arrays; the dashboard, `judge_report`, the JSON
download and triage's calibration all read them. Loading takes one query per table (gold
items, runs, judge versions) and two on verdicts: one row of three numbers per verdict
(`judges.verdict_rows`, packed by the database), and per-judge sums of counts and costs
(`judges.verdict_sums`: recorded as each run completed, else summed by the database; costs
are Decimals, and summing them in SQL spares a million Decimal objects). Every
number is then computed by `judges.metrics` and `judges.ensembles` on the arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from django.db.models import Exists, OuterRef

from judges import metrics
from judges.draws import DrawTable, draws_from_rows
from judges.example_models import JudgeVersionExample
from judges.examples import example_items, example_pairs, rows_outside_examples
from judges.gold_items import gold_items, load_gold_items, load_gold_items_of_versions
from judges.models import CalibrationRun, JudgeVersion, RunStatus, Verdict
from judges.row_columns import LOOKUP_MAX_ID, compact_rows, items_of_rows, judge_ids_present, versions_of_runs
from judges.run_selection import RunSelection, calibration_run_ids_get, calibration_runs_get
from judges.verdict_rows import DRAW_RUN_SHIFT, fetch_verdict_rows
from judges.verdict_sums import summed_from_verdicts, verdict_sums
from labelling.models import GoldSetVersion, GoldSetVersionItem, LabelDecision
from labelling.split_models import SPLIT_ALL


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
    # Whether the version shows worked examples (`judges.examples`): only then are they read.
    has_examples: bool = False

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
    external_ids: Sequence[str]  # a list, or `judges.gold_items.ExternalIds` (read when first used)
    is_wrong: np.ndarray
    error_class: np.ndarray
    judges: list[JudgeColumn]
    counts: metrics.VerdictCounts
    verdicts: np.ndarray
    cost_sum: np.ndarray  # per judge; NaN where none of its verdicts has a measured cost
    # Per judge column, its measured latencies; None: read from `rows` when asked (`latency_of`).
    latencies: list[np.ndarray] | None
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

    def latency_of(self, column: int) -> np.ndarray:
        """Return one judge column's measured latencies (unmeasured, NaN, left out).

        Read from the rows when asked rather than held as a second copy of every latency.
        """
        if self.latencies is not None:
            return self.latencies[column]
        _, column_of_row, _, _, latency_of_row = self.rows
        return latency_of_row[(column_of_row == column) & ~np.isnan(latency_of_row)]

    @property
    def common_items(self) -> np.ndarray:
        """Return True for items every judge of the selection judged (ensembles and Pareto use them)."""
        if not self.judges:
            return np.zeros(len(self.is_wrong), dtype=bool)
        return ~np.isnan(self.probs).any(axis=1)

    def runs_of_judges(self) -> list[list[int]]:
        """Return, per judge column, the selected runs in which it has verdicts.

        One pass over the rows (the selected runs' verdicts): each row counts in a (run, judge)
        cell, rather than one pass per run (50 runs of 1.5M rows took 0.08 s; issue 33).
        """
        _, column, _, draw_key, _ = self.rows
        n_judges = len(self.judges)
        if not self.run_ids or not n_judges:
            return [[] for _ in self.judges]
        runs = np.asarray(self.run_ids, dtype=np.int64)
        run_of_row = draw_key >> DRAW_RUN_SHIFT
        low, span = int(runs.min()), int(runs.max() - runs.min()) + 1
        if span * n_judges <= LOOKUP_MAX_ID:
            cells = (run_of_row - low) * n_judges + column
            present = np.bincount(cells, minlength=span * n_judges).reshape(span, n_judges)[runs - low] > 0
        else:  # run ids far apart: number the runs by a search instead of by their id
            order = np.argsort(runs)
            slot = order[np.searchsorted(runs, run_of_row, sorter=order)]
            present = np.bincount(slot * n_judges + column, minlength=len(runs) * n_judges).reshape(-1, n_judges) > 0
        return [[int(run) for run in runs[present[:, index]]] for index in range(n_judges)]

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


def fetch_verdict_costs(run_ids: list[int], items=None) -> dict[int, tuple[int, float, int, int]]:
    """Return {judge version id: (verdicts, total cost, verdicts with a cost, simulated verdicts)}.

    Over every verdict of the runs (their recorded sums, `judges.verdict_sums`), or only
    those on `items` (a queryset of gold-set version items: the report's rows, so that every
    column of a table obeys the same selection), summed by the database. Whether a verdict
    was simulated is what its call recorded.

    Verdicts whose cost was not measured (NULL, imported) count at the mean of the measured
    ones, so that the cost per verdict is the mean over measured verdicts only; a judge with
    no measured cost at all has a total cost of NaN (unknown, never $0).
    """
    if items is None:
        sums = verdict_sums(run_ids).items()
    else:
        verdicts = Verdict.objects.filter(run_id__in=run_ids, query_id__in=items.values("query_id"))
        sums = summed_from_verdicts(verdicts, "judge_version_id")
    return {judge_version_id: priced(raw) for (judge_version_id,), raw in sums}


def fetch_verdict_costs_by_version(run_ids: list[int], *, on_items: bool = False) -> dict[tuple[int, int], tuple]:
    """Return {(gold-set version id, judge version id): the sums of `fetch_verdict_costs`} of runs on many versions.

    `on_items`: only verdicts on a correct/wrong item of their run's own gold-set version.
    """
    if not on_items:
        return {key: priced(raw) for key, raw in verdict_sums(run_ids, by_gold_set_version=True).items()}
    item = GoldSetVersionItem.objects.filter(
        version_id=OuterRef("run__gold_set_version_id"),
        query_id=OuterRef("query_id"),
        decision__in=[LabelDecision.CORRECT, LabelDecision.WRONG],
    )
    verdicts = Verdict.objects.filter(Exists(item), run_id__in=run_ids)
    sums = summed_from_verdicts(verdicts, "run__gold_set_version_id", "judge_version_id")
    return {key: priced(raw) for key, raw in sums}


def priced(raw) -> tuple[int, float, int, int]:
    """Return (verdicts, total cost, verdicts with a cost, simulated): unmeasured verdicts at the measured mean."""
    verdicts_n, costed, cost, simulated = raw
    total = float(cost) * verdicts_n / costed if costed else np.nan
    return verdicts_n, total, costed, simulated


def load_judge_columns(judge_version_ids) -> list[JudgeColumn]:
    """Return the judge versions as columns, ordered by judge name then version number."""
    versions = (
        JudgeVersion.objects.filter(pk__in=[int(i) for i in judge_version_ids])
        .annotate(has_examples=Exists(JudgeVersionExample.objects.filter(judge_version=OuterRef("pk"))))
        .values_list(
            "pk", "judge__name", "number", "backend", "family", "model", "is_simulated", "judge__display_name",
            "has_examples",
        )
    )  # fmt: skip
    columns = [
        JudgeColumn(pk, display or slug, *rest, slug=slug, has_examples=has_examples)
        for pk, slug, *rest, display, has_examples in versions
    ]
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
    run_labels = calibration_runs_get(gold_set_version=gold_set_version, selection=selection)
    runs = list(run_labels)
    items = load_gold_items(gold_set_version, selection.source, split)
    # Every verdict of the runs: its judge ids size the packed rows.
    costs = fetch_verdict_costs(runs)
    rows = fetch_verdict_rows(runs, max(costs, default=0), expected_rows=sum(sums[0] for sums in costs.values()))
    item_of_row, in_version = items_of_rows(items[0], rows[0])
    rows = [item_of_row, *rows[1:]]  # the query ids are no longer needed: their memory goes
    if not in_version.all():
        # Some verdicts are on items outside the report (another source, an unsure item):
        # count and price only the report's, as every other column does.
        costs = fetch_verdict_costs(runs, gold_items(gold_set_version, selection.source, split))
        rows = [row[in_version] for row in rows]
    del item_of_row, in_version
    judges = load_judge_columns(judge_ids_present(rows[1]))
    examples = example_items([judge.id for judge in judges], items[0], examples_of_columns(judges))
    compact_rows(rows, judges)
    data = calibration_assemble(gold_set_version, selection, split, runs, items, costs, rows, judges, examples)
    data.run_labels = run_labels  # read with the runs: the report names them
    return data


def examples_of_columns(judges: list[JudgeColumn]) -> list | None:
    """Return no worked examples when no judge column shows any (nothing to read); None: read them."""
    return None if any(judge.has_examples for judge in judges) else []


def load_calibrations(*, gold_set_versions) -> dict[int, CalibrationData]:
    """Load many gold-set versions' default selections (every completed run, every item) in one set of queries.

    Returns {gold-set version id: the `load_calibration` of that version}, the same arrays,
    read with the same number of queries however many versions, runs and judges there are
    (the judge page's figures on every version a judge ran on).
    """
    versions = {version.pk: version for version in gold_set_versions}
    run_version = dict(
        CalibrationRun.objects.filter(gold_set_version__in=list(versions), status=RunStatus.COMPLETED).values_list(
            "pk", "gold_set_version_id"
        )
    )
    runs = sorted(run_version)
    items_of = load_gold_items_of_versions(list(versions))
    costs = fetch_verdict_costs_by_version(runs)
    rows = fetch_verdict_rows(runs, max((judge for _, judge in costs), default=0))
    version_of_row = versions_of_runs(run_version, rows[3] >> DRAW_RUN_SHIFT)
    kept, outside = {}, False
    for version_id in versions:
        mine = version_of_row == version_id
        item_of_row, in_version = items_of_rows(items_of[version_id][0], rows[0][mine])  # a copy: rows[0] stays
        outside = outside or not in_version.all()
        kept[version_id] = [item_of_row[in_version], *(row[mine][in_version] for row in rows[1:])]
    if outside:
        costs = fetch_verdict_costs_by_version(runs, on_items=True)
    judges = load_judge_columns(np.unique(np.concatenate([rows_[1] for rows_ in kept.values()] or [[]])))
    pairs = examples_of_columns(judges)
    if pairs is None:
        pairs = example_pairs([judge.id for judge in judges])
    result = {}
    for version_id, version in versions.items():
        present = set(np.unique(kept[version_id][1]).tolist())
        columns = [judge for judge in judges if judge.id in present]
        query_ids = items_of[version_id][0]
        compact_rows(kept[version_id], columns)
        result[version_id] = calibration_assemble(
            version,
            RunSelection(),
            SPLIT_ALL,
            sorted(run for run, of in run_version.items() if of == version_id),
            items_of[version_id],
            {judge: sums for (of, judge), sums in costs.items() if of == version_id},
            kept[version_id],
            columns,
            example_items([judge.id for judge in columns], query_ids, pairs),
        )
    return result


def calibration_assemble(
    gold_set_version, selection, split, runs, items, costs, rows, judges, examples
) -> CalibrationData:
    """Lay a version's items and its verdict rows (all on its items) out as arrays: the pure half of loading.

    `rows` are (item index, judge column, decision code, draw key, latency) per verdict
    (`compact_rows`).
    """
    query_ids, external_ids, is_wrong, error_class = items
    item_of_row, column_of_row, decision_of_row, draw_key_of_row, latency_of_row = rows
    n_items, n_judges = len(query_ids), len(judges)
    # A judge version is never scored on its own worked examples (judges.examples).
    outside = rows_outside_examples(item_of_row, column_of_row, examples, n_items)
    if not outside.all():
        item_of_row, column_of_row = item_of_row[outside], column_of_row[outside]
        decision_of_row, draw_key_of_row = decision_of_row[outside], draw_key_of_row[outside]
        latency_of_row = latency_of_row[outside]
    counts = metrics.counts_from_rows(item_of_row, column_of_row, decision_of_row, n_items, n_judges)
    verdicts = np.array([costs.get(judge.id, (0, np.nan))[0] for judge in judges], dtype=np.int64)
    cost_sum = np.array([costs.get(judge.id, (0, np.nan))[1] for judge in judges], dtype=np.float64)
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
        latencies=None,
        rows=(item_of_row, column_of_row, decision_of_row, draw_key_of_row, latency_of_row),
        simulated_verdicts={judge_id: simulated for judge_id, (*_, simulated) in costs.items()},
        split=split,
        excluded_examples=np.array([len(items) for items in examples], dtype=np.int64),
    )
