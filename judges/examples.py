"""Few-shot examples on a judge version without contamination.

A judge version may show gold items as worked examples in its prompt. They come from the dev
part of a gold-set version's split only: an item in the test part of any split is refused, with
a message, so a held-out item never teaches the judge its own answer. And a version is never
scored on its own examples: `example_items` gives, per judge column of a report, the items to
leave out, and `judges.calibration_data.load_calibration` drops those verdicts from every
figure on every split (each judge entry's `excluded_examples` says how many items that was).
"""

from __future__ import annotations

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from judges.example_models import JudgeVersionExample
from judges.models import JudgeVersion, Verdict
from labelling.models import GoldSetVersion, GoldSetVersionItem
from labelling.split_models import GoldSetSplitItem, SplitPart

TEST_ITEM_REFUSAL = (
    "{ids} {verb} in the test split of {where}: a test item can never be an example "
    "(the judge would be scored on the answer it was shown); choose dev items"
)


@transaction.atomic
def judge_version_examples_add(
    *, judge_version: JudgeVersion, gold_set_version: GoldSetVersion, external_ids: list[str]
) -> list[JudgeVersionExample]:
    """Add dev-split items of `gold_set_version` (by external id) as worked examples of a judge version.

    Raises ValidationError, saying why, for an item not in the version, a version without a
    split, an item in the test part of any split, or a judge version that already has verdicts
    (its examples are part of its prompt: make a new version).
    """
    if Verdict.objects.filter(judge_version=judge_version).exists():
        raise ValidationError(
            f"{judge_version} already has verdicts, made without these examples; "
            "examples are part of a version's prompt: add them to a new version"
        )
    items = {
        item.query.external_id: item
        for item in GoldSetVersionItem.objects.filter(
            version=gold_set_version, query__external_id__in=external_ids
        ).select_related("query")
    }
    missing = [external_id for external_id in external_ids if external_id not in items]
    if missing:
        raise ValidationError(f"not items of {gold_set_version}: {', '.join(missing)}")
    query_ids = [items[external_id].query_id for external_id in external_ids]
    in_test = (
        GoldSetSplitItem.objects.filter(query_id__in=query_ids, part=SplitPart.TEST)
        .select_related("split__version__gold_set", "query")
        .order_by("query__external_id")
    )
    if in_test:
        ids = sorted({row.query.external_id for row in in_test})
        where = ", ".join(sorted({str(row.split.version) for row in in_test}))
        raise ValidationError(
            TEST_ITEM_REFUSAL.format(ids=", ".join(ids), verb="is" if len(ids) == 1 else "are", where=where)
        )
    dev = set(
        GoldSetSplitItem.objects.filter(
            split__version=gold_set_version, query_id__in=query_ids, part=SplitPart.DEV
        ).values_list("query_id", flat=True)
    )
    if len(dev) < len(set(query_ids)):
        raise ValidationError(
            f"{gold_set_version} has no dev/test split for these items; examples come from the dev split only "
            "(run split_gold first)"
        )
    start = (judge_version.examples.aggregate(n=Max("position"))["n"] or 0) + 1
    return [
        JudgeVersionExample.objects.get_or_create(
            judge_version=judge_version,
            query_id=items[external_id].query_id,
            defaults={
                "gold_set_version": gold_set_version,
                "decision": items[external_id].decision,
                "error_class": items[external_id].error_class,
                "position": start + offset,
            },
        )[0]
        for offset, external_id in enumerate(external_ids)
    ]


def examples_prompt_text(judge_version: JudgeVersion) -> str:
    """Return the version's worked examples as prompt text ("" without examples), read once per object."""
    cached = getattr(judge_version, "_examples_prompt_text", None)
    if cached is not None:
        return cached
    parts = []
    for example in judge_version.examples.select_related("query").order_by("position", "id"):
        classes = f' error_class="{example.error_class}"' if example.error_class else ""
        parts.append(
            f'<example label="{example.decision}"{classes}>\n'
            f"<question>\n{example.query.question}\n</question>\n"
            f'<sql dialect="{example.query.dialect}">\n{example.query.sql}\n</sql>\n</example>'
        )
    text = ("<worked_examples>\n" + "\n".join(parts) + "\n</worked_examples>") if parts else ""
    judge_version._examples_prompt_text = text
    return text


def example_items(judge_ids: list[int], query_ids: np.ndarray, pairs=None) -> list[np.ndarray]:
    """Return, per judge version (in `judge_ids` order), the indices into sorted `query_ids` of its examples.

    `pairs` are (judge version id, query id) already read by `example_pairs` (one read for
    many gold-set versions); without them they are read here.
    """
    found = [[] for _ in judge_ids]
    if not judge_ids or not len(query_ids):
        return [np.zeros(0, dtype=np.int64) for _ in judge_ids]
    column = {judge_id: index for index, judge_id in enumerate(judge_ids)}
    for judge_id, query_id in example_pairs(judge_ids) if pairs is None else pairs:
        if judge_id not in column:
            continue
        position = int(np.searchsorted(query_ids, query_id))
        if position < len(query_ids) and query_ids[position] == query_id:
            found[column[judge_id]].append(position)
    return [np.array(sorted(items), dtype=np.int64) for items in found]


def example_pairs(judge_ids) -> list[tuple[int, int]]:
    """Return (judge version id, query id) of every worked example of the judge versions."""
    if not len(judge_ids):
        return []
    return list(
        JudgeVersionExample.objects.filter(judge_version_id__in=[int(i) for i in judge_ids]).values_list(
            "judge_version_id", "query_id"
        )
    )


def rows_outside_examples(item_of_row: np.ndarray, column_of_row: np.ndarray, examples, n_items: int) -> np.ndarray:
    """Return True for the verdict rows that are not on an example of their own judge column."""
    keys = [column * n_items + items for column, items in enumerate(examples) if len(items)]
    if not keys:
        return np.ones(len(item_of_row), dtype=bool)
    return ~np.isin(np.asarray(column_of_row, dtype=np.int64) * n_items + item_of_row, np.concatenate(keys))
