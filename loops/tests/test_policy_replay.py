"""Policy replay: seed 001's fixture matrix, the other policies, the attempts file and the verifier mapping."""

import json

import pytest

from loops import policy_replay
from loops.policy_replay import Attempt, ReplayInputError, policy_named, replay, replay_summary
from probes.verifier import verify

WEIGHTS = {"cheap": 1.0, "strong": 8.0}
SYNTAX, UNKNOWN, TRANSPORT, TIMEOUT, EMPTY = "syntax", "unknown_obj", "transport", "timeout", "empty_result"

# Seed 001's CASES: name, cheap failures, strong failures, expected outcome/tier, and the spend
# its text states (2 for repair once, 10 escalated late, 9 escalated early) or implies.
SEED_001_CASES = [
    ("repair once", [SYNTAX, None], [], "accepted", "cheap", 2),
    ("repair then climb", [SYNTAX, SYNTAX], [None], "accepted", "strong", 10),
    ("catalog miss", [UNKNOWN], [None], "accepted", "strong", 9),
    ("throttled", [TRANSPORT], [], "stop_backoff", "cheap", 1),
    ("slow query", [TIMEOUT], [], "stop", "cheap", 1),
    ("empty result", [EMPTY], [None], "accepted", "strong", 9),
]


def jsonl_for(cases) -> list[str]:
    """Write the cases as the replay file: one line per recorded attempt, one token each."""
    lines = []
    for name, cheap, strong, *_ in cases:
        for tier, failures in (("cheap", cheap), ("strong", strong)):
            for number, failure in enumerate(failures, start=1):
                row = {"request_id": name, "tier": tier, "attempt": number, "failure_class": failure, "tokens": 1}
                lines.append(json.dumps(row))
    return lines


@pytest.mark.parametrize("case", SEED_001_CASES, ids=[case[0] for case in SEED_001_CASES])
def test_seed_001_fixture_case_reproduces_its_outcome_and_spend(case):
    name, cheap, strong, outcome, tier, spent = case
    records = policy_replay.read_attempts_jsonl(jsonl_for([case]))
    (result,) = replay(records, policy_named("seed001"), WEIGHTS)
    assert (result.request_id, result.outcome, result.tier, result.spent) == (name, outcome, tier, spent)


def test_the_fixture_matrix_summary_counts_outcomes_and_prices_each_accepted_answer():
    records = policy_replay.read_attempts_jsonl(jsonl_for(SEED_001_CASES))
    policy = policy_named("seed001")
    summary = replay_summary(replay(records, policy, WEIGHTS), policy, WEIGHTS)
    assert summary["counts"] == {"accepted": 4, "stop": 1, "stop_backoff": 1, "escalate": 0, "unrecorded": 0}
    assert summary["accepted_by_tier"] == {"cheap": 1, "strong": 3}
    assert summary["spend_per_accepted"] == pytest.approx((2 + 10 + 9 + 1 + 1 + 9) / 4)
    assert [r["request_id"] for r in summary["requests"]] == [case[0] for case in SEED_001_CASES]
    assert set(summary["requests"][0]) == {"request_id", "outcome", "tier", "spent"}
    ledger = summary["ledgers"]["repair then climb"]
    assert [(e["tier"], e["attempt"], e["failure_class"], e["action"]) for e in ledger] == [
        ("cheap", 1, "syntax", "repair"),
        ("cheap", 2, "syntax", "escalate"),
        ("strong", 1, None, "accept"),
    ]


def test_tokens_are_weighted_by_tier():
    records = {"r": {"cheap": [Attempt("cheap", UNKNOWN, 120)], "strong": [Attempt("strong", None, 300)]}}
    (result,) = replay(records, policy_named("seed001"), {"cheap": 1.0, "strong": 8.0})
    assert result.spent == 120 + 8 * 300


def test_a_request_whose_record_runs_out_is_unrecorded_at_the_tier_asked_for():
    records = {"r": {"cheap": [Attempt("cheap", UNKNOWN, 1)]}}
    (result,) = replay(records, policy_named("seed001"), WEIGHTS)
    assert (result.outcome, result.tier, result.spent) == ("unrecorded", "strong", 1)


def test_an_empty_result_at_the_strong_tier_has_nowhere_to_climb():
    records = {"r": {"cheap": [Attempt("cheap", EMPTY, 1)], "strong": [Attempt("strong", UNKNOWN, 1)]}}
    (result,) = replay(records, policy_named("seed001"), WEIGHTS)
    assert (result.outcome, result.tier, result.spent) == ("escalate", "strong", 9)


def test_retry_n_regardless_repairs_even_a_rate_limit_then_climbs():
    records = {
        "r": {
            "cheap": [Attempt("cheap", TRANSPORT, 1), Attempt("cheap", UNKNOWN, 1), Attempt("cheap", TIMEOUT, 1)],
            "strong": [Attempt("strong", None, 1)],
        }
    }
    (two,) = replay(records, policy_named("retry2"), WEIGHTS)
    assert (two.outcome, two.tier, two.spent) == ("accepted", "strong", 11)
    (one,) = replay(records, policy_named("retry-1"), WEIGHTS)
    assert [e.failure_class for e in one.ledger.entries] == [TRANSPORT, UNKNOWN, None]
    assert (one.outcome, one.spent) == ("accepted", 10)


def test_escalate_on_first_failure_pays_for_the_strong_tier_at_once():
    records = policy_replay.read_attempts_jsonl(jsonl_for(SEED_001_CASES))
    results = {r.request_id: r for r in replay(records, policy_named("escalate_first"), WEIGHTS)}
    assert (results["repair once"].outcome, results["repair once"].tier) == ("unrecorded", "strong")
    assert (results["catalog miss"].outcome, results["catalog miss"].spent) == ("accepted", 9)
    assert results["throttled"].outcome == "unrecorded"  # it would have climbed; the record has no strong draft


def test_a_user_table_decides_by_class_and_counts_its_own_repairs():
    policy = policy_replay.policy_from_table(
        {"name": "patient", "actions": {"syntax": "repair", "unknown_object": "repair"}, "max_same_tier": 2}
    )
    assert policy.actions["unknown_obj"] == "repair" and policy.actions["timeout"] == "stop"
    records = {"r": {"cheap": [Attempt("cheap", UNKNOWN, 1), Attempt("cheap", SYNTAX, 1), Attempt("cheap", None, 1)]}}
    (result,) = replay(records, policy, WEIGHTS)
    assert (result.outcome, result.tier, result.spent) == ("accepted", "cheap", 3)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"actions": {"syntax": "pray"}}, "unknown action"),
        ({"actions": {"gremlins": "stop"}}, "unknown failure_class"),
        ({"actions": {}, "max_same_tier": -1}, "max_same_tier"),
    ],
)
def test_a_bad_user_table_is_refused_saying_why(table, message):
    with pytest.raises(ReplayInputError, match=message):
        policy_replay.policy_from_table(table)


def test_an_unknown_policy_name_is_refused():
    with pytest.raises(ReplayInputError, match="unknown policy"):
        policy_named("yolo")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 2: not JSON"),
        ('{"request_id": "a", "tier": "mid", "failure_class": null}', "line 2: tier"),
        ('{"request_id": "a", "tier": "cheap", "failure_class": "bad"}', "line 2: unknown failure_class"),
        ('{"request_id": "a", "tier": "cheap", "attempt": 0, "failure_class": null}', "line 2: attempt"),
        ('{"request_id": "a", "tier": "cheap", "failure_class": null, "tokens": -3}', "line 2: tokens"),
        ('{"tier": "cheap", "failure_class": null}', "line 2: request_id"),
    ],
)
def test_a_bad_attempts_line_is_refused_naming_the_line(line, message):
    good = '{"request_id": "ok", "tier": "cheap", "attempt": 1, "failure_class": null, "tokens": 1}'
    with pytest.raises(ReplayInputError, match=message):
        policy_replay.read_attempts_jsonl([good, line])


def test_an_attempt_number_recorded_twice_is_refused():
    line = '{"request_id": "a", "tier": "cheap", "attempt": 1, "failure_class": null}'
    with pytest.raises(ReplayInputError, match="twice"):
        policy_replay.read_attempts_jsonl([line, line])


def test_attempts_are_replayed_in_attempt_order_not_file_order():
    lines = [
        '{"request_id": "a", "tier": "cheap", "attempt": 2, "failure_class": null, "tokens": 1}',
        '{"request_id": "a", "tier": "cheap", "attempt": 1, "failure_class": "syntax", "tokens": 1}',
    ]
    (result,) = replay(policy_replay.read_attempts_jsonl(lines), policy_named("seed001"), WEIGHTS)
    assert (result.outcome, result.tier, result.spent) == ("accepted", "cheap", 2)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("cheap=1,strong=8", {"cheap": 1.0, "strong": 8.0}), ("strong=20", {"cheap": 1.0, "strong": 20.0})],
)
def test_weights_parse(text, expected):
    assert policy_replay.parse_weights(text) == expected


@pytest.mark.parametrize("text", ["cheap", "cheap=x", "cheap=-1", "=3"])
def test_bad_weights_are_refused(text):
    with pytest.raises(ReplayInputError, match="--weights"):
        policy_replay.parse_weights(text)


CATALOGUE = {
    "dialect": "sqlite",
    "tables": {"orders": {"columns": [{"name": "id", "type": "INTEGER"}, {"name": "total", "type": "REAL"}]}},
}


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT total FROM orders", None),
        ("SELECT customer_email FROM orders", "unknown_obj"),
        ("SELECT FROM WHERE", "syntax"),
        ("DELETE FROM orders", "dialect"),
    ],
)
def test_the_verifiers_findings_map_onto_seed_001_classes(sql, expected):
    result = verify(sql, CATALOGUE)
    assert policy_replay.failure_class_from_verifier(result) == expected
    assert policy_replay.failure_class_from_verifier(result.as_dict()) == expected


def test_a_verifier_transport_fault_maps_to_transport():
    stored = {"passed": False, "failure_class": "transport", "message": "warehouse unreachable"}
    assert policy_replay.failure_class_from_verifier(stored) == "transport"


@pytest.mark.parametrize(
    ("name", "expected", "repairs"),
    [
        ("retry", "retry2", 2),
        ("retry_3_times", "retry3", 3),
        ("escalate", "escalate_first", 0),
        ("default", "seed001", 1),
    ],
)
def test_built_in_policies_answer_to_their_plain_names(name, expected, repairs):
    policy = policy_named(name)
    assert (policy.name, policy.max_same_tier) == (expected, repairs)
