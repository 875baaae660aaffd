"""Ingest an OTLP trace export: its SQL spans become live queries through the API's own path.

Each SQL span becomes the row a `POST /api/v1/queries` would carry (external id
`otlp-<trace id>-<span id>`, so a re-export is the same query), is validated by the API's
serializer and stored by `live_queries_ingest` and `request_attempts_store`: stored, published
and judged exactly as a posted query. Spans without SQL are counted and dropped, unless a
waiting SQL span needs them; see `triage.otlp_traces` for what waits and why.
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.core.cache import cache
from django.db.models import F
from django.utils import timezone

from probes.selectors import warehouse_map_by_name
from triage.api import query_row_validate
from triage.attempts import request_attempts_store
from triage.ingest import live_queries_ingest
from triage.models import ApiToken
from triage.otlp_models import OtlpExportCounts, OtlpHeldSpan, OtlpMapping, otlp_mapping_cache_key
from triage.otlp_spans import SQL, SpanFacts, export_span_facts
from triage.otlp_traces import ReadyQuery, traces_resolve

MAPPING_CACHE_SECONDS = 5
# Held spans past their wait are decided at the client's next export, this many at a time.
EXPIRED_PER_EXPORT = 1000
REASONS_SHOWN = 5


@dataclass
class OtlpExportResult:
    """What one export brought; the counts are of this export's own spans."""

    spans: int = 0
    ignored: int = 0
    ingested: int = 0
    created: int = 0
    rejected: int = 0
    waiting: int = 0
    reasons: list[str] = field(default_factory=list)

    def message(self) -> str:
        """Say what was rejected and why, and what was ignored or waits; empty when all were stored."""
        parts = []
        if self.rejected:
            shown = "; ".join(self.reasons[:REASONS_SHOWN])
            more = f" (and {len(self.reasons) - REASONS_SHOWN} more)" if len(self.reasons) > REASONS_SHOWN else ""
            parts.append(f"{self.rejected} span(s) rejected: {shown}{more}")
        if self.waiting:
            parts.append(f"{self.waiting} SQL span(s) wait for their parent span, which holds the question")
        if self.ignored:
            parts.append(f"{self.ignored} span(s) carried no SQL and were ignored")
        return ". ".join(parts)


def otlp_mapping_get(*, client: str) -> OtlpMapping:
    """Return a client's mapping, or an unsaved one with the defaults; each process keeps it a few seconds."""
    key = otlp_mapping_cache_key(client)
    mapping = cache.get(key)
    if mapping is None:
        mapping = OtlpMapping.objects.filter(client=client).first() or OtlpMapping(client=client)
        cache.set(key, mapping, MAPPING_CACHE_SECONDS)
    return mapping


def query_row(ready: ReadyQuery) -> dict:
    """Return the ingestion API's row for a SQL span whose question is known."""
    span = ready.span
    metadata = {"otlp": {"trace_id": span.trace_id, "span_id": span.span_id, "span": span.name}}
    if span.service:
        metadata["otlp"]["service"] = span.service
    if ready.generator_model:
        metadata["generator_model"] = ready.generator_model
    row = {
        "external_id": f"otlp-{span.trace_id}-{span.span_id}",
        "question": ready.question,
        "sql": span.sql,
        "warehouse": span.warehouse,
        "metadata": metadata,
    }
    if span.dialect:
        row["dialect"] = span.dialect
    if ready.attempts:
        row["attempts"] = ready.attempts
    return row


def _error_text(errors) -> str:
    """Flatten a serializer's errors into one line: `field: message; ...`."""
    if isinstance(errors, dict):
        return "; ".join(f"{name}: {_error_text(value)}" for name, value in errors.items())
    if isinstance(errors, list):
        return " ".join(_error_text(value) for value in errors)
    return str(errors)


def rows_validate(ready: list[ReadyQuery]) -> tuple[list[dict], list[SpanFacts], list[tuple[SpanFacts, str]], dict]:
    """Validate each span's row as the API would; return the clean rows, their spans, the rejected, the warehouses."""
    clean, spans, rejected = [], [], []
    warehouses = warehouse_map_by_name(names={r.span.warehouse for r in ready if r.span.warehouse})
    for entry in ready:
        span = entry.span
        if not span.warehouse:
            rejected.append((span, f"span {span.span_id} names no warehouse (set db.namespace or a default)"))
            continue
        if span.warehouse not in warehouses:
            rejected.append((span, f"span {span.span_id}: unknown warehouse {span.warehouse!r}"))
            continue
        checked, errors = query_row_validate(query_row(entry))
        if errors:
            rejected.append((span, f"span {span.span_id}: {_error_text(errors)}"))
        else:
            clean.append(checked)
            spans.append(span)
    return clean, spans, rejected, warehouses


def _held_spans(client: str, trace_ids: set[str], expired_before) -> dict[tuple[str, str], OtlpHeldSpan]:
    """Load the client's held spans of these traces, and of traces with a span past its wait."""
    expired = set(
        OtlpHeldSpan.objects.filter(client=client, received_at__lt=expired_before)
        .values_list("trace_id", flat=True)
        .order_by("received_at")[:EXPIRED_PER_EXPORT]
    )
    wanted = trace_ids | expired
    if not wanted:
        return {}
    rows = OtlpHeldSpan.objects.filter(client=client, trace_id__in=wanted)
    return {(row.trace_id, row.span_id): row for row in rows}


def _held_update(client: str, held: dict, keep: list[SpanFacts]) -> None:
    """Release held spans that were decided, and hold the new ones that must wait."""
    keep_keys = {span.key for span in keep}
    released = [row.pk for key, row in held.items() if key not in keep_keys]
    if released:
        OtlpHeldSpan.objects.filter(pk__in=released).delete()
    fresh = [
        OtlpHeldSpan(
            client=client,
            trace_id=span.trace_id,
            span_id=span.span_id,
            facts=span.as_json(),
            received_at=datetime.fromtimestamp(span.received_at, tz=UTC),
        )
        for span in keep
        if span.key not in held
    ]
    if fresh:
        OtlpHeldSpan.objects.bulk_create(fresh, ignore_conflicts=True)


def _counts_add(client: str, *, spans: int, ignored: int, rejected: int, ingested: int, last_rejection: str) -> None:
    changes = {
        "exports": F("exports") + 1,
        "spans_received": F("spans_received") + spans,
        "spans_ignored": F("spans_ignored") + ignored,
        "spans_rejected": F("spans_rejected") + rejected,
        "queries_ingested": F("queries_ingested") + ingested,
        "last_export_at": timezone.now(),
    }
    if last_rejection:
        changes["last_rejection"] = last_rejection
    if not OtlpExportCounts.objects.filter(client=client).update(**changes):
        OtlpExportCounts.objects.get_or_create(client=client)
        OtlpExportCounts.objects.filter(client=client).update(**changes)


def otlp_export_ingest(*, export, token: ApiToken) -> OtlpExportResult:
    """Store the SQL spans of a decoded ExportTraceServiceRequest as the token's client's live queries."""
    client = token.client
    mapping = otlp_mapping_get(client=client)
    now = timezone.now()
    new = export_span_facts(export, mapping=mapping, received_at=now.timestamp())
    held = _held_spans(client, {span.trace_id for span in new}, now - timedelta(seconds=mapping.parent_wait_seconds))
    spans = {key: SpanFacts.from_json(row.facts) for key, row in held.items()}
    for span in new:
        earlier = spans.get(span.key)
        if earlier is not None:
            span.received_at = earlier.received_at  # a re-exported span waits from its first arrival
        spans[span.key] = span
    resolution = traces_resolve(
        list(spans.values()),
        now=now.timestamp(),
        wait_s=mapping.parent_wait_seconds,
        use_genai=mapping.question_from_genai,
        attribute=(mapping.question_attributes or ["a question attribute"])[0],
    )
    rows, stored_spans, invalid, warehouses = rows_validate(resolution.ready)
    ingested = live_queries_ingest(rows=rows, token=token, warehouses=warehouses) if rows else []
    request_attempts_store(rows=rows, ingested=ingested)
    _held_update(client, held, resolution.keep)
    rejected = resolution.rejected + invalid
    in_export = {span.key for span in new}
    result = OtlpExportResult(spans=len(new), ignored=sum(1 for span in new if span.kind != SQL))
    for span, entry in zip(stored_spans, ingested, strict=True):
        if span.key in in_export:
            result.ingested += 1
            result.created += entry.created
    for span, reason in rejected:
        if span.key in in_export:
            result.rejected += 1
            result.reasons.append(reason)
    result.waiting = sum(1 for span in resolution.keep if span.kind == SQL and span.key in in_export)
    _counts_add(
        client,
        spans=len(new),
        ignored=result.ignored,
        rejected=len(rejected),
        ingested=len(ingested),
        last_rejection=rejected[-1][1] if rejected else "",
    )
    return result
