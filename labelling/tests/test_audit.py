"""The gold-set audit: each finding class is found on an item that has it and not on a clean one."""

import json

import pytest
from django.core.management import call_command

from labelling import audit_checks as checks
from labelling.audit import audit_summary, goldset_audit, goldset_audit_run
from labelling.models import GoldSetAudit
from labelling.services import goldset_get_or_create, goldset_publish, label_create, query_create

CLEAN = {
    "id": "clean",
    "question": "How many orders are there of each status?",
    "sql": "SELECT o.status, COUNT(*) AS orders FROM orders o GROUP BY o.status",
    "label": "correct",
}
# One item per finding class that has exactly that problem.
TRIGGERS = {
    checks.REFERENCE_FAILS: {
        "question": "How many orders are there?",
        "sql": "SELECT COUNT(*) FROM orders o WHERE o.no_such_column = 1",
        "label": "correct",
    },
    checks.LIMIT_WITHOUT_ORDER: {
        "question": "Show five order ids.",
        "sql": "SELECT o.order_id FROM orders o LIMIT 5",
        "label": "correct",
    },
    checks.LIMIT_SPLITS_TIE: {
        "question": "Which status comes first alphabetically?",
        "sql": "SELECT o.status FROM orders o ORDER BY o.status LIMIT 1",
        "label": "correct",
    },
    checks.NONDETERMINISTIC: {
        "question": "How many orders are there of each status, placed before now?",
        "sql": "SELECT o.status, COUNT(*) FROM orders o WHERE o.order_date < CURRENT_DATE GROUP BY o.status",
        "label": "correct",
    },
    checks.SHAPE_UNPINNED: {
        "question": "How many orders were completed?",
        "sql": "SELECT o.status, COUNT(*) AS orders FROM orders o WHERE o.status = 'completed' GROUP BY o.status",
        "label": "correct",
    },
    checks.EMPTY_REFERENCE: {
        "question": "List the ids of orders that were lost.",
        "sql": "SELECT o.order_id FROM orders o WHERE o.status = 'lost'",
        "label": "correct",
    },
    checks.IDENTICAL_RESULTS_DISAGREE: {
        "question": "How many customers are there?",
        "sql": "SELECT COUNT(c.email) FROM customers c",
        "label": "wrong",
        "error_class": "missing_filter",
        "reference_sql": "SELECT COUNT(*) FROM customers c",
    },
}


def publish(warehouse, items, name="audited"):
    gold_set = goldset_get_or_create(name=name)
    for item in items:
        query = query_create(
            question=item["question"],
            sql=item["sql"],
            external_id=item["id"],
            warehouse=warehouse,
            gold_set=gold_set,
            reference_sql=item.get("reference_sql", ""),
        )
        label_create(query=query, labeller=None, decision=item["label"], error_class=item.get("error_class", ""))
    return goldset_publish(gold_set=gold_set)


@pytest.fixture
def audited(demo_sqlite_warehouse):
    items = [CLEAN] + [{**item, "id": cls} for cls, item in TRIGGERS.items()]
    return goldset_audit(version=publish(demo_sqlite_warehouse, items))


def classes_of(report, item):
    return {finding["class"] for finding in report["findings"] if finding["item"] == item}


@pytest.mark.parametrize("finding_class", checks.FINDING_CLASSES)
def test_each_finding_class_is_found_on_its_item_and_never_on_the_clean_one(audited, finding_class):
    assert finding_class in classes_of(audited, finding_class)
    assert classes_of(audited, "clean") == set()
    assert audited["counts"][finding_class] >= 1


def test_a_finding_carries_its_message_severity_and_evidence(audited):
    tie = next(f for f in audited["findings"] if f["class"] == checks.LIMIT_SPLITS_TIE)
    assert tie["severity"] == "error" and "cuts a tie" in tie["message"]
    assert tie["evidence"]["rows_at_tie"] == [["cancelled"], ["cancelled"]]
    assert tie["evidence"]["ordering_key"] == ["cancelled"]
    shape = next(f for f in audited["findings"] if f["class"] == checks.SHAPE_UNPINNED)
    assert shape["severity"] == "check" and shape["evidence"]["columns"] == ["status", "orders"]


def test_a_total_order_at_the_cut_is_not_a_tie(demo_sqlite_warehouse):
    item = {"id": "ordered", "question": "Which order came first?", "label": "correct"}
    item["sql"] = "SELECT o.order_id, o.status FROM orders o ORDER BY o.status, o.order_id LIMIT 1"
    report = goldset_audit(version=publish(demo_sqlite_warehouse, [item]))
    assert report["findings"] == []


def test_a_tie_on_an_ordering_key_outside_the_select_list_is_found(demo_sqlite_warehouse):
    item = {"id": "hidden-key", "question": "Show one order id.", "label": "correct"}
    item["sql"] = "SELECT o.order_id FROM orders o ORDER BY o.status LIMIT 1"
    report = goldset_audit(version=publish(demo_sqlite_warehouse, [item]))
    tie = next(f for f in report["findings"] if f["class"] == checks.LIMIT_SPLITS_TIE)
    assert tie["evidence"]["columns"] == ["order_id"] and tie["evidence"]["ordering_key"] == ["cancelled"]


def test_two_items_with_the_same_results_but_different_labels_are_one_finding(demo_sqlite_warehouse):
    wrong = {**CLEAN, "id": "twin", "label": "wrong", "error_class": "missing_filter", "reference_sql": CLEAN["sql"]}
    report = goldset_audit(version=publish(demo_sqlite_warehouse, [CLEAN, wrong]))
    pair = [f for f in report["findings"] if "items" in f["evidence"]]
    assert len(pair) == 1 and pair[0]["evidence"]["items"] == {"clean": "correct", "twin": "wrong missing_filter"}


def test_the_question_heuristics():
    assert checks.named_column_count("List the shipments (carrier and ship date) of orders") == 2
    assert checks.named_column_count("How much was paid (completed orders)?") is None
    assert checks.NOT_A_RANKING.sub("", "days with at least 6 orders") == "days with  6 orders"


def test_the_audit_is_stored_and_the_command_prints_it_as_json_and_table(demo_sqlite_warehouse, capsys):
    version = publish(demo_sqlite_warehouse, [CLEAN, {**TRIGGERS[checks.EMPTY_REFERENCE], "id": "empty"}])
    call_command("audit_gold", "--gold-set", "audited", "--format", "json")
    printed = json.loads(capsys.readouterr().out)
    assert printed["version"] == version.number and printed["counts"][checks.EMPTY_REFERENCE] == 1
    assert printed["findings"][0]["item"] == "empty"
    call_command("audit_gold", "--gold-set", "audited", "--version", "1", "--format", "table")
    table = capsys.readouterr().out
    assert "empty_reference" in table and "1 warning" in table
    assert GoldSetAudit.objects.filter(version=version).count() == 2


def test_the_summary_counts_severities_and_classes(demo_sqlite_warehouse):
    audit = goldset_audit_run(version=publish(demo_sqlite_warehouse, [CLEAN]))
    assert audit_summary(findings=audit.findings) == "no findings"
    findings = [{"severity": "error", "class": "a"}, {"severity": "check", "class": "b"}]
    assert audit_summary(findings=findings) == "1 error, 1 check (a 1, b 1)"
