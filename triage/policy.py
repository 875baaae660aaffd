"""Triage policy versions: the one in force, and publishing the next one."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from judges.models import Backend
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

    Raises ValidationError (on `k`) for a k-of-n rule with k above its number of judges.
    """
    base = policy_current()
    values = {field: getattr(base, field) for field in POLICY_FIELDS} if base else {}
    values.update(changes)
    if judge_versions is None and base is not None:
        judge_versions = list(base.judge_versions.all())
    if problem := replay_judges_refusal(judge_versions or []):
        raise ValidationError({"judge_versions": problem})
    number = (TriagePolicy.objects.aggregate(m=Max("version"))["m"] or 0) + 1
    judge_versions = list(judge_versions or [])
    policy = TriagePolicy(version=number, created_by=created_by, note=note, **values)
    policy.pending_judge_count = len(judge_versions)  # clean() refuses a k these judges cannot reach
    policy.full_clean()
    policy.save()
    policy.judge_versions.set(judge_versions)
    return policy


def replay_judges_refusal(judge_versions) -> str:
    """Say why a triage policy cannot have these judge versions: replay judges ("" when none).

    A replay judge only holds verdicts imported from elsewhere; on a live query it has
    nothing to answer, so every live query would fail on it.
    """
    replayed = sorted(str(version) for version in judge_versions if version.backend == Backend.REPLAY)
    if not replayed:
        return ""
    return f"a replay judge holds imported verdicts only and cannot judge live queries: {', '.join(replayed)}"
