"""The real OpenTelemetry SDK and its OTLP/HTTP exporter, pointed at a running Docket server.

Spans are made and exported by the SDK exactly as an instrumented application does; the test
counts what arrives in the database.
"""

import json

import pytest
import requests
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from loops.models import RequestAttempt
from triage.models import LiveQuery, OtlpExportCounts, OtlpHeldSpan
from triage.tests import factories
from triage.tests.otlp_support import json_body

pytestmark = pytest.mark.django_db(transaction=True)
SQL_SPAN = {"db.system.name": "sqlite", "db.namespace": "shop"}


@pytest.fixture
def docket(live_server):
    """A running Docket with the `shop` warehouse; returns its URL and an ingest token."""
    factories.warehouse("shop")
    _, plaintext = factories.token(scopes=("ingest",))
    return live_server.url, plaintext


def otlp_exporter(url, token, **options):
    return OTLPSpanExporter(
        endpoint=f"{url}/v1/traces", headers={"Authorization": f"Bearer {token}"}, timeout=10, **options
    )


def traced_app(exporter, *, batch_size=512):
    """A tracer provider as an application sets one up, plus an in-memory copy of what it exports."""
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-assistant"}))
    provider.add_span_processor(
        BatchSpanProcessor(exporter, max_export_batch_size=batch_size, schedule_delay_millis=60_000)
    )
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def answer_questions(tracer, count):
    """Trace `count` requests: a GenAI call holding the question, the SQL it wrote, two attempts; and a health check."""
    for n in range(count):
        messages = [{"role": "user", "parts": [{"type": "text", "content": f"Orders in week {n}?"}]}]
        with (
            tracer.start_as_current_span("chat", attributes={"gen_ai.input.messages": json.dumps(messages)}),
            tracer.start_as_current_span("SELECT", attributes=SQL_SPAN | {"db.query.text": f"SELECT {n}"}),
        ):
            for tier in ("small", "large"):
                with tracer.start_as_current_span("attempt", attributes={"docket.attempt.tier": tier}):
                    pass
    with tracer.start_as_current_span("GET /health/"):
        pass


def test_sdk_exports_arrive_as_live_queries_even_split_across_batches_and_a_re_export_adds_nothing(docket):
    url, token = docket
    exporter = otlp_exporter(url, token)
    provider, memory = traced_app(exporter, batch_size=7)  # batches cut between children and parents
    answer_questions(provider.get_tracer("shop"), 12)
    assert provider.force_flush(10_000)
    stored = LiveQuery.objects.select_related("query")
    assert sorted(live.query.question for live in stored) == sorted(f"Orders in week {n}?" for n in range(12))
    assert RequestAttempt.objects.count() == 24 and OtlpHeldSpan.objects.count() == 0
    counts = OtlpExportCounts.objects.get(client="acme")
    assert (counts.spans_received, counts.queries_ingested, counts.spans_rejected) == (49, 12, 0)
    assert counts.spans_ignored == 37, "the chat, attempt and health spans carry no SQL and are counted"
    assert counts.exports >= 7, "the batches of 7 split requests, so SQL spans waited for their parents"

    assert exporter.export(memory.get_finished_spans()) == SpanExportResult.SUCCESS
    assert LiveQuery.objects.count() == 12 and RequestAttempt.objects.count() == 24
    provider.shutdown()


def test_a_gzipped_sdk_export_and_a_gzipped_otlp_json_post_both_arrive(docket):
    url, token = docket
    provider, memory = traced_app(otlp_exporter(url, token, compression=Compression.Gzip))
    tracer = provider.get_tracer("shop")
    with tracer.start_as_current_span(
        "SELECT", attributes=SQL_SPAN | {"db.query.text": "SELECT 1", "docket.question": "One?"}
    ):
        pass
    assert provider.force_flush(10_000)
    assert LiveQuery.objects.count() == 1
    with tracer.start_as_current_span(
        "SELECT", attributes=SQL_SPAN | {"db.query.text": "SELECT 2", "docket.question": "Two?"}
    ):
        pass
    with tracer.start_as_current_span("SELECT", attributes=SQL_SPAN | {"db.query.text": "SELECT 3"}):
        pass
    response = requests.post(
        f"{url}/v1/traces",
        data=json_body(memory.get_finished_spans()[1:], compress=True),
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip", "x-docket-token": token},
        timeout=10,
    )
    assert response.status_code == 200
    assert response.json()["partialSuccess"]["rejectedSpans"] == 1  # SELECT 3 has no question
    assert sorted(LiveQuery.objects.values_list("query__sql", flat=True)) == ["SELECT 1", "SELECT 2"]
    provider.shutdown()


def test_an_export_with_a_bad_token_is_refused_and_stores_nothing(docket):
    url, _ = docket
    provider, memory = traced_app(otlp_exporter(url, "dkt_not_a_token"))
    tracer = provider.get_tracer("shop")
    with tracer.start_as_current_span(
        "SELECT", attributes=SQL_SPAN | {"db.query.text": "SELECT 1", "docket.question": "One?"}
    ):
        pass
    exporter = otlp_exporter(url, "dkt_not_a_token")
    assert exporter.export(memory.get_finished_spans()) == SpanExportResult.FAILURE
    assert LiveQuery.objects.count() == 0 and not OtlpExportCounts.objects.exists()
    provider.shutdown()
