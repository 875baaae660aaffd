"""Real OpenTelemetry spans for the OTLP tests: made by the SDK, encoded by its OTLP encoder."""

import base64
import gzip
import json

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

SQL_ATTRIBUTES = {"db.system.name": "sqlite", "db.namespace": "shop"}


class Spans:
    """A tracer whose finished spans are kept in memory, to export however a test wants."""

    def __init__(self, service="shop-assistant"):
        self.memory = InMemorySpanExporter()
        self.provider = TracerProvider(resource=Resource.create({"service.name": service}))
        self.provider.add_span_processor(SimpleSpanProcessor(self.memory))
        self.tracer = self.provider.get_tracer("docket-tests")

    def span(self, name, **attributes):
        """Start a span (a context manager) carrying these attributes."""
        return self.tracer.start_as_current_span(name, attributes=attributes)

    def sql(self, sql, question=None, **attributes):
        """Start a database span with SQL (and a `docket.question` if given)."""
        extra = {"docket.question": question} if question else {}
        return self.span("SELECT shop", **(SQL_ATTRIBUTES | {"db.query.text": sql} | extra | attributes))

    def finished(self):
        return list(self.memory.get_finished_spans())

    def shutdown(self):
        self.provider.shutdown()


def protobuf_body(spans) -> bytes:
    return encode_spans(spans).SerializeToString()


def otlp_json(spans) -> dict:
    """Encode spans as OTLP/JSON: protobuf's JSON mapping, but trace and span ids in hex."""
    data = json_format.MessageToDict(encode_spans(spans))
    for resource_spans in data["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return data


def json_body(spans, *, compress=False) -> bytes:
    body = json.dumps(otlp_json(spans)).encode()
    return gzip.compress(body) if compress else body
