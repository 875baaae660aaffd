"""A version's items as arrays: external ids read only when a figure names an item, and the same ids then."""

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judges.calibration_data import load_calibration
from judges.class_sets import _codes_of_array, text_codes
from judges.gold_items import ExternalIds, external_ids_subset, load_gold_items
from judges.tests.calibration_builders import labels, make_gold_set
from labelling.models import GoldSetVersionItem

pytestmark = pytest.mark.django_db


def eager_external_ids(version):
    """The twin: every correct/wrong item's external id, by query id, read through the ORM."""
    items = GoldSetVersionItem.objects.filter(version=version, decision__in=["correct", "wrong"])
    return list(items.order_by("query_id").values_list("query__external_id", flat=True))


def test_external_ids_are_read_once_when_first_named_and_match_the_items():
    version = make_gold_set("lazy-ids", labels(4, 3))
    query_ids, external_ids, is_wrong, _ = load_gold_items(version)
    assert isinstance(external_ids, ExternalIds) and len(external_ids) == 7
    with CaptureQueriesContext(connection) as reads:
        assert len(external_ids) == 7  # its length needs no query
    assert len(reads) == 0
    expected = eager_external_ids(version)
    with CaptureQueriesContext(connection) as reads:
        named = [external_ids[i] for i in range(7)]
        assert list(np.asarray(external_ids)) == named == list(external_ids) == expected
    assert len(reads) == 1  # one query, however many ids are asked for
    assert is_wrong.sum() == 4  # labels(4, 3): four wrong, three correct


def test_a_subset_keeps_the_kept_items_ids_whether_or_not_they_were_read():
    version = make_gold_set("lazy-subset", labels(3, 3))
    _, external_ids, is_wrong, _ = load_gold_items(version)
    expected = [ext for ext, wrong in zip(eager_external_ids(version), is_wrong, strict=True) if wrong]
    assert list(external_ids_subset(external_ids, is_wrong)) == expected  # unread, then read
    list(external_ids)
    assert list(external_ids_subset(external_ids, is_wrong)) == expected  # read already
    assert external_ids_subset(["a", "b", "c"], np.array([True, False, True])) == ["a", "c"]


def test_the_calibration_data_names_items_as_the_database_does():
    version = make_gold_set("lazy-data", labels(2, 2))
    data = load_calibration(gold_set_version=version)
    assert list(data.external_ids) == eager_external_ids(version)


def test_text_codes_are_kept_while_their_array_lives_and_dropped_after():
    error_class = np.array(["b;a", "", "a", "b;a"], dtype=object)
    distinct, codes = text_codes(error_class)
    assert distinct == ["", "a", "b;a"] and codes.tolist() == [2, 0, 1, 2]
    assert text_codes(error_class)[1] is codes  # the second figure reads the first's answer
    key = id(error_class)
    del error_class
    assert key not in _codes_of_array
    # A list (no identity to keep) is computed each time, with the same answer.
    assert text_codes(["b;a", "", "a", "b;a"])[1].tolist() == [2, 0, 1, 2]


def items_row_by_row(version):
    """The twin: every correct/wrong item read as a row through the ORM, by query id."""
    rows = GoldSetVersionItem.objects.filter(version=version, decision__in=["correct", "wrong"]).order_by("query_id")
    query_ids, is_wrong, error_class = [], [], []
    for query_id, decision, error in rows.values_list("query_id", "decision", "error_class"):
        query_ids.append(query_id)
        is_wrong.append(decision == "wrong")
        error_class.append((error or "unclassified") if decision == "wrong" else "")
    return query_ids, is_wrong, error_class


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_grouped_items_equal_the_items_read_row_by_row_on_random_labels(seed):
    rng = np.random.default_rng(seed)
    texts = ["join_fanout", "missing_filter;join_fanout", "unclassified", "wrong_aggregate"]
    decisions = rng.choice(["correct", "wrong", "wrong", "unsure"], size=int(rng.integers(1, 40))).tolist()
    # A wrong item carries a class, any other none (the table's check constraint).
    drawn = [(decision, str(rng.choice(texts)) if decision == "wrong" else "") for decision in decisions]
    version = make_gold_set(f"grouped-{seed}", drawn)
    query_ids, _, is_wrong, error_class = load_gold_items(version)
    expected_ids, expected_wrong, expected_class = items_row_by_row(version)
    assert query_ids.tolist() == expected_ids
    assert is_wrong.tolist() == expected_wrong
    assert error_class.tolist() == expected_class
    # The codes the loader remembered are those text_codes computes from the texts themselves.
    distinct, codes = text_codes(error_class)
    fresh_distinct, fresh_codes = text_codes(error_class.tolist())
    assert distinct == fresh_distinct and codes.tolist() == fresh_codes.tolist()


def test_a_version_without_correct_or_wrong_items_loads_as_empty_arrays():
    version = make_gold_set("grouped-empty", [("unsure", "")])
    query_ids, external_ids, is_wrong, error_class = load_gold_items(version)
    assert len(query_ids) == len(external_ids) == len(is_wrong) == len(error_class) == 0
    assert query_ids.dtype == np.int64 and is_wrong.dtype == bool
