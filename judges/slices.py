"""Slices of a report: the items grouped by a metadata key's value, and the calibration data of each group.

`slice_masks` groups the items by the value their metadata holds under a key (an item whose
value is a list falls in each listed value; one without the key in `(none)`), pooling values
with fewer than `min_items` items under `other`. `calibration_subset` restricts the loaded
arrays to some items, so that every judge figure of a slice is computed by the same code as
the whole report's. The cost of a slice's verdicts is the judge's mean cost per verdict.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from judges import metrics
from judges.calibration_data import CalibrationData
from judges.gold_items import external_ids_subset, gold_items

MIN_SLICE = 30
OTHER = "other"
NONE = "(none)"


def metadata_values(data: CalibrationData, key: str) -> list[list[str]]:
    """Return, per item of the data, the values its metadata holds under `key` (as text)."""
    rows = gold_items(data.gold_set_version, data.selection.source).values_list("query_id", "query__metadata")
    by_query = {query_id: metadata for query_id, metadata in rows.iterator(chunk_size=5000)}
    return [value_texts((by_query.get(int(query_id)) or {}).get(key, None)) for query_id in data.query_ids]


def value_texts(value) -> list[str]:
    """Return the slice values of one metadata value: text as it is, other JSON as JSON, a list per element."""
    if value is None:
        return [NONE]
    if isinstance(value, list):
        return sorted({text for element in value for text in value_texts(element)}) or [NONE]
    if isinstance(value, str):
        return [value]
    return [json.dumps(value, sort_keys=True)]


def slice_masks(values: list[list[str]], min_items: int = MIN_SLICE) -> dict[str, np.ndarray]:
    """Return {value: items in it}, values sorted, those with fewer than `min_items` items pooled as `other`."""
    n = len(values)
    masks: dict[str, np.ndarray] = {}
    for index, texts in enumerate(values):
        for text in texts:
            if text not in masks:
                masks[text] = np.zeros(n, dtype=bool)
            masks[text][index] = True
    result, pooled = {}, np.zeros(n, dtype=bool)
    for text in sorted(masks):
        if int(masks[text].sum()) < min_items:
            pooled |= masks[text]
        else:
            result[text] = masks[text]
    if pooled.any():
        result[OTHER] = result.get(OTHER, np.zeros(n, dtype=bool)) | pooled
    return result


def calibration_subset(data: CalibrationData, keep: np.ndarray) -> CalibrationData:
    """Return the data restricted to the items of `keep` (judges, runs and taxonomy unchanged)."""
    keep = np.asarray(keep, dtype=bool)
    new_index = np.cumsum(keep) - 1
    item, column, decision, draw_key, latency = data.rows
    in_rows = keep[item] if len(item) else np.zeros(0, dtype=bool)
    n_judges = len(data.judges)
    verdicts = np.bincount(column[in_rows], minlength=n_judges).astype(np.int64)
    subset = dataclasses.replace(
        data,
        query_ids=data.query_ids[keep],
        external_ids=external_ids_subset(data.external_ids, keep),
        is_wrong=data.is_wrong[keep],
        error_class=data.error_class[keep],
        counts=metrics.VerdictCounts(
            rejects=data.counts.rejects[keep], accepts=data.counts.accepts[keep], errors=data.counts.errors[keep]
        ),
        verdicts=verdicts,
        cost_sum=data.cost_per_verdict * verdicts,
        latencies=None,  # from the subset's rows, when asked
        rows=(new_index[item[in_rows]], column[in_rows], decision[in_rows], draw_key[in_rows], latency[in_rows]),
        simulated_verdicts=_simulated_in(data, verdicts),
        guesses=None if data.guesses is None else data.guesses.subset(keep, new_index),
        _probs=None,
        _draws=None,
    )
    return subset


def _simulated_in(data: CalibrationData, verdicts: np.ndarray) -> dict:
    """A slice's simulated verdicts: all or none as the judge's, else in proportion."""
    result = {}
    for column, judge in enumerate(data.judges):
        total, simulated = int(data.verdicts[column]), data.simulated_verdicts.get(judge.id, 0)
        result[judge.id] = int(verdicts[column]) if simulated >= total else round(simulated * verdicts[column] / total)
    return result
