"""A gold-set version's items as arrays: the rows of every table of the calibration report.

`load_gold_items` reads one version's correct/wrong items (of a source and a split) in one
grouped query, with their external ids read only when a figure names an item
(`ExternalIds`); `load_gold_items_of_versions` reads many versions' items, ids included, in
one query (the judge page).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.db.models import Aggregate, Case, TextField, Value, When

from judges.class_sets import remember_text_codes
from judges.run_selection import SOURCE_BOTH, gold_items_of_source
from labelling.models import UNCLASSIFIED, GoldSetVersion, GoldSetVersionItem, LabelDecision
from labelling.split_models import SPLIT_ALL
from labelling.splits import items_of_split


class ExternalIds(Sequence):
    """The external ids of a version's items (sorted query ids), read in one query when first used."""

    def __init__(self, gold_set_version_id: int, query_ids: np.ndarray):
        self.gold_set_version_id = gold_set_version_id
        self.query_ids = query_ids
        self._ids: list[str] | None = None

    def _loaded(self) -> list[str]:
        if self._ids is None:
            found = dict(
                GoldSetVersionItem.objects.filter(version_id=self.gold_set_version_id).values_list(
                    "query_id", "query__external_id"
                )
            )
            self._ids = [found[query_id] for query_id in self.query_ids.tolist()]
        return self._ids

    def __len__(self) -> int:
        return len(self.query_ids)

    def __getitem__(self, index):
        return self._loaded()[index]

    def __iter__(self):
        return iter(self._loaded())

    def __array__(self, dtype=None, copy=None):
        return np.array(self._loaded(), dtype=dtype or object)

    def subset(self, keep: np.ndarray) -> ExternalIds:
        """Return the ids of the kept items, still unread if these are."""
        if self._ids is not None:
            kept = ExternalIds(self.gold_set_version_id, self.query_ids[keep])
            kept._ids = [ext for ext, held in zip(self._ids, keep, strict=True) if held]
            return kept
        return ExternalIds(self.gold_set_version_id, self.query_ids[keep])


def external_ids_subset(external_ids: Sequence[str], keep: np.ndarray) -> Sequence[str]:
    """Return the external ids of the kept items (a list stays a list)."""
    if isinstance(external_ids, ExternalIds):
        return external_ids.subset(keep)
    return [ext for ext, held in zip(external_ids, keep, strict=True) if held]


def gold_items(gold_set_version: GoldSetVersion, source: str = SOURCE_BOTH, split: str = SPLIT_ALL):
    """Return the version's correct/wrong items of `source` and `split`: the rows of every table of the report."""
    items = GoldSetVersionItem.objects.filter(
        version=gold_set_version, decision__in=[LabelDecision.CORRECT, LabelDecision.WRONG]
    )
    return items_of_split(gold_items_of_source(items, source), split)


class SpaceJoined(Aggregate):
    """A group's values as one space-separated text (PostgreSQL STRING_AGG, SQLite GROUP_CONCAT)."""

    function = "STRING_AGG"
    template = "%(function)s(CAST(%(expressions)s AS TEXT), ' ')"
    output_field = TextField()

    def as_sqlite(self, compiler, connection, **extra_context):
        return super().as_sql(compiler, connection, function="GROUP_CONCAT", **extra_context)


def load_gold_items(gold_set_version: GoldSetVersion, source: str = SOURCE_BOTH, split: str = SPLIT_ALL):
    """Return (query ids sorted, external ids, is_wrong, error class) of correct/wrong items of `source` and `split`.

    A wrong item without an error class is `unclassified` (the product's one word for it).
    The database groups the items by what the report reads of them (wrong or not, and a wrong
    item's class) and sends each group's query ids as one text: a handful of rows instead of
    one per item, which psycopg would turn into Python objects one by one (0.75 s → 0.2 s at
    333,000 items; issue 33). The texts are parsed by numpy and the items sorted by query id.
    """
    groups = list(
        gold_items(gold_set_version, source, split)
        .order_by()
        .annotate(
            wrong=Case(When(decision=LabelDecision.WRONG, then=Value(True)), default=Value(False)),
            wrong_class=Case(When(decision=LabelDecision.WRONG, then="error_class"), default=Value("")),
        )
        .values_list("wrong", "wrong_class")
        .annotate(query_ids=SpaceJoined("query_id"))
    )
    ids_of_groups = [np.fromstring(ids, dtype=np.int64, sep=" ") for *_, ids in groups]
    query_ids = np.concatenate(ids_of_groups) if groups else np.zeros(0, dtype=np.int64)
    by_query = np.argsort(query_ids, kind="stable")
    query_ids = query_ids[by_query]
    sizes = [len(ids) for ids in ids_of_groups]
    is_wrong = np.repeat(np.array([bool(wrong) for wrong, *_ in groups], dtype=bool), sizes)[by_query]
    texts = [(wrong_class or UNCLASSIFIED) if wrong else "" for wrong, wrong_class, _ in groups]
    distinct = sorted(set(texts))
    codes = np.repeat(np.array([distinct.index(text) for text in texts], dtype=np.int64), sizes)[by_query]
    error_class = np.array(distinct, dtype=object)[codes]
    # The per-class figures would otherwise compare every item's text again to find these codes.
    remember_text_codes(error_class, distinct, codes)
    # Read when a figure names an item: the report itself never does, and the join cost
    # more than the rest of the items' query at a hundred thousand verdicts.
    return query_ids, ExternalIds(gold_set_version.pk, query_ids), is_wrong, error_class


def gold_item_arrays(rows) -> tuple:
    """Turn (query id, external id, decision, error class) rows, by query id, into the item arrays."""
    query_ids, external_ids, is_wrong, error_class = [], [], [], []
    for query_id, external_id, decision, error in rows:
        wrong = decision == LabelDecision.WRONG
        query_ids.append(query_id)
        external_ids.append(external_id)
        is_wrong.append(wrong)
        error_class.append((error or UNCLASSIFIED) if wrong else "")
    return (
        np.array(query_ids, dtype=np.int64),
        external_ids,
        np.array(is_wrong, dtype=bool),
        np.array(error_class, dtype=object),
    )


def load_gold_items_of_versions(version_ids: list[int]) -> dict[int, tuple]:
    """Return {version id: `load_gold_items` of it} for many versions (every item, both sources), in one query."""
    rows = (
        GoldSetVersionItem.objects.filter(
            version_id__in=version_ids, decision__in=[LabelDecision.CORRECT, LabelDecision.WRONG]
        )
        .order_by("version_id", "query_id")
        .values_list("version_id", "query_id", "query__external_id", "decision", "error_class")
    )
    grouped = {version_id: [] for version_id in version_ids}
    for version_id, *row in rows:
        grouped[version_id].append(row)
    return {version_id: gold_item_arrays(found) for version_id, found in grouped.items()}
