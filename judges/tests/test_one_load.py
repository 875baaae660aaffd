"""One load where there were many: the judge page's versions, the dashboard's trends (issue 33).

Each is held equal to the computation it replaced, kept here as the twin: a
`load_calibration` per gold-set version, and a one-run `load_calibration` per run.
"""

from dataclasses import replace

import numpy as np
import pytest

from judges import metrics
from judges.calibration_data import load_calibration, load_calibrations
from judges.dashboard_trends import judge_trends_get
from judges.example_models import JudgeVersionExample
from judges.selectors import judge_version_metrics_list
from judges.tests.calibration_builders import (
    add_verdicts,
    item_queries,
    labels,
    make_judge_version,
    make_published_gold_set,
    make_run,
)
from labelling.split_models import GoldSetSplit, GoldSetSplitItem

pytestmark = pytest.mark.django_db
DECISIONS = np.array(["accept", "reject", "error"], dtype=object)


def random_history(seed: int):
    """Three versions of one gold set (one with an unsure item), three judges over a few runs each, at random."""
    rng = np.random.default_rng(seed)
    judges = [make_judge_version("alpha"), make_judge_version("alpha", number=2), make_judge_version("beta")]
    golds = []
    for number in (1, 2, 3):
        # The last version has an unsure item: its verdicts fall outside the report's items.
        unsure = [("unsure", "")] if number == 3 else []
        items = labels(int(rng.integers(3, 7)), int(rng.integers(3, 7))) + unsure
        gold = make_published_gold_set("random", items, number)
        golds.append(gold)
        for _ in range(int(rng.integers(1, 4))):
            run = make_run(gold, label=f"v{number}", repeats=2)
            for judge in judges:
                if rng.random() < 0.8:
                    for repeat in range(2):
                        decisions = [
                            None if rng.random() < 0.1 else str(DECISIONS[rng.integers(0, 3)])
                            for _ in item_queries(gold)
                        ]
                        add_verdicts(run, judge, decisions, repeat=repeat, cost=f"0.00{rng.integers(1, 9)}")
    # A worked example of alpha v1: left out of its figures on every version that holds the item.
    query = item_queries(golds[0])[1]
    JudgeVersionExample.objects.create(
        judge_version=judges[0], query=query, gold_set_version=golds[0], decision="wrong", error_class="join_fanout"
    )
    return golds, judges


def assert_same_data(ours, theirs):
    assert ours.run_ids == theirs.run_ids
    assert ours.query_ids.tolist() == theirs.query_ids.tolist()
    assert ours.is_wrong.tolist() == theirs.is_wrong.tolist()
    assert [judge.id for judge in ours.judges] == [judge.id for judge in theirs.judges]
    for name in ("rejects", "accepts", "errors"):
        assert getattr(ours.counts, name).tolist() == getattr(theirs.counts, name).tolist()
    assert ours.verdicts.tolist() == theirs.verdicts.tolist()
    np.testing.assert_allclose(ours.cost_sum, theirs.cost_sum, rtol=1e-12)
    assert ours.excluded_examples.tolist() == theirs.excluded_examples.tolist()
    assert ours.simulated_verdicts == theirs.simulated_verdicts
    for column in range(len(ours.judges)):
        assert sorted(ours.latency_of(column).tolist()) == sorted(theirs.latency_of(column).tolist())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_one_load_of_many_versions_is_each_versions_own_load(seed):
    golds, judges = random_history(seed)
    loaded = load_calibrations(gold_set_versions=golds)
    for gold in golds:
        assert_same_data(loaded[gold.pk], load_calibration(gold_set_version=gold))


def test_the_judge_page_figures_are_the_report_entries(client_for):
    golds, judges = random_history(7)
    tables = judge_version_metrics_list(judge=judges[0].judge)
    assert [table["gold_set_version"].pk for table in tables] == [gold.pk for gold in reversed(golds)]
    for table in tables:
        data = load_calibration(gold_set_version=table["gold_set_version"])
        for entry in table["entries"]:
            column = next(i for i, judge in enumerate(data.judges) if judge.id == entry["judge_version_id"])
            expected = metrics.judge_summary(
                data.counts,
                column,
                data.is_wrong,
                data.error_class,
                cost_sum=float(data.cost_sum[column]),
                verdicts=int(data.verdicts[column]),
                latencies=data.latency_of(column),
            )
            for key in ("catch_rate", "false_reject_rate", "flip_rate", "cost_per_accepted_usd", "verdicts", "errors"):
                assert entry[key] == expected[key], key


def twin_trends(data):
    """The trends as they were computed before: each run loaded alone (one load per run)."""
    points = {}
    for run_id in data.run_ids:
        selection = replace(data.selection, run_ids=(run_id,), run_labels=(), since=None, until=None)
        alone = load_calibration(gold_set_version=data.gold_set_version, selection=selection, split=data.split)
        for column, judge in enumerate(alone.judges):
            figures = metrics.rates(alone.probs[:, column], alone.is_wrong)
            points[run_id, judge.id] = (figures["catch_rate"], figures["false_reject_rate"], figures["judged_wrong"])
    return points


@pytest.mark.parametrize("seed", [4, 5])
def test_trends_from_the_loaded_rows_are_each_runs_own_report(seed):
    golds, _ = random_history(seed)
    for gold in golds:
        data = load_calibration(gold_set_version=gold)
        ours = {
            (point["run"], point["judge_version_id"]): (
                point["catch_rate"],
                point["false_reject_rate"],
                point["judged_wrong"],
            )
            for series in judge_trends_get(data=data)
            for point in series["points"]
        }
        assert ours == twin_trends(data)


def test_trends_follow_the_split_of_the_page():
    golds, _ = random_history(6)
    gold = golds[0]
    split = GoldSetSplit.objects.create(version=gold, seed=1, test_share=0.5)
    for index, query in enumerate(item_queries(gold)):
        GoldSetSplitItem.objects.create(split=split, query=query, part="test" if index % 2 else "dev")
    data = load_calibration(gold_set_version=gold, split="test")
    ours = {
        (point["run"], point["judge_version_id"]): (
            point["catch_rate"],
            point["false_reject_rate"],
            point["judged_wrong"],
        )
        for series in judge_trends_get(data=data)
        for point in series["points"]
    }
    assert ours == twin_trends(data)
