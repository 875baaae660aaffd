"""Triage policy versions: the one in force, and publishing the next one."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from judges.backends import live_judging_problem
from triage.models import TriagePolicy

POLICY_FIELDS = (
    "flag_rule",
    "k",
    "run_verifier",
    "flag_on_verifier_failure",
    "run_fanout_detector",
    "audit_share",
    "audit_scope",
    "sla_minutes",
    "queue_alert_minutes",
    "claim_timeout_minutes",
)


def policy_current() -> TriagePolicy | None:
    """The policy in force: the latest version (None before the first is published)."""
    return TriagePolicy.objects.order_by("-version").first()


@transaction.atomic
def policy_publish(*, changes: dict, judge_versions=None, created_by=None, note: str = "") -> TriagePolicy:
    """Publish a new policy version: the current one with `changes` applied.

    Raises ValidationError (on `k`) for a k-of-n rule with k above its number of judges, and (on
    `judge_versions`) for a judge that cannot judge live traffic.
    """
    base = policy_current()
    values = {field: getattr(base, field) for field in POLICY_FIELDS} if base else {}
    values.update(changes)
    if judge_versions is None and base is not None:
        judge_versions = list(base.judge_versions.all())
    if problem := live_judges_refusal(judge_versions or [], this_environment=False):
        raise ValidationError({"judge_versions": problem})
    number = (TriagePolicy.objects.aggregate(m=Max("version"))["m"] or 0) + 1
    judge_versions = list(judge_versions or [])
    policy = TriagePolicy(version=number, created_by=created_by, note=note, **values)
    policy.pending_judge_count = len(judge_versions)  # clean() refuses a k these judges cannot reach
    policy.full_clean()
    policy.save()
    policy.judge_versions.set(judge_versions)
    return policy


def live_judges_refusal(judge_versions, *, this_environment: bool = True) -> list[str]:
    """Say, one line per judge version, why a triage policy cannot have it (empty when all can judge live).

    A policy's judges judge every live query; one that cannot (`judges.backends.live_judging_problem`:
    a replay judge, a ladder without a rung, and here a refused config or a vendor key not set)
    would answer every query with an error, and a k-of-n or majority rule over it would flag less.
    The admin's form checks all of it; `policy_publish` (commands, the demo, tests) what holds
    in any environment.
    """
    return [
        f"{version} cannot judge live traffic: {problem}."
        for version in judge_versions
        if (problem := live_judging_problem(version, this_environment=this_environment))
    ]
