"""Mutation-seeded wrong items on the demo gold set: truth by execution, proposals through the queue."""

import json
from collections import Counter

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from labelling.compare import compare_result_sets
from labelling.models import GoldSetVersionItem, LabelDecision, Query, QueryOrigin
from labelling.mutations import mutations_seed
from labelling.services import goldset_publish
from probes.execution import run_readonly

CONTRACT_KEYS = {"source_id", "sql", "reference_sql", "error_class", "operator"}


def result_of(warehouse, sql):
    result = run_readonly(warehouse=warehouse, sql=sql, row_cap=5001, timeout_s=10)
    assert result.allowed and result.executed and not result.error and not result.truncated, result.error
    return result.columns, result.rows


def test_the_demo_set_yields_three_kept_variants_per_class_for_six_classes_each_proven_different(demo_gold_version):
    outcome = mutations_seed(gold_set=demo_gold_version.gold_set, per_item=1, propose=False)
    per_class = Counter(entry["error_class"] for entry in outcome.kept)
    assert sum(1 for n in per_class.values() if n >= 3) >= 6, per_class
    assert outcome.discarded_equivalent > 0 and outcome.discarded_failing >= 0
    warehouse = demo_gold_version.items.first().query.warehouse
    for entry in outcome.kept:
        variant, reference = result_of(warehouse, entry["sql"]), result_of(warehouse, entry["reference_sql"])
        assert not compare_result_sets(*variant, *reference).match, entry


def test_the_command_prints_the_json_contract_and_a_dry_run_stores_nothing(demo_gold_version, capsys):
    before = Query.objects.count()
    call_command("seed_mutations", "--gold-set", "demo", "--per-item", "1", "--classes", "dropped_rows", "--dry-run")
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"kept", "discarded_equivalent", "discarded_failing"}
    assert printed["kept"] and all(set(entry) == CONTRACT_KEYS for entry in printed["kept"])
    assert {entry["operator"] for entry in printed["kept"]} == {"left_to_inner"}
    assert Query.objects.count() == before


def test_proposals_flow_through_the_queue_to_a_published_version(demo_gold_version, client_for):
    gold_set = demo_gold_version.gold_set
    outcome = mutations_seed(gold_set=gold_set, per_item=1, classes=["dropped_rows"])
    proposed = Query.objects.filter(gold_set=gold_set, origin=QueryOrigin.MUTATED).order_by("id")
    assert proposed.count() == len(outcome.kept) >= 3
    assert mutations_seed(gold_set=gold_set, per_item=1, classes=["dropped_rows"]).kept  # seeding again adds nothing
    assert proposed.count() == len(outcome.kept)
    first, second = proposed[0], proposed[1]
    assert (
        first.label_count == 0 and first.reference_sql and first.metadata["mutation"]["error_class"] == "dropped_rows"
    )

    client = client_for("labeller")
    page = client.get(f"/labelling/queue/demo/item/{first.pk}/").content.decode()
    assert "Proposed wrong item" in page and "Confirm: wrong · dropped_rows" in page
    assert first.metadata["mutation"]["diff"]["summary"] in page
    client.post(f"/labelling/queue/demo/item/{first.pk}/label/", {"decision": "wrong", "error_class": "dropped_rows"})
    client.post(f"/labelling/queue/demo/item/{second.pk}/label/", {"decision": "correct"})  # rejected

    version = goldset_publish(gold_set=gold_set)
    items = {item.query_id: item for item in GoldSetVersionItem.objects.filter(version=version)}
    assert (items[first.pk].decision, items[first.pk].error_class) == (LabelDecision.WRONG, "dropped_rows")
    assert items[second.pk].decision == LabelDecision.CORRECT
    assert proposed[2].pk not in items  # not labelled yet: still a proposal


def test_the_command_refuses_a_per_item_below_one(demo_gold_version):
    with pytest.raises(CommandError):
        call_command("seed_mutations", "--gold-set", "demo", "--per-item", "0")
