"""Informative-first labelling: the scores, the order, and the queue option that uses them."""

import numpy as np
import pytest
from django.urls import reverse

from judges.informative import (
    class_shares,
    informative_order,
    informative_scores,
    pair_disagreement,
    width_gain,
    wrong_probability,
)
from judges.informative_selectors import informative_rank
from judges.models import Verdict
from judges.tests.calibration_builders import make_judge_version
from labelling.models import GoldSet, Label, Query

NAN = np.nan


def test_disagreement_is_the_chance_one_draw_of_two_judges_differs():
    probs = np.array([[1, 0, NAN], [1, 1, 1], [0.5, 0.5, NAN], [1, NAN, NAN]])
    assert pair_disagreement(probs).tolist() == [1.0, 0.0, 0.5, 0.0]


def test_wrong_probability_is_the_judges_mean_and_zero_when_unjudged():
    assert wrong_probability(np.array([[1, 0, NAN], [NAN, NAN, NAN]])).tolist() == [0.5, 0.0]


def test_class_shares_follow_the_votes_or_spread_evenly():
    assert class_shares(np.array([[2, 0], [0, 0]])).tolist() == [[1.0, 0.0], [0.5, 0.5]]


def test_a_small_class_gains_more_from_one_more_item():
    gains = width_gain([0, 3, 30])
    assert gains[0] > gains[1] > gains[2] > 0


def test_judges_that_split_come_before_judges_that_agree_and_small_classes_break_ties():
    probs = np.array([[0, 0], [1, 0], [1, 1], [1, 1]])
    votes = np.array([[0, 0], [1, 0], [2, 0], [0, 2]])  # item 3 points at the class with no item yet
    scores = informative_scores(probs=probs, class_votes=votes, class_counts=[10, 0])
    assert informative_order(ids=[10, 11, 12, 13], scores=scores) == [11, 13, 12, 10]


def test_equal_scores_keep_id_order():
    assert informative_order(ids=[3, 1, 2], scores=[0, 0, 0]) == [1, 2, 3]


@pytest.fixture
def waiting_items():
    """Four unlabelled gold items; two judges agree on all but q2."""
    gold_set = GoldSet.objects.create(name="inf")
    queries = [
        Query.objects.create(gold_set=gold_set, external_id=f"q{i}", question=f"q{i}", sql=f"SELECT {i}")
        for i in range(4)
    ]
    a, b = make_judge_version("a", backend="anthropic"), make_judge_version("b", backend="anthropic")
    for query, (da, db) in zip(
        queries, [("accept", "accept"), ("accept", "accept"), ("reject", "accept"), ("accept", "accept")], strict=True
    ):
        Verdict.objects.create(
            judge_version=a, query=query, decision=da, error_class_guess="join_fanout" if da == "reject" else ""
        )
        Verdict.objects.create(judge_version=b, query=query, decision=db)
    return gold_set, queries


@pytest.mark.django_db
def test_the_rank_reads_the_verdicts_of_the_waiting_items(waiting_items):
    gold_set, queries = waiting_items
    ids = [q.pk for q in queries]
    assert informative_rank(gold_set=gold_set, query_ids=ids) == [ids[2], ids[0], ids[1], ids[3]]


@pytest.mark.django_db
def test_the_queue_offers_informative_first_and_keeps_the_choice(client, role_users, waiting_items):
    gold_set, queries = waiting_items
    client.force_login(role_users["labeller"])
    in_order = client.get(reverse("labelling:queue", args=[gold_set.name]))
    assert in_order["Location"].endswith(reverse("labelling:queue_item", args=[gold_set.name, queries[0].pk]))
    informative = client.get(reverse("labelling:queue", args=[gold_set.name]) + "?order=informative")
    assert informative["Location"].endswith(reverse("labelling:queue_item", args=[gold_set.name, queries[2].pk]))
    page = client.get(informative["Location"]).content.decode()
    assert "<strong>Informative first</strong>" in page
    # Labelling the top item moves on in the same order: the rest tie, so id order.
    response = client.post(
        reverse("labelling:queue_label", args=[gold_set.name, queries[2].pk]), {"decision": "correct"}
    )
    assert response["Location"].endswith(reverse("labelling:queue_item", args=[gold_set.name, queries[0].pk]))
    assert Label.objects.filter(query=queries[2]).count() == 1
