"""The demo gold set's labels are true: executing every pair against the demo warehouse proves them.

A correct item runs and returns rows; a wrong item returns something other than its
reference SQL (order-insensitive, numbers rounded to 2 decimals); an `unknown_object` item
fails with an unknown table or column. The same truths hold on SQLite and PostgreSQL, and
each correct or reference query returns the same rows on both.
"""

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from labelling.models import ErrorClass
from probes.demo_warehouse import build_demo_warehouse, comparable_rows, connect_demo_warehouse
from tests.test_demo_warehouse import demo_postgres_dsn

GOLD_FILE = Path(__file__).resolve().parents[1] / "labelling" / "data" / "demo_gold.jsonl"
ITEMS = [json.loads(line) for line in GOLD_FILE.read_text().splitlines() if line.strip()]
WRONG = [item for item in ITEMS if item["label"] == "wrong"]
DEMO_ERROR_CLASSES = {
    "unknown_object",
    "join_fanout",
    "misread_intent",
    "aggregation_grain",
    "missing_filter",
    "dropped_rows",
    "wrong_measure",
}
# What each engine says about a table or column that does not exist.
UNKNOWN_OBJECT_ERRORS = ("no such table", "no such column", "does not exist")


class Failed:
    """The error a statement raised, kept as a result so one bad item does not hide the others."""

    def __init__(self, error: Exception):
        self.message = f"{type(error).__name__}: {error}".strip()

    def __repr__(self):
        return f"Failed({self.message[:200]!r})"


def execute_gold_set(target) -> dict[tuple[str, str], list | Failed]:
    """Run every item's SQL and reference SQL at `target`; key results by (id, "sql"/"reference_sql")."""
    conn = connect_demo_warehouse(target)
    if hasattr(conn, "autocommit"):
        conn.autocommit = True  # PostgreSQL: a failing statement must not abort the next ones
    results = {}
    try:
        for item in ITEMS:
            for field in ("sql", "reference_sql"):
                if not item[field]:
                    continue
                cursor = conn.cursor()
                try:
                    cursor.execute(item[field])
                    results[item["id"], field] = comparable_rows(cursor.fetchall())
                except Exception as error:  # noqa: BLE001 - the failure is the result under test
                    results[item["id"], field] = Failed(error)
                finally:
                    cursor.close()
    finally:
        conn.close()
    return results


@pytest.fixture(scope="module")
def sqlite_results(tmp_path_factory):
    path = tmp_path_factory.mktemp("gold") / "demo.sqlite3"
    build_demo_warehouse(path)
    return execute_gold_set(path)


@pytest.fixture(scope="module")
def postgres_results():
    dsn = demo_postgres_dsn()
    build_demo_warehouse(dsn)
    return execute_gold_set(dsn)


@pytest.fixture(params=["sqlite", "postgres"])
def gold_results(request):
    """The gold set's results on each engine in turn."""
    return request.getfixturevalue(f"{request.param}_results")


def test_the_committed_gold_file_is_exactly_what_its_generator_writes():
    spec = importlib.util.spec_from_file_location("build_demo_gold", GOLD_FILE.with_name("build_demo_gold.py"))
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert generator.gold_items() == ITEMS


def test_gold_item_ids_are_unique():
    ids = [item["id"] for item in ITEMS]
    assert len(ids) == len(set(ids))


def test_every_item_has_the_gold_file_fields_and_a_known_error_class():
    known = set(ErrorClass.values)
    for item in ITEMS:
        assert set(item) == {"id", "question", "sql", "label", "error_class", "warehouse", "reference_sql"}, item["id"]
        assert item["warehouse"] == "demo", item["id"]
        assert item["question"].strip() and item["sql"].strip(), item["id"]
        if item["label"] == "correct":
            assert item["error_class"] is None and item["reference_sql"] is None, item["id"]
        else:
            assert item["label"] == "wrong", item["id"]
            assert item["error_class"] in known, item["id"]
            assert item["reference_sql"], item["id"]


def test_about_one_item_in_five_is_wrong():
    assert len(ITEMS) >= 200
    assert 0.18 <= len(WRONG) / len(ITEMS) <= 0.22


def test_wrong_items_cover_every_error_class_of_the_demo():
    per_class = Counter(item["error_class"] for item in WRONG)
    assert set(per_class) == DEMO_ERROR_CLASSES
    assert min(per_class.values()) >= 4
    assert per_class["join_fanout"] >= 8


def test_every_correct_item_runs_and_returns_rows(gold_results):
    failures = {
        item["id"]: gold_results[item["id"], "sql"]
        for item in ITEMS
        if item["label"] == "correct" and not _returned_rows(gold_results[item["id"], "sql"])
    }
    assert failures == {}


def test_every_reference_sql_runs_and_returns_rows(gold_results):
    failures = {
        item["id"]: gold_results[item["id"], "reference_sql"]
        for item in WRONG
        if not _returned_rows(gold_results[item["id"], "reference_sql"])
    }
    assert failures == {}


def test_every_wrong_item_returns_a_different_result_from_its_reference(gold_results):
    same_or_failed = [
        item["id"]
        for item in WRONG
        if item["error_class"] != "unknown_object"
        and (
            isinstance(gold_results[item["id"], "sql"], Failed)
            or gold_results[item["id"], "sql"] == gold_results[item["id"], "reference_sql"]
        )
    ]
    assert same_or_failed == []


def test_every_unknown_object_item_fails_on_an_unknown_table_or_column(gold_results):
    unknown_object_items = [item for item in WRONG if item["error_class"] == "unknown_object"]
    outcomes = {item["id"]: gold_results[item["id"], "sql"] for item in unknown_object_items}
    not_failing_as_expected = {
        item_id: outcome
        for item_id, outcome in outcomes.items()
        if not (isinstance(outcome, Failed) and any(text in outcome.message for text in UNKNOWN_OBJECT_ERRORS))
    }
    assert unknown_object_items
    assert not_failing_as_expected == {}


def test_correct_and_reference_queries_return_the_same_rows_on_both_engines(sqlite_results, postgres_results):
    compared = [(item["id"], "sql") for item in ITEMS if item["label"] == "correct"]
    compared += [(item["id"], "reference_sql") for item in WRONG]
    compared += [(item["id"], "sql") for item in WRONG if item["error_class"] != "unknown_object"]
    differing = [key for key in compared if sqlite_results[key] != postgres_results[key]]
    assert differing == []


def _returned_rows(result) -> bool:
    return not isinstance(result, Failed) and len(result) > 0
