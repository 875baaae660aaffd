import pytest

from labelling.models import QuerySource
from labelling.queue_selectors import queue_item_get_following, queue_item_get_next
from labelling.services import goldset_set_overlap, label_create, label_undo, overlap_key_draw, query_create
from labelling.tests import factories

pytestmark = pytest.mark.django_db


def test_the_queue_gives_items_in_order_and_never_one_i_labelled(role_users):
    gold_set = factories.gold_set()
    first, second = factories.query(gold_set=gold_set), factories.query(gold_set=gold_set)
    me = role_users["labeller"]
    assert queue_item_get_next(user=me, gold_set=gold_set) == first
    label = label_create(query=first, labeller=me, decision="correct")
    assert queue_item_get_next(user=me, gold_set=gold_set) == second
    label_undo(label=label)  # even a retracted label means I have seen it
    label_create(query=second, labeller=me, decision="correct")
    assert queue_item_get_next(user=me, gold_set=gold_set) is None


def test_an_item_labelled_once_goes_to_nobody_else_unless_it_is_in_the_overlap(role_users):
    gold_set = factories.gold_set(overlap_share=0.0)
    query = factories.query(gold_set=gold_set)
    label_create(query=query, labeller=role_users["labeller"], decision="correct")
    assert queue_item_get_next(user=role_users["admin"], gold_set=gold_set) is None
    goldset_set_overlap(gold_set=gold_set, overlap_share=1.0)
    assert queue_item_get_next(user=role_users["admin"], gold_set=gold_set) == query
    label_create(query=query, labeller=role_users["admin"], decision="correct")
    assert queue_item_get_next(user=role_users["analyst"], gold_set=gold_set) is None  # two labels are enough


def test_the_overlap_share_picks_a_stable_fraction_of_items():
    keys = [overlap_key_draw(external_id=f"item-{i}") for i in range(4000)]
    assert keys == [overlap_key_draw(external_id=f"item-{i}") for i in range(4000)]
    share = sum(k < 0.2 for k in keys) / len(keys)
    assert 0.17 < share < 0.23


def test_the_overlapped_items_are_the_same_whatever_the_creation_order(db):
    one, two = factories.gold_set(name="one", overlap_share=0.3), factories.gold_set(name="two", overlap_share=0.3)
    ids = [f"x{i}" for i in range(50)]
    for i in ids:
        factories.query(gold_set=one, external_id=i)
    for i in reversed(ids):
        factories.query(gold_set=two, external_id=i)
    picked = {
        gs.name: set(gs.queries.filter(wants_second_label=True).values_list("external_id", flat=True))
        for gs in (one, two)
    }
    assert picked["one"] == picked["two"] and 0 < len(picked["one"]) < 50


def test_audit_samples_come_first_and_need_one_label(role_users):
    gold_set = factories.gold_set()
    factories.query(gold_set=gold_set)
    audit = query_create(question="live", sql="SELECT 2", external_id="live-1", source=QuerySource.AUDIT)
    assert queue_item_get_next(user=role_users["labeller"], gold_set=gold_set) == audit
    assert queue_item_get_next(user=role_users["labeller"], gold_set=None) == audit
    label_create(query=audit, labeller=role_users["admin"], decision="correct")
    assert queue_item_get_next(user=role_users["labeller"], gold_set=None) is None


def test_next_on_an_unlabelled_item_skips_to_the_following_one_and_wraps(role_users):
    gold_set = factories.gold_set()
    first, second = factories.query(gold_set=gold_set), factories.query(gold_set=gold_set)
    me = role_users["labeller"]
    assert queue_item_get_following(user=me, gold_set=gold_set, query=first) == second
    assert queue_item_get_following(user=me, gold_set=gold_set, query=second) == first


def test_the_queue_walks_past_many_items_i_labelled_that_still_want_a_second_label(role_users):
    gold_set = factories.gold_set(overlap_share=1.0)
    items = [factories.query(gold_set=gold_set) for _ in range(80)]
    me = role_users["labeller"]
    for query in items[:70]:
        label_create(query=query, labeller=me, decision="correct")
    assert queue_item_get_next(user=me, gold_set=gold_set) == items[70]
    assert queue_item_get_next(user=role_users["admin"], gold_set=gold_set) == items[0]
