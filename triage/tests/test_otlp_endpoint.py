"""POST /v1/traces through Django's test client: encodings, errors, partial success, the mapping."""

import gzip
import json

import pytest
from django.db import OperationalError
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from labelling.models import Query, QuerySource
from loops.models import RequestAttempt
from triage import otlp_views
from triage.models import LiveQuery, OtlpExportCounts, OtlpHeldSpan, OtlpMapping
from triage.otlp_models import otlp_mapping_forget
from triage.tests import factories
from triage.tests.otlp_support import Spans, json_body, protobuf_body

pytestmark = pytest.mark.django_db
URL = "/v1/traces"
PROTOBUF = "application/x-protobuf"


@pytest.fixture
def spans():
    made = Spans()
    yield made
    made.shutdown()


@pytest.fixture
def post(client):
    factories.warehouse("shop")
    _, plaintext = factories.token(scopes=("ingest",))

    def send(body, content_type=PROTOBUF, token=plaintext, header="HTTP_AUTHORIZATION", **extra):
        headers = {header: f"Bearer {token}" if header == "HTTP_AUTHORIZATION" else token} if token else {}
        return client.post(URL, data=body, content_type=content_type, **headers, **extra)

    return send


def export_answer(response) -> ExportTraceServiceResponse:
    assert response["Content-Type"] == PROTOBUF
    return ExportTraceServiceResponse.FromString(response.content)


def test_a_sql_span_becomes_a_live_query_named_after_its_trace_and_span(spans, post):
    with spans.sql("SELECT COUNT(*) FROM orders", question="How many orders?"):
        pass
    (span,) = spans.finished()
    response = post(protobuf_body(spans.finished()))
    assert response.status_code == 200
    assert not export_answer(response).HasField("partial_success")
    live = LiveQuery.objects.select_related("query").get()
    trace_id, span_id = f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}"
    assert live.external_id == f"otlp-{trace_id}-{span_id}" and live.client == "acme"
    assert live.query.source == QuerySource.LIVE and live.query.sql == "SELECT COUNT(*) FROM orders"
    assert live.query.question == "How many orders?" and live.query.dialect == "sqlite"
    assert live.query.metadata["otlp"] == {
        "trace_id": trace_id,
        "span_id": span_id,
        "span": "SELECT shop",
        "service": "shop-assistant",
    }


def test_the_older_db_statement_and_db_system_attributes_are_read_too(spans, post):
    older = {"db.system": "postgresql", "db.name": "shop"}
    with spans.span("query", **older, **{"db.statement": "SELECT 1"}), spans.span("ask", **{"docket.question": "?"}):
        pass
    with (
        spans.span("outer", **{"docket.question": "One?"}),
        spans.span("query", **older, **{"db.statement": "SELECT 2"}),
    ):
        pass
    post(protobuf_body(spans.finished()))
    stored = dict(Query.objects.values_list("sql", "dialect"))
    assert stored == {"SELECT 2": "postgres"}, "the question is looked for above the span, never below it"
    assert Query.objects.get().question == "One?"


def test_spans_without_sql_are_ignored_counted_and_reported(spans, post):
    with spans.span("GET /ask", **{"http.route": "/ask"}), spans.sql("SELECT 1", question="One?"):
        pass
    response = post(protobuf_body(spans.finished()))
    answer = export_answer(response)
    assert answer.partial_success.rejected_spans == 0
    assert "1 span(s) carried no SQL and were ignored" in answer.partial_success.error_message
    counts = OtlpExportCounts.objects.get(client="acme")
    assert (counts.spans_received, counts.spans_ignored, counts.queries_ingested) == (2, 1, 1)
    assert LiveQuery.objects.count() == 1


def test_rejected_spans_are_counted_with_the_reason_and_the_rest_is_stored(spans, post):
    with spans.sql("SELECT 1", question="Fine?"):
        pass
    with spans.sql("SELECT 2", question="Where?", **{"db.namespace": "nowhere"}):
        pass
    with spans.sql("SELECT 3"):  # no question anywhere, and no parent to wait for
        pass
    answer = export_answer(post(protobuf_body(spans.finished())))
    assert answer.partial_success.rejected_spans == 2
    assert "unknown warehouse 'nowhere'" in answer.partial_success.error_message
    assert "has no question" in answer.partial_success.error_message
    assert list(Query.objects.values_list("sql", flat=True)) == ["SELECT 1"]
    assert OtlpExportCounts.objects.get(client="acme").spans_rejected == 2


def test_a_re_export_is_the_same_query_never_a_second(spans, post):
    with spans.sql("SELECT 1", question="One?"):
        pass
    body = protobuf_body(spans.finished())
    post(body)
    post(body)
    assert LiveQuery.objects.count() == 1
    assert OtlpExportCounts.objects.get(client="acme").exports == 2


def test_otlp_json_is_read_and_answered_in_json(spans, post):
    with spans.sql("SELECT 1", question="One?"):
        pass
    with spans.sql("SELECT 2", question="Two?", **{"db.namespace": "nowhere"}):
        pass
    response = post(json_body(spans.finished()), content_type="application/json")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response.json()["partialSuccess"]["rejectedSpans"] == 1
    (span, _) = spans.finished()
    assert LiveQuery.objects.get().external_id == f"otlp-{span.context.trace_id:032x}-{span.context.span_id:016x}"


def test_a_gzipped_body_is_read(spans, post):
    with spans.sql("SELECT 1", question="One?"):
        pass
    response = post(gzip.compress(protobuf_body(spans.finished())), HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 200
    assert LiveQuery.objects.count() == 1


def test_the_token_may_come_in_an_x_docket_token_header(spans, post):
    with spans.sql("SELECT 1", question="One?"):
        pass
    _, plaintext = factories.token(scopes=("ingest",), client="beta")
    assert post(protobuf_body(spans.finished()), token=plaintext, header="HTTP_X_DOCKET_TOKEN").status_code == 200
    assert LiveQuery.objects.get().client == "beta"


def test_a_missing_or_bad_token_is_a_401_status_in_the_requests_encoding(spans, post):
    with spans.sql("SELECT 1", question="One?"):
        pass
    for token in (None, "dkt_wrong_token"):
        response = post(protobuf_body(spans.finished()), token=token)
        assert response.status_code == 401 and response["WWW-Authenticate"] == "Bearer"
        assert status_pb2.Status.FromString(response.content).code == 16  # UNAUTHENTICATED
    assert LiveQuery.objects.count() == 0


def test_a_token_without_the_ingest_scope_is_a_403(spans, post):
    _, read_only = factories.token(scopes=("read",))
    response = post(b"", token=read_only, content_type="application/json")
    assert response.status_code == 403
    assert json.loads(response.content)["code"] == 7  # PERMISSION_DENIED


@pytest.mark.parametrize(
    ("body", "content_type", "extra", "status"),
    [
        (b"\xff\xff\xff", PROTOBUF, {}, 400),
        (b"[1, 2]", "application/json", {}, 400),
        (b"{}", "text/plain", {}, 415),
        (b"\x1f\x8b not gzip", PROTOBUF, {"HTTP_CONTENT_ENCODING": "gzip"}, 400),
        (b"{}", "application/json", {"HTTP_CONTENT_ENCODING": "br"}, 415),
        (gzip.compress(b" " * 5_000_000), "application/json", {"HTTP_CONTENT_ENCODING": "gzip"}, 413),
    ],
    ids=["bad-protobuf", "json-not-an-object", "text", "bad-gzip", "brotli", "gzip-bomb"],
)
def test_a_bad_body_is_refused_with_the_otlp_status(post, body, content_type, extra, status):
    response = post(body, content_type=content_type, **extra)
    assert response.status_code == status
    assert LiveQuery.objects.count() == 0


def test_a_body_over_the_limit_is_a_413(post, settings):
    settings.TRIAGE_API_MAX_BODY_BYTES = 100
    response = post(b"x" * 101)
    assert response.status_code == 413
    assert status_pb2.Status.FromString(response.content).message.startswith("Body of 101 bytes")


def test_a_client_mapping_names_other_attributes_and_a_default_warehouse(spans, post):
    factories.warehouse("analytics")
    mapping = OtlpMapping(
        client="acme",
        sql_attributes=["app.sql"],
        question_attributes=["app.question"],
        warehouse_attributes=["app.db"],
        warehouse_aliases={"analytics_prod": "analytics"},
        default_warehouse="shop",
    )
    mapping.full_clean()
    mapping.save()
    otlp_mapping_forget(client="acme")
    with spans.span("a", **{"app.sql": "SELECT 1", "app.question": "One?", "app.db": "analytics_prod"}):
        pass
    with spans.span("b", **{"app.sql": "SELECT 2", "app.question": "Two?"}):
        pass
    with spans.sql("SELECT 3", question="Three?"):  # the default attributes are no longer read
        pass
    post(protobuf_body(spans.finished()))
    stored = dict(Query.objects.values_list("sql", "warehouse__name"))
    assert stored == {"SELECT 1": "analytics", "SELECT 2": "shop"}


def test_attempt_child_spans_are_stored_as_the_querys_attempts(spans, post):
    with spans.sql("SELECT 1", question="One?"):
        with spans.span("attempt", **{"docket.attempt.tier": "small", "docket.attempt.failure_class": "syntax"}):
            pass
        with spans.span(
            "attempt",
            **{"docket.attempt.tier": "large", "docket.attempt.cost_usd": 0.0012, "docket.attempt.latency_ms": 40.0},
            **{"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 20},
        ):
            pass
    response = post(protobuf_body(spans.finished()))
    assert "2 span(s) carried no SQL" in export_answer(response).partial_success.error_message
    attempts = list(RequestAttempt.objects.order_by("position"))
    assert [(a.tier, a.attempt, a.failure_class) for a in attempts] == [("small", 1, "syntax"), ("large", 1, "")]
    assert attempts[1].tokens == 120 and float(attempts[1].cost_usd) == 0.0012 and attempts[1].latency_ms == 40.0
    assert attempts[0].latency_ms is not None, "an attempt's latency defaults to its span's duration"
    post(protobuf_body(spans.finished()))
    assert RequestAttempt.objects.count() == 2, "a re-export records no attempt twice"


def test_a_sql_span_waits_for_the_genai_parent_of_a_later_export(spans, post):
    messages = [{"role": "user", "parts": [{"type": "text", "content": "Orders last week?"}]}]
    chat = {"gen_ai.input.messages": json.dumps(messages), "gen_ai.request.model": "m-1"}
    attempt = {"docket.attempt.tier": "small"}
    with spans.span("chat", **chat), spans.sql("SELECT COUNT(*) FROM orders"), spans.span("attempt", **attempt):
        pass
    attempt, sql, chat = spans.finished()
    post(protobuf_body([attempt]))
    answer = export_answer(post(protobuf_body([sql])))
    assert "1 SQL span(s) wait for their parent span" in answer.partial_success.error_message
    assert LiveQuery.objects.count() == 0 and OtlpHeldSpan.objects.count() == 2
    post(protobuf_body([chat]))
    live = LiveQuery.objects.select_related("query").get()
    assert live.query.question == "Orders last week?" and live.query.metadata["generator_model"] == "m-1"
    assert live.attempts.get().tier == "small"
    assert OtlpHeldSpan.objects.count() == 0


def test_a_database_failure_is_a_503_the_exporter_retries(spans, post, monkeypatch):
    def database_gone(**_):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(otlp_views, "otlp_export_ingest", database_gone)
    with spans.sql("SELECT 1", question="One?"):
        pass
    response = post(protobuf_body(spans.finished()))
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert status_pb2.Status.FromString(response.content).code == 14  # UNAVAILABLE
