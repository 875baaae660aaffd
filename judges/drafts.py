"""A judge version from the edit page: saved with its note and worked examples, or tried on one item unsaved.

Both go through the one save path, `judges.services.judge_version_create` (so a draft is
checked exactly as saving checks it: config, keys, base URLs, the simulator binding) and
`judges.examples.judge_version_examples_add` (dev items only). Saving commits. Trying runs the
saved-looking draft through the real backend (`get_backend` → `judge_safely`, against the
simulator for a simulated judge) on one gold item inside a transaction that is then rolled
back: no JudgeVersion, example, verdict or probe row outlives it. The vendor call happens inside
that transaction, so on PostgreSQL it holds the judge's version-numbering lock for the call's
length (one call, bounded by the backend's timeout); a fault is an `error` verdict, never a reject.
"""

from __future__ import annotations

import json
from collections import defaultdict

from django.core.exceptions import ValidationError
from django.db import transaction

from judges import services
from judges.backends import get_backend, judge_safely
from judges.examples import judge_version_examples_add
from judges.models import Backend, Judge, JudgeVersion, Verdict
from judges.selectors import verdict_trace_get
from judges.vendor_access import redact_secrets
from labelling.models import GoldSetVersion, GoldSetVersionItem
from labelling.split_models import GoldSetSplitItem, SplitPart

TRY_TEST_ITEM_REFUSAL = (
    "{item} is in the test split of {version}: trying a draft on a held-out item tunes the judge on its own "
    "exam; choose a dev item"
)


def example_values_parse(values) -> list[tuple[int, str]]:
    """Read "<gold-set version id>:<external id>" values; raise ValidationError naming a malformed one."""
    parsed = []
    for value in values:
        version_id, _, external_id = str(value).partition(":")
        if not version_id.isdigit() or not external_id:
            raise ValidationError(f"{value!r} names no gold item (expected <gold-set version id>:<item id>)")
        parsed.append((int(version_id), external_id))
    return parsed


def _examples_add(version: JudgeVersion, examples: list[tuple[int, str]]) -> None:
    by_version: dict[int, list[str]] = defaultdict(list)
    for version_id, external_id in examples:
        if external_id not in by_version[version_id]:
            by_version[version_id].append(external_id)
    gold_versions = GoldSetVersion.objects.select_related("gold_set").in_bulk(list(by_version))
    for version_id, external_ids in by_version.items():
        if version_id not in gold_versions:
            raise ValidationError(f"no gold-set version has id {version_id}")
        judge_version_examples_add(
            judge_version=version, gold_set_version=gold_versions[version_id], external_ids=external_ids
        )


@transaction.atomic
def judge_version_save(*, judge: Judge, user, fields: dict, examples: list[tuple[int, str]]) -> JudgeVersion:
    """Save a new version of `judge` with its worked examples, all or nothing (ValidationError says why)."""
    version = services.judge_version_create(judge=judge, user=user, **fields)
    _examples_add(version, examples)
    return version


def gold_item_for_try(item: tuple[int, str]) -> GoldSetVersionItem:
    """Return the gold item a draft may be tried on: an item of that version, never in a test split."""
    version_id, external_id = item
    found = (
        GoldSetVersionItem.objects.filter(version_id=version_id, query__external_id=external_id)
        .select_related("query__warehouse", "version__gold_set")
        .first()
    )
    if found is None:
        raise ValidationError(f"{external_id} is not an item of gold-set version {version_id}")
    in_test = GoldSetSplitItem.objects.filter(query_id=found.query_id, part=SplitPart.TEST).select_related(
        "split__version__gold_set"
    )
    if held_out := in_test.first():
        raise ValidationError(TRY_TEST_ITEM_REFUSAL.format(item=external_id, version=held_out.split.version))
    return found


def judge_draft_try(*, judge: Judge, user, fields: dict, examples: list[tuple[int, str]], item) -> dict:
    """Run the draft version on one gold item; return its verdict (unsaved) and trace. Nothing is stored."""
    if fields.get("backend") == Backend.REPLAY:
        raise ValidationError("a replay judge holds verdicts imported from elsewhere: it cannot be tried on an item")
    gold_item = gold_item_for_try(item)
    with transaction.atomic():
        version = services.judge_version_create(judge=judge, user=user, **fields)
        _examples_add(version, examples)
        query = gold_item.query
        result = judge_safely(get_backend(version), query)
        verdict = Verdict(judge_version=version, query=query, run=None, repeat=0, **result.verdict_fields())
        prefix = redact_secrets(result.request_prefix) if result.request_prefix else None
        trace = verdict_trace_get(verdict=verdict, prefix_body=prefix)
        transaction.set_rollback(True)
    return {
        "verdict": verdict,
        "item": gold_item,
        "trace": trace,
        "request_json": json.dumps(trace["request"], indent=2, ensure_ascii=False) if trace["request"] else "",
        "response_json": json.dumps(trace["response"], indent=2, ensure_ascii=False) if trace["response"] else "",
    }
