"""Issue 16: the schema slice in every prompt, honest caching and "simulated" labels, the call trace.

The demo warehouse (SQLite, built in the test's folder) and the demo gold set are run
through a simulated Anthropic judge and a simulated OpenAI-compatible judge with the real
SDKs against the local vendor simulator.
"""

import io
import json
import sqlite3
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.urls import reverse

from judges.backends import get_backend
from judges.backends.prompt import request_join
from judges.demo import register_simulated_judges, run_inline
from judges.models import PromptPrefix, Verdict
from judges.report import build_report
from judges.services import judge_create
from labelling.demo import demo_gold_load
from labelling.models import GoldSetVersion, Query
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import build_demo_warehouse, register_demo_warehouse
from probes.warehouses import warehouse_register
from simulator import Simulator, parse_anthropic
from simulator.vendor import minimum_cacheable_tokens, tokens_of

pytestmark = pytest.mark.django_db

DEMO_COLUMNS = {
    "orders": ["order_id", "customer_id", "order_date", "status", "order_total"],
    "payments": ["payment_id", "method", "amount"],
}


@pytest.fixture
def demo_world(settings, tmp_path):
    """The demo warehouse with a catalogue, the demo gold set, and a second warehouse."""
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    path = tmp_path / "demo.sqlite3"
    build_demo_warehouse(str(path))
    demo = register_demo_warehouse(str(path))
    demo_catalogue = catalogue_refresh(warehouse=demo)
    other_path = tmp_path / "other.sqlite3"
    with sqlite3.connect(other_path) as conn:
        conn.execute("CREATE TABLE secret_ledger (entry_id INTEGER PRIMARY KEY, booked REAL NOT NULL)")
    other = warehouse_register(name="other", dialect="sqlite", dsn=f"sqlite:///{other_path}")
    catalogue_refresh(warehouse=other)
    demo_gold_load(io.StringIO())
    gold = GoldSetVersion.objects.get(gold_set__name="demo")
    return {"demo": demo, "catalogue": demo_catalogue, "other": other, "gold": gold}


@pytest.fixture
def demo_run(demo_world, vendor_simulator):
    versions = [v for v in register_simulated_judges() if v.family in ("anthropic", "openai")]
    run = run_inline(gold_set_version=demo_world["gold"], judge_versions=versions, repeats=1, label="issue16")
    return {**demo_world, "run": run, "versions": versions}


def request_text(verdict: Verdict) -> str:
    request = request_join(verdict.prompt_prefix.body if verdict.prompt_prefix else None, verdict.request_tail)
    return json.dumps(request)


def test_every_verdict_of_the_demo_run_carries_the_demo_schema_and_its_catalogue_version(demo_run):
    verdicts = Verdict.objects.filter(run=demo_run["run"]).select_related("prompt_prefix", "query")
    assert verdicts.count() == 2 * demo_run["gold"].items.count()
    assert {v.judge_version.backend for v in verdicts} == {"anthropic", "openai_compatible"}
    for verdict in verdicts:
        text = request_text(verdict)
        assert verdict.catalogue_version == demo_run["catalogue"].version
        assert verdict.context["schema"]["mode"] == "full"
        # The question and SQL of this very item are in the request...
        assert json.dumps(verdict.query.sql)[1:-1] in text
        # ...with the columns of the tables it references, a one-hop table, and no other warehouse.
        for table, columns in DEMO_COLUMNS.items():
            if table in verdict.query.sql:
                assert f"TABLE {table} " in text
                assert all(f"  {column} " in text for column in columns)
        assert "TABLE regions " in text  # one FK hop from customers
        assert "values: cancelled, completed, pending, refunded" in text
        assert "secret_ledger" not in text
        assert verdict.simulated is True and verdict.endpoint == "simulated"
    # The whole run stores one prefix per judge version and catalogue version.
    assert verdicts.filter(prompt_prefix__isnull=True).count() == 0
    assert PromptPrefix.objects.filter(judge_version__in=demo_run["versions"]).count() == 2
    # The schema text is in the prefix, not repeated in each verdict's own part.
    assert all("TABLE orders" not in json.dumps(v.request_tail) for v in verdicts)


def test_the_cached_prefix_reaches_the_family_minimum_and_later_calls_read_it(demo_run):
    anthropic = next(v for v in demo_run["versions"] if v.backend == "anthropic")
    verdicts = list(Verdict.objects.filter(run=demo_run["run"], judge_version=anthropic).order_by("id"))
    writes = [v for v in verdicts if v.cache_write_tokens]
    reads = [v for v in verdicts if v.cache_read_tokens]
    minimum = minimum_cacheable_tokens(anthropic.model, Simulator().model(anthropic.model), anthropic=True)
    assert writes and writes[0].cache_write_tokens >= minimum
    # The first call of the prefix went alone, so the rest read what it wrote.
    assert len(writes) == 1
    assert len(reads) == len(verdicts) - 1
    assert all(v.cache_read_tokens == writes[0].cache_write_tokens for v in reads)
    # Cost: the write at 1.25x input, reads at 0.1x.
    read_cost = Decimal(reads[0].cache_read_tokens) * anthropic.price_cache_read_per_mtok / 1_000_000
    write_cost = Decimal(writes[0].cache_write_tokens) * anthropic.price_cache_write_per_mtok / 1_000_000
    assert anthropic.price_cache_write_per_mtok == anthropic.price_input_per_mtok * Decimal("1.25")
    assert write_cost > read_cost * 10
    openai = next(v for v in demo_run["versions"] if v.backend == "openai_compatible")
    assert Verdict.objects.filter(run=demo_run["run"], judge_version=openai, cache_read_tokens__gt=0).exists()


def test_a_prefix_under_the_family_minimum_is_not_cached_and_never_costs_the_write_price(vendor_simulator, db):
    version = judge_create(
        name="short-prefix",
        backend="anthropic",
        model="claude-haiku-4-5",  # 4,096-token minimum
        prompt_template="Review the SQL. Answer by calling the tool.",
        price_input_per_mtok=Decimal("1"),
        price_output_per_mtok=Decimal("5"),
        is_simulated=True,
        config={"retry_base_delay_s": 0.01},
    ).latest_version
    assert version.price_cache_write_per_mtok == Decimal("1.25")
    backend = get_backend(version)
    query = Query.objects.create(question="How many orders?", sql="SELECT COUNT(*) FROM orders", external_id="q1")
    results = [backend.judge(query) for _ in range(3)]
    assert all(r.cache_write_tokens == 0 and r.cache_read_tokens == 0 for r in results)
    assert all(
        r.cost_usd == Decimal(r.input_tokens) * 1 / 10**6 + Decimal(r.output_tokens) * 5 / 10**6 for r in results
    )
    assert vendor_simulator.stats["cache:too_short"] == 3
    assert tokens_of(parse_anthropic(backend.request(query))["static"]) < 4096


def test_a_query_without_a_warehouse_is_judged_without_a_schema_and_says_so(vendor_simulator, db):
    version = register_simulated_judges()[0]
    query = Query.objects.create(question="How many orders?", sql="SELECT COUNT(*) FROM orders", external_id="q1")
    result = get_backend(version).judge(query)
    assert result.catalogue_version is None
    assert result.context["schema"]["mode"] == "none"
    assert "no warehouse" in result.context["schema"]["reason"]
    assert "No schema is available" in result.request_tail["messages"][0]["content"]


def test_a_worker_without_a_key_writes_error_verdicts_naming_the_variable(
    demo_world, vendor_simulator, settings, client_for
):
    settings.ANTHROPIC_API_KEY = ""
    settings.ANTHROPIC_BASE_URL = ""
    real = judge_create(
        name="claude-real", backend="anthropic", family="anthropic", model="claude-sonnet-4-5"
    ).latest_version
    assert real.is_simulated is False
    run = run_inline(gold_set_version=demo_world["gold"], judge_versions=[real], repeats=1)
    verdicts = Verdict.objects.filter(run=run)
    assert verdicts.count() == demo_world["gold"].items.count()
    assert set(verdicts.values_list("decision", flat=True)) == {"error"}
    assert set(verdicts.values_list("reason", flat=True)) == {"ANTHROPIC_API_KEY is not set"}
    assert not verdicts.filter(simulated=True).exists()
    assert set(verdicts.values_list("endpoint", flat=True)) == {"api.anthropic.com"}
    # The simulator was never called in its place.
    assert vendor_simulator.stats.get("anthropic:requests", 0) == 0
    assert run.simulation == {"simulated": 0, "imported": 0, "real": verdicts.count(), "label": ""}
    # The dashboard counts them as errors: not rejects, and not simulated.
    run.refresh_from_db()
    assert run.status == "completed"
    entry = next(e for e in build_report(gold_set_version=demo_world["gold"])["judges"] if e["name"] == "claude-real")
    assert entry["errors"] == verdicts.count() and entry["catch_rate"] is None and entry["simulated"] is False
    page = client_for("ml_engineer").get(reverse("judges:dashboard", args=[demo_world["gold"].pk])).content.decode()
    row = page.split("claude-real v1", 1)[1].split("</td>", 1)[0]
    assert "badge sim" not in row


def test_export_verdicts_writes_the_trace_of_every_verdict_of_a_run(demo_run, tmp_path):
    out = tmp_path / "verdicts.jsonl"
    call_command("export_verdicts", "--run", str(demo_run["run"].pk), "--format", "jsonl", "--output", str(out))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == Verdict.objects.filter(run=demo_run["run"]).count()
    for line in lines:
        for key in ("request", "response", "usage", "cost_usd", "latency_ms", "simulated", "endpoint"):
            assert key in line
        assert line["catalogue_version"] == demo_run["catalogue"].version
        assert set(line["usage"]) >= {"cache_creation_input_tokens", "cache_read_input_tokens"}
        verdict = Verdict.objects.get(pk=line["id"])
        assert line["usage"]["cache_read_input_tokens"] == verdict.cache_read_tokens
        assert line["request"]["messages"][-1]["content"].startswith("<question>")
        assert "TABLE orders" in json.dumps(line["request"])
        assert line["response"] == verdict.raw_response
        assert "api_key" not in json.dumps(line["request"]).lower()
    latest = tmp_path / "latest.jsonl"
    call_command("export_verdicts", "--run", "latest", "--format", "jsonl", "--output", str(latest))
    assert latest.read_text() == out.read_text()


def test_a_run_with_simulated_and_real_verdicts_is_mixed_and_counts_each(demo_run, settings, client_for):
    settings.ANTHROPIC_API_KEY = ""
    real = judge_create(name="claude-real", backend="anthropic", model="claude-sonnet-4-5").latest_version
    run = demo_run["run"]
    assert run.simulation["label"] == "simulated"
    query = demo_run["gold"].items.first().query
    Verdict.objects.create(judge_version=real, query=query, run=run, repeat=0, decision="error")
    simulation = run.simulation
    assert simulation["label"] == "mixed" and simulation["real"] == 1
    assert simulation["simulated"] == 2 * demo_run["gold"].items.count()
    page = client_for("ml_engineer").get(reverse("judges:run_detail", args=[run.pk])).content.decode()
    assert f"mixed: {simulation['simulated']} simulated, 1 real" in page


def test_a_catalogue_too_big_for_the_budget_gives_each_query_its_referenced_tables(demo_world, vendor_simulator):
    version = register_simulated_judges()[0]
    version.schema_token_budget = 80
    query = Query.objects.create(
        question="Paid by card?",
        sql="SELECT SUM(p.amount) FROM payments p WHERE p.method = 'card'",
        warehouse=demo_world["demo"],
        external_id="budget",
    )
    result = get_backend(version).judge(query)
    user = result.request_tail["messages"][0]["content"]
    assert result.context["schema"]["mode"] == "referenced"
    assert "TABLE payments" in user and "TABLE customers" not in user
    assert "Dropped to fit the schema budget" in user
    assert "orders" in result.context["schema"]["dropped_tables"]


def test_a_version_that_opts_in_sends_the_result_preview_and_its_verdict_says_so(demo_world, vendor_simulator):
    version = register_simulated_judges()[1]  # OpenAI-compatible
    version.include_result_preview = True
    demo_world["demo"].allow_result_egress = True  # an admin's consent (test_result_egress.py)
    demo_world["demo"].save()
    query = Query.objects.create(
        question="Orders by status?",
        sql="SELECT status, COUNT(*) AS n FROM orders GROUP BY status ORDER BY status",
        warehouse=demo_world["demo"],
        external_id="preview",
    )
    result = get_backend(version).judge(query)
    user = result.request_tail["messages"][0]["content"]
    assert "<result_preview>\n4 rows in total; the first:\nstatus | n\ncancelled |" in user
    assert result.context["result_preview"] == {
        "included": True,
        "row_count": 4,
        "consent": "warehouse demo allows result rows to be sent to vendors",
    }
    many = Query.objects.create(
        question="All orders?", sql="SELECT order_id FROM orders", warehouse=demo_world["demo"], external_id="many"
    )
    counted = get_backend(version).judge(many)
    assert counted.context["result_preview"]["row_count"] == 3000
    assert "3000 rows in total" in counted.request_tail["messages"][0]["content"]
