"""The dashboard headline (judges/headline.py): the cheapest frontier point, and when it cannot be told apart."""

from judges.headline import dashboard_headline, wrong_items_to_separate
from judges.metrics import wilson_interval


def point(name, cost, catch, wrong=10, pareto=True):
    return {
        "members": [name],
        "rule": "single",
        "description": f"{name}: one judge (k=1)",
        "cost_per_accepted_usd": cost,
        "catch_rate": catch,
        "catch_rate_ci95": wilson_interval(catch, wrong),
        "false_reject_rate": 0.1,
        "judged_wrong": wrong,
        "pareto": pareto,
    }


def test_the_answer_is_the_cheapest_frontier_point_and_overlap_asks_for_more_wrong_items():
    headline = dashboard_headline(
        [point("b", 0.02, 0.9), point("a", 0.01, 0.7), point("c", 0.001, 0.2, pareto=False)], 0.2
    )
    assert headline["answer"]["title"] == "a" and headline["rival_title"] == "b"
    more = wrong_items_to_separate(0.7, 0.9, 10)
    assert more > 0 and f"label ~{more} more wrong items" in headline["note"]
    total = 10 + more  # at that many, the intervals no longer overlap; one fewer, they still do
    assert wilson_interval(0.7, total)[1] < wilson_interval(0.9, total)[0]
    assert wilson_interval(0.7, total - 1)[1] >= wilson_interval(0.9, total - 1)[0]


def test_separated_points_get_no_note_and_no_frontier_says_why():
    assert dashboard_headline([point("a", 0.01, 0.1, wrong=500), point("b", 0.02, 0.9, wrong=500)], 0.2)["note"] == ""
    empty = dashboard_headline([point("a", 0.01, 0.5, pareto=False)], 0.05)
    assert empty["answer"] is None and "under 5%" in empty["note"]
    assert wrong_items_to_separate(0.5, 0.5, 10) is None
