"""Property tests: on random verdict tables, each joint figure equals its definition's twin.

No database: the tables become `CalibrationData` directly, as `load_calibration` would
build them, and the report is `report_from_data`. Every figure is held equal to a twin
computed from the raw table in plain Python (`judges.tests.twins`), never to the function
the report itself calls, so a definition that drifts from its words — a union scored as if
the judges were independent, a ladder that multiplies probabilities, a live rate with its
own interval — fails here.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judges import metrics
from judges.calibration_data import CalibrationData, JudgeColumn
from judges.class_guesses import GuessTable
from judges.draws import draws_from_decisions
from judges.ensembles import ensemble_metrics, miss_patterns, pair_overlap
from judges.ladder import ladder_table
from judges.report import report_from_data
from judges.row_columns import items_of_rows
from judges.run_selection import RunSelection
from judges.tests import twins
from judges.verdict_rows import DRAW_RUN_SHIFT
from labelling.models import GoldSet, GoldSetVersion
from labelling.taxonomy import TaxonomyIndex
from triage import estimates

CODES = {"accept": metrics.ACCEPT, "reject": metrics.REJECT, "error": metrics.ERROR, None: metrics.MISSING}
# Answered verdicts twice as likely as errors or gaps.
DECISION = st.one_of(st.sampled_from(["accept", "reject"]), st.sampled_from(["accept", "reject", "error", None]))
EXAMPLES = settings(max_examples=80, deadline=None)


@st.composite
def verdict_tables(draw, min_judges=1, max_judges=4, max_repeats=4):
    """Draw (table: items × judges × decisions in draw order, is_wrong)."""
    n_items = draw(st.integers(1, 12))
    n_judges = draw(st.integers(min_judges, max_judges))
    repeats = draw(st.lists(st.integers(1, max_repeats), min_size=n_judges, max_size=n_judges))
    table = [[[draw(DECISION) for _ in range(repeats[j])] for j in range(n_judges)] for _ in range(n_items)]
    is_wrong = draw(st.lists(st.booleans(), min_size=n_items, max_size=n_items))
    return table, is_wrong


def as_array(table) -> np.ndarray:
    """Return the table as an items × judges × repeats array of decision codes."""
    depth = max(len(cell) for row in table for cell in row)
    padded = [[[CODES[d] for d in cell] + [metrics.MISSING] * (depth - len(cell)) for cell in row] for row in table]
    return np.array(padded, dtype=np.int64)


def calibration_data(table, is_wrong, costs=None) -> CalibrationData:
    """Build the report's input from a table, as `load_calibration` would (one run, id 1)."""
    decisions = as_array(table)
    item, judge, repeat = np.nonzero(decisions != metrics.MISSING)
    code = decisions[item, judge, repeat]
    n_items, n_judges = decisions.shape[:2]
    version = GoldSetVersion(gold_set=GoldSet(name="random"), number=1)
    verdicts = np.bincount(judge, minlength=n_judges)
    costs = [0.01] * n_judges if costs is None else costs
    return CalibrationData(
        gold_set_version=version,
        run_ids=[1],
        selection=RunSelection(),
        query_ids=np.arange(1, n_items + 1),
        external_ids=[f"q{i}" for i in range(n_items)],
        is_wrong=np.array(is_wrong, dtype=bool),
        error_class=np.array(["join_fanout" if w else "" for w in is_wrong], dtype=object),
        judges=[JudgeColumn(j + 1, f"judge-{j}", 1, "replay", "", "", False, f"judge-{j}") for j in range(n_judges)],
        counts=metrics.counts_from_rows(item, judge, code, n_items, n_judges),
        verdicts=verdicts,
        cost_sum=np.array([c * v for c, v in zip(costs, verdicts, strict=True)], dtype=float),
        latencies=[np.full(int(v), 100.0) for v in verdicts],
        rows=(item, judge, code, (1 << 16) + repeat, np.full(len(item), 100.0)),
        # What the report would read from the database: the default taxonomy, no class guesses.
        taxonomy=TaxonomyIndex("docket", 1, [{"id": 1, "class": "join_fanout", "category": "", "retired": False}]),
        guesses=GuessTable(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [], np.zeros(0, dtype=np.int64)),
        run_labels={1: ""},
    )


def close(actual, expected):
    if expected is None:
        return actual is None
    return actual is not None and actual == pytest.approx(expected, abs=1e-12)


@EXAMPLES
@given(verdict_tables(min_judges=2))
def test_each_pairs_union_is_the_two_member_any_ensemble_on_the_pairs_items(drawn):
    table, is_wrong = drawn
    data = calibration_data(table, is_wrong)
    report = report_from_data(data)
    n_judges = len(table[0])
    pairs = [(a, b) for a in range(n_judges) for b in range(a + 1, n_judges)]
    assert len(report["pairs"]) == len(pairs)
    for (a, b), reported in zip(pairs, report["pairs"], strict=True):
        twin = twins.pair(table, is_wrong, a, b)
        for key, value in twin.items():
            assert close(reported[key], value), key
        # The Done-when of issue 26, literally: the any ensemble of those two on the pair's items.
        paired = np.array([bool(twins.aligned(table, i, [a, b])) for i in range(len(table))])
        ensemble = ensemble_metrics(data.draws, data.is_wrong, [a, b], "any", items=paired)
        assert reported["union_catch_rate"] == ensemble["catch_rate"]
        assert reported["union_false_reject_rate"] == ensemble["false_reject_rate"]


@EXAMPLES
@given(verdict_tables(min_judges=2))
def test_both_missed_is_the_pairs_items_times_one_minus_its_union(drawn):
    table, is_wrong = drawn
    pair = pair_overlap(draws_from_decisions(as_array(table)), np.array(is_wrong), 0, 1)
    wrong_paired = sum(1 for i in range(len(table)) if is_wrong[i] and twins.aligned(table, i, [0, 1]))
    if pair["union_catch_rate"] is None:
        assert pair["both_missed"] == 0
    else:
        assert pair["both_missed"] == pytest.approx(wrong_paired * (1 - pair["union_catch_rate"]))
    assert pair["missed_a"] >= pair["both_missed"] - 1e-12 <= pair["missed_b"]
    assert pair["miss_jaccard"] is None or 0 <= pair["miss_jaccard"] <= 1 + 1e-12


@EXAMPLES
@given(verdict_tables(max_judges=5))
def test_the_ladder_is_the_any_ensemble_of_the_rungs_so_far(drawn):
    table, is_wrong = drawn
    rungs = list(range(len(table[0])))
    names = ["parse", "plan", "run", "non_empty", "invariants"][: len(rungs)]
    rows = ladder_table(rungs=names, draws=draws_from_decisions(as_array(table)), columns=rungs, is_wrong=is_wrong)
    below = 0.0
    for row, twin in zip(rows, twins.ladder(table, is_wrong, rungs), strict=True):
        assert close(row["catch"], twin["catch"]) and close(row["false_reject"], twin["false_reject"])
        assert close(row["marginal_catch"], None if twin["catch"] is None else twin["catch"] - below)
        below = twin["catch"] if twin["catch"] is not None else below


@EXAMPLES
@given(verdict_tables(max_judges=3))
def test_upset_patterns_count_each_wrong_item_once_over_aligned_draws(drawn):
    table, is_wrong = drawn
    found = miss_patterns(draws_from_decisions(as_array(table)), np.array(is_wrong))
    twin = twins.miss_patterns(table, is_wrong, len(table[0]))
    assert set(found) == set(twin)
    for pattern, size in twin.items():
        assert found[pattern] == pytest.approx(size)


@EXAMPLES
@given(verdict_tables(max_repeats=1))
def test_triages_live_rates_with_equal_weights_are_the_reports_rates(drawn):
    # One verdict per item, as a live judge has: the drift monitor's rate and interval on
    # these labels, every weight 1, are the report's catch and false-reject figures.
    table, is_wrong = drawn
    report = report_from_data(calibration_data(table, is_wrong))
    for column, entry in enumerate(report["judges"]):
        twin = twins.judge_rates(table, is_wrong, column)
        answered = [i for i in range(len(table)) if twins.answered(table, i, column)]
        live = estimates.live_rates(
            rejected=np.array([table[i][column][0] == "reject" for i in answered], dtype=bool),
            wrong=np.array([is_wrong[i] for i in answered], dtype=bool),
            weights=np.ones(len(answered)),
        )
        for rate, interval in ((live.catch, "catch_rate"), (live.false_reject, "false_reject_rate")):
            assert close(entry[interval], twin[interval])
            assert close(rate.estimate, twin[interval])
            expected = twin[f"{interval}_ci95"]
            assert (rate.low, rate.high) == ((None, None) if expected is None else pytest.approx(expected))
            assert entry[f"{interval}_ci95"] == (None if expected is None else pytest.approx(expected))


@EXAMPLES
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.sampled_from([1.0, 1.25, 4.0, 10.0, 20.0])), min_size=1))
def test_weighted_live_rates_follow_their_twin(labels):
    rejected, wrong, weights = (np.array(column) for column in zip(*labels, strict=True))
    live = estimates.live_rates(rejected=rejected, wrong=wrong, weights=weights)
    for rate, stratum in ((live.catch, wrong), (live.false_reject, ~wrong)):
        p, interval = twins.weighted_rate(rejected[stratum].astype(float).tolist(), weights[stratum].tolist())
        assert close(rate.estimate, p)
        assert (rate.low, rate.high) == ((None, None) if interval is None else pytest.approx(interval))


@EXAMPLES
@given(
    st.lists(st.integers(1, 40), min_size=1, max_size=6, unique=True),
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), max_size=40),
)
def test_runs_of_judges_are_the_selected_runs_each_judge_has_a_verdict_in(run_ids, verdicts):
    """Twin: for each judge, every selected run (in selection order) with at least one of its verdicts."""
    rows = [(run_ids[run % len(run_ids)], judge) for run, judge in verdicts]
    expected = [[run for run in run_ids if (run, judge) in rows] for judge in range(4)]
    assert data_with_run_rows(run_ids, rows, n_judges=4).runs_of_judges() == expected


def test_runs_of_judges_with_run_ids_far_apart_follow_the_same_twin():
    """Run ids further apart than the cell table spans are numbered by a search: same answer."""
    rows = [(5_000_000, 0), (3, 2), (7, 2), (5_000_000, 2), (3, 0)]
    data = data_with_run_rows([7, 5_000_000, 3], rows, n_judges=3)
    assert data.runs_of_judges() == [[5_000_000, 3], [], [7, 5_000_000, 3]]


def data_with_run_rows(run_ids: list[int], rows: list[tuple[int, int]], n_judges: int) -> CalibrationData:
    """Return a `calibration_data` of `n_judges` whose selected runs are `run_ids` and verdict rows (run, judge)."""
    data = calibration_data([[["accept"]] * n_judges], [False])
    run_of_row = np.array([run for run, _ in rows], dtype=np.int64)
    column = np.array([judge for _, judge in rows], dtype=np.int64)
    empty = np.zeros(len(rows), dtype=np.int64)
    # A draw key is the run shifted, plus the repeat (2 here: any repeat names the same run).
    draw_key = (run_of_row << DRAW_RUN_SHIFT) + 2
    data.run_ids, data.rows = run_ids, (empty, column, empty, draw_key, np.zeros(len(rows)))
    return data


@EXAMPLES
@given(
    st.lists(st.integers(1, 60), max_size=20, unique=True),
    st.lists(st.integers(0, 70), max_size=60),
    st.sampled_from([0, 2**40]),  # ids near each other (the lookup table) or far apart (the search)
)
def test_items_of_rows_find_each_rows_item_as_a_dictionary_does(items, queries, offset):
    """Twin: a row's item is the position of its query among the sorted items; a query not there is outside."""
    query_ids = np.array(sorted(item + (offset if item > 30 else 0) for item in items), dtype=np.int64)
    query_of_row = np.array([query + (offset if query > 30 else 0) for query in queries], dtype=np.int64)
    position = {query: index for index, query in enumerate(query_ids.tolist())}
    expected_inside = [query in position for query in query_of_row.tolist()]
    expected_items = [position[query] for query in query_of_row.tolist() if query in position]
    found, inside = items_of_rows(query_ids, query_of_row.copy())
    assert inside.tolist() == expected_inside
    assert found[inside].tolist() == expected_items
