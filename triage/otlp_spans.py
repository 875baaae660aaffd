"""What each span of an OTLP export says, under a client's mapping: SQL, question, attempt, or nothing.

`export_span_facts` turns the decoded `ExportTraceServiceRequest` into one `SpanFacts` per span:
plain values (JSON-serialisable, so a span can be held back and read again later). Pure: the
mapping is an `OtlpMapping` row, or an unsaved one that carries the defaults.
"""

from dataclasses import asdict, dataclass, field

from triage.otlp_genai import genai_model, genai_question
from triage.otlp_models import OtlpMapping

SQL, ATTEMPT, OTHER = "sql", "attempt", "other"
# `db.system.name` / `db.system` values Docket can check, as its own dialect names; a span naming
# another system keeps its warehouse's dialect.
DIALECTS = {"postgresql": "postgres", "postgres": "postgres", "sqlite": "sqlite"}
ATTEMPT_FIELDS = ("tier", "attempt", "failure_class", "tokens", "cost_usd", "latency_ms")
TOKEN_ATTRIBUTES = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")


@dataclass
class SpanFacts:
    """One span as ingestion reads it; `kind` says whether it is a query, an attempt, or other."""

    trace_id: str
    span_id: str
    parent_id: str
    kind: str
    received_at: float
    name: str = ""
    service: str = ""
    start_ns: int = 0
    sql: str | None = None
    dialect: str | None = None
    warehouse: str | None = None
    question: str | None = None  # from the mapping's question attributes
    genai_question: str | None = None  # the last user message, if the span is a GenAI span
    genai_model: str | None = None
    attempt: dict = field(default_factory=dict)
    problem: str | None = None  # why a SQL span cannot be a query whatever else arrives

    @property
    def key(self) -> tuple[str, str]:
        return self.trace_id, self.span_id

    def as_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "SpanFacts":
        known = cls.__dataclass_fields__
        return cls(**{name: value for name, value in data.items() if name in known})


def any_value(value):
    """Return an OTLP AnyValue as a plain Python value (bytes as hex)."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {pair.key: any_value(pair.value) for pair in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def attributes_dict(attributes) -> dict:
    return {pair.key: any_value(pair.value) for pair in attributes}


def first_text(attributes: dict, names) -> str | None:
    """Return the first of the named attributes that holds non-blank text."""
    for name in names:
        value = attributes.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def attempt_fields(span, attributes: dict, prefix: str) -> dict:
    """Return a child span's `<prefix>*` attributes as an attempt of the ingestion API's format.

    Latency defaults to the span's duration and tokens to its GenAI usage; a float cost is
    given to 8 places, the precision attempts are stored with.
    """
    given = {key[len(prefix) :]: value for key, value in attributes.items() if key.startswith(prefix)}
    attempt = {name: given[name] for name in ATTEMPT_FIELDS if given.get(name) is not None}
    if "latency_ms" not in attempt and span.end_time_unix_nano >= span.start_time_unix_nano > 0:
        attempt["latency_ms"] = (span.end_time_unix_nano - span.start_time_unix_nano) / 1e6
    usage = [attributes[name] for name in TOKEN_ATTRIBUTES if isinstance(attributes.get(name), int)]
    if "tokens" not in attempt and usage:
        attempt["tokens"] = sum(usage)
    if isinstance(attempt.get("cost_usd"), float):
        attempt["cost_usd"] = f"{attempt['cost_usd']:.8f}"
    return attempt


def span_kind(attributes: dict, mapping: OtlpMapping) -> str:
    """Say what a span is: an attempt (it carries the attempt prefix), a query (it carries SQL), or other."""
    prefix = mapping.attempt_prefix
    if prefix and any(key.startswith(prefix) for key in attributes):
        return ATTEMPT
    return SQL if first_text(attributes, mapping.sql_attributes) else OTHER


def warehouse_named(attributes: dict, mapping: OtlpMapping) -> str | None:
    namespace = first_text(attributes, mapping.warehouse_attributes or [])
    if namespace is None:
        return mapping.default_warehouse or None
    return (mapping.warehouse_aliases or {}).get(namespace, namespace)


def span_facts(span, *, mapping: OtlpMapping, service: str, received_at: float) -> SpanFacts:
    """Read one span under a client's mapping."""
    attributes = attributes_dict(span.attributes)
    kind = span_kind(attributes, mapping)
    facts = SpanFacts(
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_id=span.parent_span_id.hex(),
        kind=kind,
        received_at=received_at,
        name=span.name,
        service=service,
        start_ns=span.start_time_unix_nano,
        question=first_text(attributes, mapping.question_attributes or []),
    )
    if mapping.question_from_genai:
        events = [(event.name, attributes_dict(event.attributes)) for event in span.events]
        facts.genai_question = genai_question(attributes, events)
    facts.genai_model = genai_model(attributes)
    if kind == ATTEMPT:
        facts.attempt = attempt_fields(span, attributes, mapping.attempt_prefix)
    elif kind == SQL:
        facts.sql = first_text(attributes, mapping.sql_attributes)
        system = first_text(attributes, mapping.dialect_attributes or [])
        facts.dialect = DIALECTS.get(system.lower()) if system else None
        facts.warehouse = warehouse_named(attributes, mapping)
        if len(span.trace_id) != 16 or len(span.span_id) != 8:
            facts.problem = "the span has no valid trace id and span id, which make its query's id"
    return facts


def export_span_facts(export, *, mapping: OtlpMapping, received_at: float) -> list[SpanFacts]:
    """Read every span of an ExportTraceServiceRequest, in the order sent."""
    found = []
    for resource_spans in export.resource_spans:
        resource = attributes_dict(resource_spans.resource.attributes)
        service = resource.get("service.name") if isinstance(resource.get("service.name"), str) else ""
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                found.append(span_facts(span, mapping=mapping, service=service, received_at=received_at))
    return found
