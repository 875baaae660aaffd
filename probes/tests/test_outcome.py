"""The one outcome type: three kinds that cannot be confused, and the one reading of error codes."""

import pytest

from probes.guard import parse_sql
from probes.outcome import Outcome, OutcomeKind, error_code_outcome, parse_outcome


def test_each_kind_carries_only_its_own_detail():
    assert Outcome.failed("syntax", "x").as_dict() == {
        "outcome": "failed",
        "failure_class": "syntax",
        "cause": None,
        "message": "x",
    }
    assert Outcome.fault("transport", "down").as_dict()["failure_class"] is None
    with pytest.raises(ValueError, match="failure class"):
        Outcome(OutcomeKind.FAILED)
    with pytest.raises(ValueError, match="cause"):
        Outcome(OutcomeKind.FAULT)
    with pytest.raises(ValueError, match="failure class"):
        Outcome(OutcomeKind.FAULT, failure_class="timeout", cause="timeout")
    with pytest.raises(ValueError, match="failure class"):
        Outcome(OutcomeKind.PASSED, failure_class="syntax")


def test_an_outcome_refuses_to_be_read_as_true_or_false():
    for outcome in (Outcome.passed(), Outcome.failed("syntax"), Outcome.fault("transport")):
        with pytest.raises(TypeError):
            bool(outcome)


@pytest.mark.parametrize(
    ("code", "kind", "detail"),
    [
        ("syntax", OutcomeKind.FAILED, "syntax"),
        ("unknown_object", OutcomeKind.FAILED, "unknown_object"),
        ("dialect", OutcomeKind.FAILED, "dialect"),
        ("transport", OutcomeKind.FAULT, "transport"),
        ("timeout", OutcomeKind.FAULT, "timeout"),
        ("refused_by_database", OutcomeKind.FAULT, "privilege"),
        ("unsafe_role", OutcomeKind.FAULT, "unsafe_role"),
        ("limit", OutcomeKind.FAULT, "limit"),
        ("database_error", OutcomeKind.FAULT, "database_error"),
        (None, OutcomeKind.FAULT, "database_error"),
        ("a_code_added_later", OutcomeKind.FAULT, "a_code_added_later"),
    ],
)
def test_only_codes_known_to_mean_wrong_sql_are_failures(code, kind, detail):
    outcome = error_code_outcome(code, "message")
    assert outcome.kind is kind
    assert (outcome.failure_class or outcome.cause) == detail


def test_a_text_dockets_own_limits_refused_is_a_fault_not_a_syntax_error(settings):
    settings.WAREHOUSE_MAX_SQL_BYTES = 20
    outcome = parse_outcome(parse_sql("SELECT order_id FROM orders LIMIT 1", "sqlite"))
    assert (outcome.kind, outcome.cause) == (OutcomeKind.FAULT, "size_limit")
    settings.WAREHOUSE_MAX_SQL_BYTES = 65_536
    assert parse_outcome(parse_sql("SELECT FROM WHERE", "sqlite")).failure_class == "syntax"
    assert parse_outcome(parse_sql("SELECT 1", "sqlite")).kind is OutcomeKind.PASSED
