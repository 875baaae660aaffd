"""Issue 34: a judge of a query on a warehouse known only from a catalogue file gets its schema slice.

The slice reaches the vendor request that `export_verdicts` writes; the hypothesis probe on
such a warehouse is an error (no connection), never a reject.
"""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from judges.demo import register_simulated_judges, run_inline
from labelling.goldset_io import goldset_import

pytestmark = pytest.mark.django_db
DATA = Path(__file__).resolve().parents[2] / "probes" / "tests" / "data"

GOLD = [
    {
        "id": "bq-1",
        "question": "Total paid per payment method",
        "sql": "SELECT p.method, SUM(p.amount) AS paid FROM shop.payments p GROUP BY p.method",
        "label": "correct",
        "warehouse": "bq",
    },
    {
        "id": "bq-2",
        "question": "Order totals of the customers of region EU",
        "sql": "SELECT o.order_id, o.order_total FROM shop.orders o JOIN shop.customers c "
        "ON c.customer_id = o.customer_id WHERE c.region = 'EU'",
        "label": "correct",
        "warehouse": "bq",
    },
]


def test_the_schema_slice_of_a_file_catalogue_reaches_the_judge_request(vendor_simulator, tmp_path):
    call_command(
        "import_catalogue",
        "bq",
        str(DATA / "bigquery_columns.csv"),
        "--dialect",
        "bigquery",
        "--keys",
        str(DATA / "bigquery_keys.csv"),
        stdout=io.StringIO(),
    )
    gold_file = tmp_path / "gold.jsonl"
    gold_file.write_text("".join(json.dumps(row) + "\n" for row in GOLD))
    version = goldset_import(path_or_file=gold_file, gold_set_name="bq-gold", fmt="jsonl")
    judges = [v for v in register_simulated_judges() if v.family == "anthropic"]
    run = run_inline(gold_set_version=version, judge_versions=judges, repeats=1, label="file-catalogue")
    out = tmp_path / "verdicts.jsonl"
    call_command("export_verdicts", "--run", str(run.pk), "--format", "jsonl", "--output", str(out))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == len(GOLD) * len(judges)
    for line in lines:
        request = json.dumps(line["request"])
        assert "Warehouse bq (bigquery)" in request
        assert "TABLE payments" in request or "TABLE orders" in request
        assert line["catalogue_version"] == 1
        assert line["decision"] != "error", line
