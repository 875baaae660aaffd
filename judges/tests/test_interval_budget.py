"""Catch-rate interval widths and how many more wrong items would halve them; the dashboard shows both."""

import numpy as np
import pytest
from django.urls import reverse

from judges import metrics
from judges.interval_budget import interval_budget, interval_width, items_to_halve
from judges.tests.calibration_builders import add_verdicts, make_gold_set, make_judge_version, make_run


def test_the_width_is_the_wilson_interval_of_the_metrics_module():
    low, high = metrics.wilson_interval(0.5, 6)
    assert interval_width(rate=0.5, n=6) == pytest.approx(high - low)
    assert interval_width(rate=None, n=0) == 1.0


@pytest.mark.parametrize(("rate", "n"), [(0.5, 6), (0.2, 9), (1.0, 3), (0.0, 5), (0.3, 400)])
def test_items_to_halve_is_the_first_count_at_or_under_half_the_width(rate, n):
    m = items_to_halve(rate=rate, n=n)
    half = interval_width(rate=rate, n=n) / 2
    assert interval_width(rate=rate, n=n + m) <= half < interval_width(rate=rate, n=n + m - 1)


def test_a_large_sample_needs_about_three_times_as_many_more():
    assert items_to_halve(rate=0.3, n=400) == pytest.approx(1200, rel=0.02)


def test_no_wrong_item_yet_assumes_the_widest_rate():
    assert items_to_halve(rate=None, n=0) == items_to_halve(rate=0.9, n=0)
    assert interval_width(rate=0.5, n=items_to_halve(rate=None, n=0)) <= 0.5


def test_the_budget_covers_each_class_asked_for_even_one_never_judged():
    probs = np.array([1.0, 0.0, 1.0, 0.0, np.nan])
    is_wrong = np.array([True, True, True, False, True])
    error_class = np.array(["join_fanout", "join_fanout", "wrong_measure", "", "dropped_rows"], dtype=object)
    budget = interval_budget(
        probs=probs, is_wrong=is_wrong, error_class=error_class, classes=["dropped_rows", "join_fanout"]
    )
    assert budget["overall"]["n"] == 3 and budget["overall"]["rate"] == pytest.approx(2 / 3)
    assert budget["by_class"]["join_fanout"]["n"] == 2
    assert budget["by_class"]["dropped_rows"] == {
        "rate": None,
        "n": 0,
        "width": 1.0,
        "items_to_halve": items_to_halve(rate=None, n=0),
    }


@pytest.mark.django_db
def test_the_dashboard_shows_the_ladder_and_the_interval_budget(client, role_users):
    version = make_gold_set("dash-ladder", [("wrong", "syntax"), ("wrong", "join_fanout"), ("correct", "")])
    run = make_run(version)
    add_verdicts(
        run,
        make_judge_version("rung-parse", backend="ladder", config={"rung": "parse"}),
        ["reject", "accept", "accept"],
    )
    add_verdicts(
        run, make_judge_version("rung-run", backend="ladder", config={"rung": "run"}), ["reject", "accept", "reject"]
    )
    add_verdicts(run, make_judge_version("llm"), ["reject", "reject", "accept"])
    client.force_login(role_users["ml_engineer"])
    page = client.get(reverse("judges:dashboard", args=[version.pk])).content.decode()
    assert 'id="ladder-table"' in page and 'data-rung="parse"' in page and 'data-rung="run"' in page
    assert 'data-figure="false_reject" data-value="1.0"' in page  # the run rung rejects the correct item
    assert 'id="interval-budget-table"' in page
    halve = items_to_halve(rate=1.0, n=2)
    assert f'data-halve="{halve}"' in page  # the LLM judge caught both wrong items
