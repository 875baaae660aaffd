"""A gold-set version's items as arrays: the rows of every table of the calibration report.

`load_gold_items` reads one version's correct/wrong items (of a source and a split) in one
streamed query, with their external ids read only when a figure names an item
(`ExternalIds`); `load_gold_items_of_versions` reads many versions' items, ids included, in
one query (the judge page).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from judges.run_selection import SOURCE_BOTH, gold_items_of_source
from judges.verdict_rows import streaming_cursor
from labelling.models import UNCLASSIFIED, GoldSetVersion, GoldSetVersionItem, LabelDecision
from labelling.split_models import SPLIT_ALL
from labelling.splits import items_of_split

GOLD_ITEMS_CHUNK = 20_000


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


def load_gold_items(gold_set_version: GoldSetVersion, source: str = SOURCE_BOTH, split: str = SPLIT_ALL):
    """Return (query ids sorted, external ids, is_wrong, error class) of correct/wrong items of `source` and `split`.

    A wrong item without an error class is `unclassified` (the product's one word for it).
    """
    rows = (
        gold_items(gold_set_version, source, split)
        .order_by("query_id")
        .values_list("query_id", "decision", "error_class")
    )
    # The ORM's SQL, read chunk by chunk without a model row per item: hundreds of thousands
    # of items never sit in memory as row tuples, and cost half of what the ORM's rows do.
    sql, params = rows.query.sql_with_params()
    parts = []
    with streaming_cursor() as cursor:
        cursor.execute(sql, params)
        while chunk := cursor.fetchmany(GOLD_ITEMS_CHUNK):
            parts.append(gold_item_arrays([(query_id, "", decision, error) for query_id, decision, error in chunk]))
    query_ids = np.concatenate([part[0] for part in parts]) if parts else np.zeros(0, dtype=np.int64)
    is_wrong = np.concatenate([part[2] for part in parts]) if parts else np.zeros(0, dtype=bool)
    error_class = np.concatenate([part[3] for part in parts]) if parts else np.zeros(0, dtype=object)
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
