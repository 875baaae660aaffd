"""The policy preview re-decides stored checks with the pipeline's own `decide` (pure parts, hand-made rows)."""

from probes.outcome import Outcome
from triage.decision import FlagRuleSpec, JudgeVote, ProbeFinding
from triage.policy_preview import DraftPolicy, StoredChecks, policy_preview_build


def checks(live_id, votes, *, flagged_now, verifier=None, probes=()):
    return StoredChecks(
        live_id=live_id,
        question=f"q{live_id}",
        flagged_now=flagged_now,
        reasons_now=("stored reason",) if flagged_now else (),
        verifier=verifier,
        votes={pk: JudgeVote(pk, decision) for pk, decision in votes.items()},
        probes=tuple(probes),
    )


def draft(rule="any", k=1, judges=(1, 2), run_verifier=False, run_fanout_detector=False):
    return DraftPolicy(FlagRuleSpec(rule=rule, k=k), tuple(judges), run_verifier, run_fanout_detector)


ROWS = [
    checks(1, {1: "reject", 2: "accept"}, flagged_now=True),
    checks(2, {1: "reject", 2: "reject"}, flagged_now=True),
    checks(3, {1: "accept", 2: "accept"}, flagged_now=False),
    checks(4, {1: "error", 2: "reject"}, flagged_now=True),
    checks(5, {1: "accept"}, flagged_now=False),  # judge 2 was not live then
]


def test_the_same_policy_flags_what_it_flagged():
    preview = policy_preview_build(ROWS, draft())
    assert (preview.decided, preview.flagged_now, preview.would_flag) == (5, 3, 3)
    assert preview.newly_flagged_count == preview.no_longer_flagged_count == 0


def test_a_majority_unflags_the_split_votes_and_names_them_with_their_stored_reason():
    preview = policy_preview_build(ROWS, draft(rule="majority"))
    # Row 4: judge 1 errored, so one answering judge rejecting is a majority of one.
    assert (preview.would_flag, preview.no_longer_flagged_count) == (2, 1)
    assert preview.no_longer_flagged == [{"live_id": 1, "question": "q1", "reasons": ["stored reason"]}]


def test_a_judge_without_stored_verdicts_counts_as_not_run_and_is_reported():
    preview = policy_preview_build(ROWS, draft(judges=(1, 2, 7)))
    assert preview.missing_verdicts == {2: 1, 7: 5}


def test_probes_count_only_for_the_drafts_judges_and_detector_and_the_verifier_only_when_it_runs():
    confirmed = ProbeFinding("judge:9:0", Outcome.failed("join_fanout", "2x rows"))
    detector = ProbeFinding("fanout_detector", Outcome.failed("join_fanout", "3x rows"))
    failed = Outcome.failed("unknown_object", "no column x")
    rows = [
        checks(1, {1: "accept"}, flagged_now=True, probes=[confirmed]),
        checks(2, {1: "accept"}, flagged_now=False, probes=[detector]),
        checks(3, {1: "accept"}, flagged_now=False, verifier=failed),
        checks(4, {1: "accept"}, flagged_now=False),
    ]
    quiet = policy_preview_build(rows, draft(judges=(1,)))
    assert quiet.would_flag == 0 and quiet.no_longer_flagged_count == 1
    loud = policy_preview_build(rows, draft(judges=(1, 9), run_verifier=True, run_fanout_detector=True))
    assert loud.would_flag == 3 and loud.newly_flagged_count == 2
    assert loud.verifier_missing == 3  # the verifier's outcome is stored for one query only
    assert "verifier: unknown_object no column x" in loud.newly_flagged[1]["reasons"]
