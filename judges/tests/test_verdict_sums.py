"""A run's recorded verdict sums equal the sums of its verdicts, and never go stale.

Twins on random data: the sums `verdict_sums` returns (recorded for some runs, summed from
the verdicts for the rest) against one aggregate over every verdict. The triggers are
checked on whichever database runs the suite (SQLite and PostgreSQL in CI), through every
kind of write: insert, update, delete, and a live verdict that belongs to no run.
"""

import json
import random
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from judges.calibration_data import fetch_verdict_costs, fetch_verdict_costs_by_version, priced
from judges.chunks import run_finish_if_complete
from judges.models import RunStatus, RunVerdictSums, Verdict
from judges.tests.calibration_builders import item_queries, labels, make_gold_set, make_judge_version, make_run
from judges.verdict_sums import record_verdict_sums, summed_from_verdicts, verdict_sums

pytestmark = pytest.mark.django_db


def random_runs(rng: random.Random, versions, judges, runs=4):
    """Runs with random decisions, costs (some unmeasured) and simulated flags."""
    made = []
    for index in range(runs):
        version = rng.choice(versions)
        run = make_run(version, label=f"run{index}")
        queries = item_queries(version)
        for judge in rng.sample(judges, rng.randint(1, len(judges))):
            Verdict.objects.bulk_create(
                Verdict(
                    judge_version=judge,
                    query=query,
                    run=run,
                    repeat=repeat,
                    decision=rng.choice(["accept", "reject", "error"]),
                    cost_usd=None if rng.random() < 0.2 else Decimal(rng.randint(0, 10**6)) / 10**8,
                    simulated=rng.random() < 0.3,
                )
                for query in rng.sample(queries, rng.randint(0, len(queries)))
                for repeat in range(rng.randint(1, 3))
            )
        made.append(run)
    return made


def scanned(run_ids, *group):
    return dict(summed_from_verdicts(Verdict.objects.filter(run_id__in=run_ids), *group))


def assert_sums_equal(got: dict, want: dict):
    assert got.keys() == want.keys()
    for key, (n, costed, cost, simulated) in want.items():
        got_n, got_costed, got_cost, got_simulated = got[key]
        assert (got_n, got_costed, got_simulated) == (n, costed, simulated)
        # SQLite sums decimals as floats: a sum of per-run sums may differ in the last digits.
        assert float(got_cost) == pytest.approx(float(cost), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_recorded_and_summed_runs_add_up_to_one_aggregate_over_every_verdict(seed):
    rng = random.Random(seed)
    versions = [make_gold_set(f"set{seed}", labels(4, 6)), make_gold_set(f"other{seed}", labels(3, 3))]
    judges = [make_judge_version(f"judge{i}") for i in range(3)]
    runs = random_runs(rng, versions, judges, runs=rng.randint(2, 5))
    run_ids = [run.pk for run in runs]
    record_verdict_sums(rng.sample(run_ids, rng.randint(0, len(run_ids))))

    assert_sums_equal(verdict_sums(run_ids), scanned(run_ids, "judge_version_id"))
    by_version = scanned(run_ids, "run__gold_set_version_id", "judge_version_id")
    assert_sums_equal(verdict_sums(run_ids, by_gold_set_version=True), by_version)
    costs = fetch_verdict_costs(run_ids)
    want = {key: priced(raw) for (key,), raw in scanned(run_ids, "judge_version_id").items()}
    assert costs.keys() == want.keys()
    for key, (n, total, costed, simulated) in want.items():
        assert costs[key][::2] == (n, costed)
        assert costs[key][3] == simulated
        assert costs[key][1] == pytest.approx(total, rel=1e-12, nan_ok=True)
    assert fetch_verdict_costs_by_version(run_ids).keys() == by_version.keys()


@pytest.fixture
def recorded():
    """One run of two judges whose sums are recorded, and a second run's, untouched."""
    version = make_gold_set("sums", labels(2, 3))
    judges = [make_judge_version("a"), make_judge_version("b")]
    runs = random_runs(random.Random(7), [version], judges, runs=1) + [make_run(version, label="other")]
    queries = item_queries(version)
    Verdict.objects.create(judge_version=judges[0], query=queries[0], run=runs[1], decision="accept")
    Verdict.objects.create(judge_version=judges[1], query=queries[0], run=runs[0], repeat=9, decision="accept")
    record_verdict_sums([run.pk for run in runs])
    assert set(RunVerdictSums.objects.values_list("run_id", flat=True)) == {runs[0].pk, runs[1].pk}
    return runs, judges, queries


def recorded_runs():
    return set(RunVerdictSums.objects.values_list("run_id", flat=True))


def test_inserting_a_verdict_into_a_run_deletes_only_that_runs_sums(recorded):
    (run, other), judges, queries = recorded
    Verdict.objects.create(judge_version=judges[0], query=queries[-1], run=run, repeat=5, decision="reject")
    assert recorded_runs() == {other.pk}
    assert_sums_equal(verdict_sums([run.pk, other.pk]), scanned([run.pk, other.pk], "judge_version_id"))


def test_updating_a_verdict_deletes_its_runs_sums(recorded):
    (run, other), _, _ = recorded
    Verdict.objects.filter(run=run).update(cost_usd=Decimal("1.5"))
    assert recorded_runs() == {other.pk}
    assert_sums_equal(verdict_sums([run.pk]), scanned([run.pk], "judge_version_id"))


def test_moving_a_verdict_between_runs_deletes_both_runs_sums(recorded):
    (run, other), _, _ = recorded
    Verdict.objects.filter(run=run, repeat=9).update(run=other)
    assert recorded_runs() == set()


def test_deleting_a_verdict_deletes_its_runs_sums(recorded):
    (run, other), _, _ = recorded
    Verdict.objects.filter(run=other).delete()
    assert recorded_runs() == {run.pk}
    assert verdict_sums([other.pk]) == {}


def test_a_live_verdict_leaves_every_runs_sums(recorded):
    (run, other), judges, queries = recorded
    Verdict.objects.create(judge_version=judges[1], query=queries[1], run=None, decision="reject")
    assert recorded_runs() == {run.pk, other.pk}


def test_a_run_records_its_sums_as_it_completes():
    version = make_gold_set("completes", labels(2, 2))
    run = make_run(version, status=RunStatus.RUNNING)
    judge = make_judge_version("j")
    for query in item_queries(version):
        Verdict.objects.create(judge_version=judge, query=query, run=run, decision="accept", cost_usd=Decimal("0.02"))
    assert recorded_runs() == set()
    run_finish_if_complete(run_id=run.pk)  # no chunk is left
    sums = RunVerdictSums.objects.get(run=run)
    assert (sums.verdicts, sums.costed, sums.cost_usd, sums.simulated) == (4, 4, Decimal("0.08"), 0)


def test_an_import_records_its_runs_sums_and_a_second_import_into_the_run_replaces_them(tmp_path):
    make_gold_set("imported", labels(2, 2))

    def import_lines(judge, costs):
        path = tmp_path / f"{judge}.jsonl"
        lines = [
            {"query_id": f"q{i:03d}", "judge": judge, "run": "batch", "decision": "accept", "cost_usd": cost}
            for i, cost in enumerate(costs)
        ]
        path.write_text("\n".join(json.dumps({k: v for k, v in line.items() if v is not None}) for line in lines))
        call_command("import_verdicts", str(path), "--gold-set", "imported", stdout=StringIO())

    import_lines("first", [0.5, None, 0.25, 0.25])
    import_lines("second", [0.125] * 4)
    run_ids = list(RunVerdictSums.objects.values_list("run_id", flat=True).distinct())
    assert len(run_ids) == 1
    recorded_sums = dict(RunVerdictSums.objects.values_list("judge_version__judge__name", "costed"))
    assert recorded_sums == {"first": 3, "second": 4}
    assert_sums_equal(verdict_sums(run_ids), scanned(run_ids, "judge_version_id"))
