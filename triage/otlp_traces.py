"""Decide each SQL span of a set of traces: a query now, rejected, or held until its parent arrives.

A SQL span's question is the mapping's question attribute on the nearest span of its chain
(itself, its parent, ...) that carries it or, failing that, the nearest GenAI user message.
Its attempts are its child spans that carry the attempt prefix, in the order they started.
A batch exporter sends spans as they end, children first, so the parent that holds the
question may come in a later export: the span waits for it (its attempts and the chain's
links wait with it) until the client's wait has passed. Pure: no database.
"""

from dataclasses import dataclass, field

from triage.otlp_spans import ATTEMPT, SQL, SpanFacts

NO_QUESTION = (
    "span {span} has no question: set {attribute} on it (or on a span above it), "
    "or export the GenAI span above it that holds the user's message"
)


@dataclass
class ReadyQuery:
    span: SpanFacts
    question: str
    attempts: list[dict]
    generator_model: str | None


@dataclass
class Resolution:
    ready: list[ReadyQuery] = field(default_factory=list)
    rejected: list[tuple[SpanFacts, str]] = field(default_factory=list)
    keep: list[SpanFacts] = field(default_factory=list)  # to hold after this export
    dropped_attempts: int = 0


@dataclass
class Chain:
    """What a SQL span's ancestors in hand say: its question, its model, and whether one is missing."""

    question: str | None = None
    model: str | None = None
    links: list[SpanFacts] = field(default_factory=list)
    incomplete: bool = False


def chain_of(span: SpanFacts, by_id: dict[str, SpanFacts], use_genai: bool) -> Chain:
    """Walk up from a span through the spans in hand, for its question and model.

    The question attribute, on the nearest span carrying it, beats any GenAI message: an
    application that sets it means it. Without one, the nearest GenAI user message is the
    question. Only a span with neither, whose chain stops at a parent not yet arrived, waits.
    """
    chain, current, seen, message = Chain(), span, {span.span_id}, None
    while True:
        chain.model = chain.model or current.genai_model
        if current.question:
            chain.question = current.question
            return chain
        message = message or (current.genai_question if use_genai else None)
        parent = by_id.get(current.parent_id) if current.parent_id else None
        if parent is None or parent.span_id in seen:
            chain.incomplete = bool(current.parent_id) and parent is None and message is None
            chain.question = message
            return chain
        seen.add(parent.span_id)
        chain.links.append(parent)
        current = parent


def _is_expired(span: SpanFacts, now: float, wait_s: float) -> bool:
    return now - span.received_at >= wait_s


def _resolve_trace(spans: list[SpanFacts], result: Resolution, *, now, wait_s, use_genai, attribute) -> None:
    by_id = {span.span_id: span for span in spans}
    waiting, decided = set(), set()
    keep_links = {}
    for span in (s for s in spans if s.kind == SQL):
        if span.problem:
            result.rejected.append((span, f"span {span.span_id}: {span.problem}"))
            decided.add(span.span_id)
            continue
        chain = chain_of(span, by_id, use_genai)
        if chain.question:
            attempts = sorted((s for s in spans if s.kind == ATTEMPT and s.parent_id == span.span_id), key=_start)
            result.ready.append(ReadyQuery(span, chain.question, [a.attempt for a in attempts], chain.model))
            decided.add(span.span_id)
        elif chain.incomplete and not _is_expired(span, now, wait_s):
            waiting.add(span.span_id)
            result.keep.append(span)
            keep_links.update({link.span_id: link for link in chain.links})
        else:
            result.rejected.append((span, NO_QUESTION.format(span=span.span_id, attribute=attribute)))
            decided.add(span.span_id)
    result.keep.extend(keep_links.values())
    for attempt in (s for s in spans if s.kind == ATTEMPT):
        parent = by_id.get(attempt.parent_id)
        if parent is not None and parent.span_id in decided:
            continue  # taken with its query (or dropped with its rejected one)
        if (parent is None and not _is_expired(attempt, now, wait_s)) or (parent and parent.span_id in waiting):
            result.keep.append(attempt)
        else:
            result.dropped_attempts += 1


def _start(span: SpanFacts) -> tuple[int, str]:
    return span.start_ns, span.span_id


def traces_resolve(
    spans: list[SpanFacts], *, now: float, wait_s: float, use_genai: bool, attribute: str = "docket.question"
) -> Resolution:
    """Decide the SQL spans of these spans' traces; say which spans to hold for a later export.

    `spans` holds one SpanFacts per span (those of this export and those held from earlier
    ones), each with the time it was first received.
    """
    by_trace: dict[str, list[SpanFacts]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    result = Resolution()
    for trace_spans in by_trace.values():
        _resolve_trace(trace_spans, result, now=now, wait_s=wait_s, use_genai=use_genai, attribute=attribute)
    return result
