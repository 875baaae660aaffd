"""Factories for labelling tests. Queries go through query_create so fingerprints are real."""

import itertools

from labelling.models import GoldSet
from labelling.services import goldset_get_or_create, query_create

_counter = itertools.count(1)


def gold_set(name="gs", overlap_share=0.0) -> GoldSet:
    return goldset_get_or_create(name=name, overlap_share=overlap_share)


def query(gold_set=None, external_id=None, sql="SELECT 1", question="How many?", **kwargs):
    n = next(_counter)
    return query_create(
        question=question,
        sql=sql,
        external_id=external_id or f"item-{n}",
        gold_set=gold_set,
        **kwargs,
    )
