"""compare_judges: B − A with paired bootstrap intervals and exact McNemar, checked against code written here."""

import io
import json
import math

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from judges.models import Verdict
from judges.paired import mcnemar_exact
from judges.sample_size import items_for_width, items_to_detect
from judges.tests.calibration_builders import make_judge_version, make_run
from labelling.models import GoldSet, GoldSetVersion, GoldSetVersionItem, Query

pytestmark = pytest.mark.django_db


def build(n_items=60, seed=1, repeats_b=1):
    """A version whose items are written in reverse id order (row ids disagree with external ids).

    Return (external ids sorted, is_wrong, A's rejects, B's rejects) per item, A and B one verdict
    each (B `repeats_b` verdicts when asked, all alike).
    """
    rng = np.random.default_rng(seed)
    gold_set = GoldSet.objects.create(name="cmp")
    version = GoldSetVersion.objects.create(gold_set=gold_set, number=1)
    ids = [f"item-{i:02d}" for i in range(n_items)]
    is_wrong = rng.random(n_items) < 0.4
    a = np.where(is_wrong, rng.random(n_items) < 0.6, rng.random(n_items) < 0.1)
    b = np.where(is_wrong, rng.random(n_items) < 0.8, rng.random(n_items) < 0.15)
    queries = {}
    for index in reversed(range(n_items)):
        query = Query.objects.create(gold_set=gold_set, external_id=ids[index], question="q", sql=f"SELECT {index}")
        queries[index] = query
        GoldSetVersionItem.objects.create(
            version=version,
            query=query,
            decision="wrong" if is_wrong[index] else "correct",
            error_class="join_fanout" if is_wrong[index] else "",
        )
    run = make_run(version, repeats=max(1, repeats_b))
    judge_a, judge_b = make_judge_version("judge-a"), make_judge_version("judge-b")
    run.judge_versions.add(judge_a, judge_b)
    verdicts = []
    for index, query in queries.items():
        verdicts.append(
            Verdict(judge_version=judge_a, query=query, run=run, decision="reject" if a[index] else "accept")
        )
        for repeat in range(repeats_b):
            decision = "reject" if b[index] else "accept"
            verdicts.append(Verdict(judge_version=judge_b, query=query, run=run, repeat=repeat, decision=decision))
    Verdict.objects.bulk_create(verdicts)
    return ids, is_wrong, a, b


def compare(*args):
    out = io.StringIO()
    call_command(
        "compare_judges", "--gold-set", "cmp", "--a", "judge-a", "--b", "judge-b", "--format", "json", *args, stdout=out
    )
    return json.loads(out.getvalue())


def independent_bootstrap(is_wrong, a, b, seed):
    """Redraw the paired bootstrap from the contract's words, one resample at a time."""
    n = len(is_wrong)
    indices = np.random.default_rng(seed).integers(0, n, size=(2000, n))
    catch, false_reject = [], []
    for row in indices:
        wrong_items = [i for i in row if is_wrong[i]]
        correct_items = [i for i in row if not is_wrong[i]]
        if wrong_items:
            catch.append(sum(int(b[i]) - int(a[i]) for i in wrong_items) / len(wrong_items))
        if correct_items:
            false_reject.append(sum(int(b[i]) - int(a[i]) for i in correct_items) / len(correct_items))
    return list(np.percentile(catch, [2.5, 97.5])), list(np.percentile(false_reject, [2.5, 97.5]))


def exact_binomial_two_sided(k, n):
    """The exact two-sided binomial p-value at 1/2 (symmetric: twice the smaller tail, at most 1)."""
    tail = sum(math.comb(n, i) for i in range(0, min(k, n - k) + 1)) / 2**n
    return min(1.0, 2 * tail)


def test_every_difference_interval_and_p_value_matches_independent_code():
    ids, is_wrong, a, b = build()
    result = compare("--seed", "42")
    assert list(result) == [
        "a",
        "b",
        "split",
        "items",
        "catch_rate_diff",
        "false_reject_rate_diff",
        "mcnemar",
        "bootstrap",
        "differing_items",
        "summary",
    ]
    assert result["split"] == "all" and result["bootstrap"] == {"seed": 42, "resamples": 2000}
    assert result["items"] == {"total": 60, "wrong": int(is_wrong.sum()), "correct": int((~is_wrong).sum())}
    diff = b.astype(int) - a.astype(int)
    assert result["catch_rate_diff"]["estimate"] == pytest.approx(diff[is_wrong].mean())
    assert result["false_reject_rate_diff"]["estimate"] == pytest.approx(diff[~is_wrong].mean())
    catch_ci, false_reject_ci = independent_bootstrap(is_wrong, a, b, 42)
    assert result["catch_rate_diff"]["ci95"] == pytest.approx(catch_ci, abs=1e-12)
    assert result["false_reject_rate_diff"]["ci95"] == pytest.approx(false_reject_ci, abs=1e-12)
    b_only_wrong = int((is_wrong & b & ~a).sum())
    a_only_wrong = int((is_wrong & a & ~b).sum())
    b_only_correct = int((~is_wrong & ~b & a).sum())
    a_only_correct = int((~is_wrong & ~a & b).sum())
    wrong, correct = result["mcnemar"]["wrong"], result["mcnemar"]["correct"]
    assert (wrong["b_only"], wrong["a_only"]) == (b_only_wrong, a_only_wrong)
    assert (correct["b_only"], correct["a_only"]) == (b_only_correct, a_only_correct)
    assert wrong["p_value"] == pytest.approx(exact_binomial_two_sided(b_only_wrong, b_only_wrong + a_only_wrong))
    assert correct["p_value"] == pytest.approx(
        exact_binomial_two_sided(b_only_correct, b_only_correct + a_only_correct)
    )
    assert result["differing_items"] == [ids[i] for i in range(60) if a[i] != b[i]]


def test_another_seed_draws_other_resamples_and_the_seed_is_reported():
    build()
    first, second = compare("--seed", "1"), compare("--seed", "2")
    assert second["bootstrap"]["seed"] == 2
    assert first["catch_rate_diff"]["estimate"] == second["catch_rate_diff"]["estimate"]
    assert first["catch_rate_diff"]["ci95"] != second["catch_rate_diff"]["ci95"]


def test_repeats_leave_mcnemar_out_and_the_summary_says_why():
    build(repeats_b=2)
    result = compare()
    assert result["mcnemar"] is None
    assert "no McNemar test" in result["summary"]


def test_the_summary_says_which_judge_is_better_or_how_many_items_would_tell():
    build(n_items=200, seed=3)
    result = compare()
    catch = result["catch_rate_diff"]
    if catch["ci95"][0] > 0:
        assert result["summary"].startswith(f"B catches more wrong items: {catch['estimate']:+.2f}")
    else:
        assert "would detect a difference of 0.05 with 80% power" in result["summary"]


def test_no_difference_detectable_names_the_items_needed():
    build(n_items=30, seed=5)
    result = compare()
    false_reject = result["false_reject_rate_diff"]
    assert false_reject["ci95"][0] <= 0 <= false_reject["ci95"][1]
    assert "no false-reject rate difference detectable on" in result["summary"]


def test_a_split_the_version_lacks_and_an_unknown_judge_are_refused():
    build()
    with pytest.raises(CommandError, match="no dev/test split"):
        compare("--split", "test")
    with pytest.raises(CommandError, match="has no verdicts"):
        call_command("compare_judges", "--gold-set", "cmp", "--a", "judge-a", "--b", "nobody")


def test_the_table_prints_the_summary():
    build()
    out = io.StringIO()
    call_command("compare_judges", "--gold-set", "cmp", "--a", "judge-a", "--b", "judge-b", stdout=out)
    assert "catch rate B - A" in out.getvalue() and "McNemar on wrong items" in out.getvalue()


def test_mcnemar_without_discordant_pairs_is_one():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(7, 0) == pytest.approx(exact_binomial_two_sided(7, 7))


def test_the_planner_sizes_match_their_formulas():
    # Wilson: the fewest n with width at most 0.1 at p = 0.5; the normal-approximation answer is about 385.
    n = items_for_width(0.5, 0.1)
    assert 370 <= n <= 400
    # Independent rates 0.5 ± 0.025: (1.96 + 0.8416)² · (2 · 0.2494) / 0.05² ≈ 1566.
    assert items_to_detect(0.05) == math.ceil((1.959964 + 0.841621) ** 2 * 2 * 0.475 * 0.525 / 0.0025)
