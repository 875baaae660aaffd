"""Deciding SQL spans across exports: question chains, attempts, and what waits how long (pure)."""

from triage.otlp_spans import ATTEMPT, OTHER, SQL, SpanFacts
from triage.otlp_traces import traces_resolve

NOW = 1_000_000.0


def span(span_id, kind=OTHER, parent="", received=NOW, **facts):
    sql = "SELECT 1" if kind == SQL else None
    return SpanFacts(
        trace_id="t" * 32, span_id=span_id, parent_id=parent, kind=kind, received_at=received, sql=sql, **facts
    )


def resolve(spans, wait_s=60.0):
    return traces_resolve(spans, now=NOW, wait_s=wait_s, use_genai=True)


def test_the_nearest_question_attribute_up_the_chain_wins_over_any_genai_message():
    spans = [
        span("root", question="Outer?"),
        span("agent", parent="root", genai_question="Agent?", question="Attribute?", genai_model="m"),
        span("tool", parent="agent"),
        span("sql", SQL, parent="tool"),
    ]
    (ready,) = resolve(spans).ready
    assert (ready.question, ready.generator_model) == ("Attribute?", "m")


def test_without_an_attribute_the_nearest_genai_message_is_the_question_and_nothing_waits():
    spans = [span("chat", parent="root-not-yet-here", genai_question="Outer message?"), span("agent", parent="chat")]
    spans += [span("llm", parent="agent", genai_question="Inner message?"), span("sql", SQL, parent="llm")]
    result = resolve(spans)
    assert [r.question for r in result.ready] == ["Inner message?"] and result.keep == []


def test_a_question_on_the_span_itself_does_not_wait_for_the_model_above():
    result = resolve([span("sql", SQL, parent="missing", question="Own?")])
    assert [r.question for r in result.ready] == ["Own?"] and result.keep == []


def test_a_span_missing_its_parent_waits_with_its_chain_and_attempts():
    spans = [
        span("tool", parent="agent-not-yet-here"),
        span("sql", SQL, parent="tool"),
        span("a1", ATTEMPT, parent="sql", attempt={"tier": "small"}),
        span("unrelated"),
    ]
    result = resolve(spans)
    assert result.ready == [] and result.rejected == []
    assert {s.span_id for s in result.keep} == {"tool", "sql", "a1"}


def test_a_span_past_its_wait_is_rejected_and_its_attempts_dropped():
    spans = [
        span("sql", SQL, parent="never", received=NOW - 61),
        span("a1", ATTEMPT, parent="sql", received=NOW - 61, attempt={"tier": "small"}),
    ]
    result = resolve(spans)
    ((rejected, reason),) = result.rejected
    assert rejected.span_id == "sql" and "has no question" in reason
    assert result.keep == [] and result.dropped_attempts == 0, "an attempt goes with its decided query"


def test_a_root_span_without_a_question_is_rejected_at_once():
    ((rejected, _),) = resolve([span("sql", SQL)]).rejected
    assert rejected.span_id == "sql"


def test_an_attempt_waits_for_its_sql_span_then_joins_it_in_start_order():
    early = resolve([span("a2", ATTEMPT, parent="sql", start_ns=2, attempt={"tier": "large"})])
    assert [s.span_id for s in early.keep] == ["a2"]
    later = resolve(
        [
            *early.keep,
            span("a1", ATTEMPT, parent="sql", start_ns=1, attempt={"tier": "small"}),
            span("sql", SQL, question="Q?"),
        ]
    )
    (ready,) = later.ready
    assert [a["tier"] for a in ready.attempts] == ["small", "large"] and later.keep == []


def test_an_attempt_whose_parent_is_no_sql_span_or_never_comes_is_dropped():
    result = resolve(
        [
            span("loop"),
            span("a1", ATTEMPT, parent="loop", attempt={"tier": "small"}),
            span("a2", ATTEMPT, parent="gone", received=NOW - 61, attempt={"tier": "small"}),
        ]
    )
    assert result.dropped_attempts == 2 and result.keep == []


def test_without_genai_fallback_only_the_attribute_is_a_question():
    spans = [span("chat", genai_question="Message?"), span("sql", SQL, parent="chat")]
    result = traces_resolve(spans, now=NOW, wait_s=60, use_genai=False)
    assert result.ready == [] and len(result.rejected) == 1


def test_a_parent_cycle_ends_the_walk():
    spans = [span("a", parent="b"), span("b", parent="a"), span("sql", SQL, parent="a")]
    assert len(resolve(spans).rejected) == 1
