"""Split a published gold-set version into dev and test, and read the split back.

The assignment (`split_assign`) is a pure function of the items' external ids, their labels
and classes, the seed and the share: no database randomness and no row ids, so the same items
and seed give the same parts in any database. Items are stratified by label and error class
(the canonical class text, so "a;b" is a stratum of its own): within a stratum they are ordered
by a hash of (seed, external id), strata are laid end to end in name order, and a systematic
sample with a seeded offset takes the test items, so every stratum's test share is the chosen
share to within one item and the overall count is the share of the total to within one.
"""

from __future__ import annotations

import hashlib
import math

from django.db import IntegrityError, transaction
from django.db.models import F

from labelling.error_classes import error_classes_split
from labelling.models import GoldSetVersion, GoldSetVersionItem, LabelDecision
from labelling.split_models import SPLIT_ALL, SPLIT_CHOICES, GoldSetSplit, GoldSetSplitItem, SplitPart


class SplitError(ValueError):
    """A split that cannot be made or a part that cannot be read; the message says why."""


def _hash_fraction(seed: int, text: str) -> float:
    digest = hashlib.sha256(f"{seed}\x1f{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_stratum(decision: str, error_class: str) -> str:
    """Return the stratum an item is drawn in: its label, and a wrong item's classes."""
    return f"wrong:{error_class}" if decision == LabelDecision.WRONG else "correct"


def split_assign(items, *, test_share: float, seed: int) -> dict[str, str]:
    """Return {external id: "dev" | "test"} for `items`, an iterable of (external id, stratum)."""
    if not 0 < test_share < 1:
        raise SplitError(f"--test-share must be between 0 and 1 (exclusive); got {test_share}")
    ordered = sorted(items, key=lambda item: (item[1], _hash_fraction(seed, item[0]), item[0]))
    offset = _hash_fraction(seed, "\x00offset")
    parts = {}
    for position, (external_id, _) in enumerate(ordered):
        taken = math.floor((position + 1) * test_share + offset) - math.floor(position * test_share + offset)
        parts[external_id] = SplitPart.TEST.value if taken else SplitPart.DEV.value
    return parts


def split_counts(rows, parts: dict[str, str]) -> dict:
    """Count each part's items, wrong and correct ones, and wrong items per class (an item in each class it carries)."""
    counts = {part: {"items": 0, "wrong": 0, "correct": 0, "by_class": {}} for part in SplitPart.values}
    for external_id, decision, error_class in rows:
        entry = counts[parts[external_id]]
        entry["items"] += 1
        if decision == LabelDecision.WRONG:
            entry["wrong"] += 1
            for name in error_classes_split(error_class) or ["unclassified"]:
                entry["by_class"][name] = entry["by_class"].get(name, 0) + 1
        else:
            entry["correct"] += 1
    for entry in counts.values():
        entry["by_class"] = dict(sorted(entry["by_class"].items()))
    return counts


def _split_rows(version: GoldSetVersion) -> list[tuple[int, str, str, str]]:
    return list(
        GoldSetVersionItem.objects.filter(version=version, decision__in=[LabelDecision.CORRECT, LabelDecision.WRONG])
        .order_by("query_id")
        .values_list("query_id", "query__external_id", "decision", "error_class")
    )


@transaction.atomic
def goldset_split(*, version: GoldSetVersion, test_share: float, seed: int, user=None) -> GoldSetSplit:
    """Split a published version's correct and wrong items into dev and test, once.

    Raises SplitError for an unpublished version, a version already split (publish a new
    version to split again), a share outside (0, 1) or a negative seed.
    """
    if not version.is_frozen:
        raise SplitError(f"{version} is not published; publish it before splitting it")
    if seed < 0:
        raise SplitError(f"--seed must not be negative; got {seed}")
    existing = GoldSetSplit.objects.filter(version=version).first()
    if existing is not None:
        raise SplitError(
            f"{version} is already split (seed {existing.seed}, test share {existing.test_share}); "
            "a split is recorded once: publish a new version to split again"
        )
    rows = _split_rows(version)
    parts = split_assign(
        [(external_id, split_stratum(decision, error_class)) for _, external_id, decision, error_class in rows],
        test_share=test_share,
        seed=seed,
    )
    counts = split_counts([row[1:] for row in rows], parts)
    try:
        with transaction.atomic():
            split = GoldSetSplit.objects.create(
                version=version, seed=seed, test_share=test_share, counts=counts, created_by=user
            )
    except IntegrityError:
        raise SplitError(
            f"{version} was split by someone else just now; publish a new version to split again"
        ) from None
    GoldSetSplitItem.objects.bulk_create(
        [GoldSetSplitItem(split=split, query_id=query, part=parts[external_id]) for query, external_id, *_ in rows],
        batch_size=2000,
    )
    return split


def split_as_dict(split: GoldSetSplit) -> dict:
    """Return the `split_gold --format json` contract: gold set, version, seed, both parts' ids, counts."""
    pairs = split.items.order_by("query__external_id").values_list("query__external_id", "part")
    ids = {part: [] for part in SplitPart.values}
    for external_id, part in pairs:
        ids[part].append(external_id)
    return {
        "gold_set": split.version.gold_set.name,
        "version": split.version.number,
        "seed": split.seed,
        "test": ids[SplitPart.TEST],
        "dev": ids[SplitPart.DEV],
        "counts": split.counts,
    }


def version_named(gold_set: str, number: int | None) -> GoldSetVersion:
    """Return version `number` of the named gold set (its latest without one); raise SplitError if it has none."""
    versions = GoldSetVersion.objects.filter(gold_set__name=gold_set).select_related("gold_set")
    chosen = versions.filter(number=number).first() if number else versions.order_by("-number").first()
    if chosen is None:
        raise SplitError(f"gold set {gold_set!r} has no version {number or '(none published)'}")
    return chosen


def split_parts_get(version: GoldSetVersion) -> dict[int, str]:
    """Return {query id: part} of the version's split ({} when it has none)."""
    return dict(GoldSetSplitItem.objects.filter(split__version=version).values_list("query_id", "part"))


def split_part_check(version: GoldSetVersion, part: str) -> str:
    """Return `part` if the version can be read on it, else raise SplitError saying why."""
    part = (part or SPLIT_ALL).strip() or SPLIT_ALL
    if part not in SPLIT_CHOICES:
        raise SplitError(f"split must be one of {', '.join(SPLIT_CHOICES)}; got {part!r}")
    if part != SPLIT_ALL and not GoldSetSplit.objects.filter(version=version).exists():
        raise SplitError(f"{version} has no dev/test split; run split_gold on it first (or ask for --split all)")
    return part


def items_of_split(items, part: str):
    """Narrow a queryset of version items to one part of their version's split (`all`: unchanged)."""
    if part == SPLIT_ALL:
        return items
    # The item's own version's split: the same query may be split differently on another version.
    return items.filter(query__split_items__split__version=F("version"), query__split_items__part=part)


def query_test_splits(query_ids) -> set[int]:
    """Return the queries among `query_ids` that are in the test part of any version's split."""
    return set(
        GoldSetSplitItem.objects.filter(query_id__in=list(query_ids), part=SplitPart.TEST).values_list(
            "query_id", flat=True
        )
    )


def query_dev_splits(query_ids) -> set[int]:
    """Return the queries among `query_ids` that are in the dev part of some version's split."""
    return set(
        GoldSetSplitItem.objects.filter(query_id__in=list(query_ids), part=SplitPart.DEV).values_list(
            "query_id", flat=True
        )
    )
