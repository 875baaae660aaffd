"""The pipeline's flagging logic: a pure function over check results and the policy rule."""

import pytest

from probes.models import ProbeOutcome, ProbeRun
from probes.outcome import Outcome
from triage.decision import FlagRuleSpec, JudgeVote, ProbeFinding, audit_draw, decide


def votes(*decisions, guess=""):
    return [JudgeVote(i + 1, d, guess if d == "reject" else "") for i, d in enumerate(decisions)]


ANY = FlagRuleSpec("any")
MAJORITY = FlagRuleSpec("majority")


def test_any_rule_flags_on_a_single_reject():
    assert decide(verifier=None, votes=votes("accept", "reject", "accept"), probes=[], rule=ANY).flagged


def test_all_accepts_pass():
    decision = decide(verifier=None, votes=votes("accept", "accept"), probes=[], rule=ANY)
    assert not decision.flagged and not decision.unjudged


def test_a_judge_fault_never_flags_by_itself():
    decision = decide(verifier=None, votes=votes("error", "accept"), probes=[], rule=ANY)
    assert not decision.flagged
    assert decision.judges_answered == 1


def test_every_judge_erroring_makes_the_query_unjudged_not_passed():
    decision = decide(verifier=None, votes=votes("error", "error"), probes=[], rule=ANY)
    assert decision.unjudged and not decision.flagged


def test_no_configured_judges_is_not_unjudged():
    assert not decide(verifier=None, votes=[], probes=[], rule=ANY).unjudged


def test_majority_counts_only_answering_judges():
    assert decide(verifier=None, votes=votes("reject", "reject", "accept"), probes=[], rule=MAJORITY).flagged
    assert not decide(verifier=None, votes=votes("reject", "accept"), probes=[], rule=MAJORITY).flagged
    # Two faults and one reject: the one judge that answered rejected.
    assert decide(verifier=None, votes=votes("reject", "error", "error"), probes=[], rule=MAJORITY).flagged


@pytest.mark.parametrize(("k", "expected"), [(1, True), (2, True), (3, False)])
def test_k_of_n_needs_k_rejects(k, expected):
    rule = FlagRuleSpec("k_of_n", k=k)
    assert decide(verifier=None, votes=votes("reject", "reject", "accept"), probes=[], rule=rule).flagged is expected


def test_verifier_failure_flags_when_the_policy_says_so():
    failed = Outcome.failed("unknown_object", "no column orders.totl")
    decision = decide(verifier=failed, votes=votes("accept"), probes=[], rule=ANY)
    assert decision.flagged and decision.verifier_failed
    assert decision.error_class_guess == "unknown_object"
    quiet = FlagRuleSpec("any", flag_on_verifier_failure=False)
    assert not decide(verifier=failed, votes=votes("accept"), probes=[], rule=quiet).flagged


@pytest.mark.parametrize("rule", [ANY, MAJORITY, FlagRuleSpec("verifier_only"), FlagRuleSpec("k_of_n", k=1)])
def test_a_verifier_fault_never_flags_and_says_the_verifier_could_not_check(rule):
    fault = Outcome.fault("transport", "the sqlite warehouse file does not exist")
    decision = decide(verifier=fault, votes=votes("accept", "accept"), probes=[], rule=rule)
    assert not decision.flagged and not decision.verifier_failed
    assert decision.notes == ["verifier could not check: transport: the sqlite warehouse file does not exist"]
    assert decision.priority == 0


def test_a_verifier_fault_with_no_judge_to_answer_is_unjudged_not_passed():
    fault = Outcome.fault("transport", "the sqlite warehouse file does not exist")
    decision = decide(verifier=fault, votes=[], probes=[], rule=FlagRuleSpec("verifier_only"))
    assert decision.unjudged and not decision.flagged
    assert not decide(verifier=fault, votes=votes("accept"), probes=[], rule=ANY).unjudged


def test_with_a_verifier_fault_the_flag_comes_from_the_judges_alone():
    fault = Outcome.fault("privilege", "permission denied for table orders")
    flagged = decide(verifier=fault, votes=votes("reject", "accept"), probes=[], rule=ANY)
    assert flagged.flagged and flagged.reasons == ["1 of 2 judges rejected (any)"]
    assert flagged.error_class_guess == "" and flagged.priority == 1
    assert decide(verifier=fault, votes=votes("reject", "accept"), probes=[], rule=MAJORITY).flagged is False


def test_an_outcome_cannot_be_read_as_a_boolean():
    with pytest.raises(TypeError, match="match on .kind"):
        bool(Outcome.fault("transport", "down"))


def test_verifier_only_rule_ignores_judges():
    rule = FlagRuleSpec("verifier_only")
    assert not decide(verifier=Outcome.passed(), votes=votes("reject", "reject"), probes=[], rule=rule).flagged


def test_a_confirmed_probe_flags_and_wins_the_error_class_guess():
    probe = ProbeFinding(
        "fanout_detector",
        Outcome.failed("join_fanout", "order_items fans out order_id: 1,214 rows for 412 distinct keys"),
    )
    decision = decide(verifier=None, votes=votes("accept", "reject", guess="misread_intent"), probes=[probe], rule=ANY)
    assert decision.flagged and decision.probe_confirmed
    assert decision.error_class_guess == "join_fanout"
    assert any("1,214 rows" in reason for reason in decision.reasons)


@pytest.mark.parametrize("outcome", [ProbeOutcome.REFUSED, ProbeOutcome.ERROR, ProbeOutcome.REFUTED])
def test_a_probe_that_does_not_confirm_fails_open(outcome):
    run = ProbeRun(outcome=outcome, message="probe refused: not a fan-out probe")
    decision = decide(verifier=None, votes=votes("accept"), probes=[ProbeFinding("x", run.check_outcome)], rule=ANY)
    assert not decision.flagged and not decision.probe_confirmed


def test_error_class_guess_is_the_rejecting_judges_most_common():
    vs = [
        JudgeVote(1, "reject", "missing_filter"),
        JudgeVote(2, "reject", "missing_filter"),
        JudgeVote(3, "reject", "x"),
    ]
    decision = decide(verifier=None, votes=vs, probes=[], rule=ANY)
    assert decision.error_class_guess == "missing_filter"
    assert decision.judges_agreeing == 3 and decision.rejecting_judge_ids == [1, 2, 3]


def test_priority_orders_probe_then_agreement():
    confirmed = decide(
        verifier=None, votes=votes("reject"), probes=[ProbeFinding("f", Outcome.failed("join_fanout"))], rule=ANY
    )
    three = decide(verifier=None, votes=votes("reject", "reject", "reject"), probes=[], rule=ANY)
    one = decide(verifier=None, votes=votes("reject"), probes=[], rule=ANY)
    assert confirmed.priority > three.priority > one.priority


def test_audit_draw_is_deterministic_and_close_to_its_share():
    keys = [str(i) for i in range(20_000)]
    drawn = [audit_draw(key=k, share=0.1) for k in keys]
    assert drawn == [audit_draw(key=k, share=0.1) for k in keys]
    assert abs(sum(drawn) / len(keys) - 0.1) < 0.01
    assert not any(audit_draw(key=k, share=0.0) for k in keys[:100])
