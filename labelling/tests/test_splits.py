"""split_gold: a stratified, seeded dev/test split recorded once on a published version."""

import io
import json
from collections import Counter

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError

from judges.tests.calibration_builders import (
    add_verdicts,
    make_gold_set,
    make_judge_version,
    make_published_gold_set,
    make_run,
)
from labelling.goldset_io import goldset_export_records
from labelling.models import GoldSet, GoldSetVersion, GoldSetVersionItem, Query
from labelling.split_models import GoldSetSplit
from labelling.splits import split_assign, split_stratum

pytestmark = pytest.mark.django_db

LABELS = [("wrong", "join_fanout")] * 10 + [("wrong", "missing_filter")] * 6 + [("correct", "")] * 24


def published(name="sp", labels=LABELS, number=1) -> GoldSetVersion:
    return make_published_gold_set(name, labels, number=number)


def split_json(*args, name="sp"):
    out = io.StringIO()
    call_command("split_gold", "--gold-set", name, "--format", "json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_the_json_names_both_parts_and_is_stratified_by_label_and_class():
    published()
    result = split_json("--test-share", "0.5", "--seed", "7")
    assert list(result) == ["gold_set", "version", "seed", "test", "dev", "counts"]
    assert (result["gold_set"], result["version"], result["seed"]) == ("sp", 1, 7)
    assert len(result["test"]) + len(result["dev"]) == 40 and not set(result["test"]) & set(result["dev"])
    assert result["counts"]["test"]["by_class"] == {"join_fanout": 5, "missing_filter": 3}
    assert result["counts"]["test"]["correct"] == 12 and result["counts"]["dev"]["correct"] == 12
    assert result["counts"]["test"]["items"] == len(result["test"]) == 20


def test_every_stratum_gets_its_share_to_within_one_item():
    items = [(f"id-{i}", f"wrong:c{i % 7}" if i % 3 else "correct") for i in range(301)]
    parts = split_assign(items, test_share=0.3, seed=11)
    strata = Counter(stratum for _, stratum in items)
    test = Counter(stratum for external_id, stratum in items if parts[external_id] == "test")
    for stratum, size in strata.items():
        assert abs(test[stratum] - 0.3 * size) <= 1
    assert abs(sum(test.values()) - 0.3 * 301) <= 1


def test_the_same_items_and_seed_give_the_same_split_whatever_the_order_or_row_ids():
    items = [(f"x{i}", split_stratum("wrong" if i % 4 == 0 else "correct", "other")) for i in range(50)]
    first = split_assign(items, test_share=0.5, seed=3)
    assert split_assign(list(reversed(items)), test_share=0.5, seed=3) == first
    assert split_assign(items, test_share=0.5, seed=4) != first
    # Two gold sets holding the same items, written in opposite orders (other row ids), split alike.
    published("forward")
    backward_set = GoldSet.objects.create(name="backward")
    backward = GoldSetVersion.objects.create(gold_set=backward_set, number=1)
    for index in reversed(range(len(LABELS))):
        decision, error_class = LABELS[index]
        query = Query.objects.create(gold_set=backward_set, external_id=f"q{index:03d}", question="q", sql="SELECT 1")
        GoldSetVersionItem.objects.create(version=backward, query=query, decision=decision, error_class=error_class)
    GoldSetVersion.objects.filter(pk=backward.pk).update(is_frozen=True)
    forward_split = split_json("--seed", "9", name="forward")
    backward_split = split_json("--seed", "9", name="backward")
    assert forward_split["test"] == backward_split["test"] and forward_split["dev"] == backward_split["dev"]
    expected = split_assign(
        [(f"q{i:03d}", split_stratum(d, c)) for i, (d, c) in enumerate(LABELS)], test_share=0.5, seed=9
    )
    assert forward_split["test"] == sorted(e for e, part in expected.items() if part == "test")


def test_a_split_version_cannot_be_split_again():
    published()
    split_json("--seed", "1")
    with pytest.raises(CommandError, match="already split .*publish a new version"):
        split_json("--seed", "2")
    version = GoldSetVersion.objects.get(gold_set__name="sp")
    with pytest.raises(IntegrityError):
        GoldSetSplit.objects.create(version=version, seed=3, test_share=0.5)


def test_an_unpublished_version_and_a_bad_share_are_refused():
    make_gold_set("draft", LABELS)
    with pytest.raises(CommandError, match="not published"):
        split_json("--seed", "1", name="draft")
    published()
    with pytest.raises(CommandError, match="between 0 and 1"):
        split_json("--seed", "1", "--test-share", "1.0")
    assert not GoldSetSplit.objects.exists()


def test_the_export_carries_each_items_part():
    version = published()
    result = split_json("--seed", "5")
    records = list(goldset_export_records(version=version))
    assert {r["id"] for r in records if r["split"] == "test"} == set(result["test"])
    assert {r["id"] for r in records if r["split"] == "dev"} == set(result["dev"])


def report(*args):
    out = io.StringIO()
    call_command("judge_report", "--gold-set", "sp", "--format", "json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_judge_report_reads_one_part_and_says_which():
    version = published()
    run = make_run(version)
    # Rejects every wrong item whose number is even, accepts the rest.
    decisions = ["reject" if d == "wrong" and i % 2 == 0 else "accept" for i, (d, _) in enumerate(LABELS)]
    add_verdicts(run, make_judge_version("j"), decisions)
    assert report()["split"] == "all"
    with pytest.raises(CommandError, match="no dev/test split"):
        report("--split", "test")
    result = split_json("--seed", "5")
    for part in ("dev", "test"):
        figures = report("--split", part)
        assert figures["split"] == part
        ids = set(result[part])
        assert figures["items"]["total"] == len(ids)
        judge = figures["judges"][0]
        wrong = [i for i, (d, _) in enumerate(LABELS) if d == "wrong" and f"q{i:03d}" in ids]
        assert judge["catch_rate"] == pytest.approx(sum(1 for i in wrong if i % 2 == 0) / len(wrong))
    assert report("--split", "all")["items"]["total"] == 40
