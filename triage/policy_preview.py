"""What a draft triage policy would have flagged over the last days: the stored checks re-decided.

Nothing is called: every live query decided in the window is decided again by the pipeline's
own pure function (`triage/decision.py` `decide`) from what was stored when it was judged —
the verifier's outcome (`LiveQuery.verifier_result`), the live verdicts of the draft's judges
(`Verdict`, run None) and the probe runs (`TriageProbe`). What the draft would need and nothing
stored (a judge that was not live then, a verifier that did not run) counts as not run, and the
preview says how often that happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from judges.models import JudgeVersion, Verdict
from probes.outcome import Outcome
from triage.decision import FlagRuleSpec, JudgeVote, ProbeFinding, decide
from triage.models import IngestStatus, LiveQuery, TriageProbe
from triage.pipeline import FANOUT_DETECTOR

PREVIEW_DAYS = 7
# The newest decided queries re-decided at most; beyond, the preview says it looked at these only.
PREVIEW_LIMIT = 20_000
EXAMPLES_SHOWN = 5
DECIDED = (IngestStatus.FLAGGED, IngestStatus.PASSED, IngestStatus.UNJUDGED)


@dataclass(frozen=True)
class DraftPolicy:
    """The parts of a policy a decision reads: the rule, the judges and which checks run."""

    rule: FlagRuleSpec
    judge_version_ids: tuple[int, ...]
    run_verifier: bool
    run_fanout_detector: bool


@dataclass(frozen=True)
class StoredChecks:
    """One decided live query and what its checks answered when it was judged."""

    live_id: int
    question: str
    flagged_now: bool
    reasons_now: tuple[str, ...]
    verifier: Outcome | None
    votes: dict[int, JudgeVote]
    probes: tuple[ProbeFinding, ...]


@dataclass
class PolicyPreview:
    days: int
    decided: int = 0
    flagged_now: int = 0
    would_flag: int = 0
    newly_flagged: list[dict] = field(default_factory=list)
    no_longer_flagged: list[dict] = field(default_factory=list)
    newly_flagged_count: int = 0
    no_longer_flagged_count: int = 0
    # {judge version id: queries with no stored live verdict of it}: counted as not run.
    missing_verdicts: dict[int, int] = field(default_factory=dict)
    missing_named: list[tuple[str, int]] = field(default_factory=list)  # the same, by judge version name
    verifier_missing: int = 0
    limited_to: int | None = None


def checks_redecide(checks: StoredChecks, draft: DraftPolicy):
    """Decide one query again under the draft, from its stored checks only (pure)."""
    verifier = checks.verifier if draft.run_verifier else None
    votes = [checks.votes[pk] for pk in draft.judge_version_ids if pk in checks.votes]
    judges = {str(pk) for pk in draft.judge_version_ids}
    probes = [
        probe
        for probe in checks.probes
        if (probe.source == FANOUT_DETECTOR and draft.run_fanout_detector)
        or (probe.source.startswith("judge:") and probe.source.split(":")[1] in judges)
    ]
    return decide(verifier=verifier, votes=votes, probes=probes, rule=draft.rule)


def _example(checks: StoredChecks, reasons) -> dict:
    return {"live_id": checks.live_id, "question": checks.question, "reasons": list(reasons)}


def policy_preview_build(rows: list[StoredChecks], draft: DraftPolicy, *, days: int = PREVIEW_DAYS) -> PolicyPreview:
    """Count flagged now against flagged under the draft, with a few examples of each change (pure)."""
    preview = PolicyPreview(days=days, decided=len(rows))
    missing = dict.fromkeys(draft.judge_version_ids, 0)
    for checks in rows:
        decision = checks_redecide(checks, draft)
        preview.flagged_now += checks.flagged_now
        preview.would_flag += decision.flagged
        for pk in draft.judge_version_ids:
            missing[pk] += pk not in checks.votes
        preview.verifier_missing += draft.run_verifier and checks.verifier is None
        if decision.flagged and not checks.flagged_now:
            preview.newly_flagged_count += 1
            if len(preview.newly_flagged) < EXAMPLES_SHOWN:
                preview.newly_flagged.append(_example(checks, decision.reasons))
        elif checks.flagged_now and not decision.flagged:
            preview.no_longer_flagged_count += 1
            if len(preview.no_longer_flagged) < EXAMPLES_SHOWN:
                preview.no_longer_flagged.append(_example(checks, checks.reasons_now))
    preview.missing_verdicts = {pk: count for pk, count in missing.items() if count}
    return preview


def _stored_verifier(stored: dict) -> Outcome | None:
    if not stored or stored.get("outcome") is None:
        return None
    return Outcome(
        stored["outcome"],
        failure_class=stored.get("failure_class") or "",
        cause=stored.get("cause") or "",
        message=stored.get("message") or "",
    )


def stored_checks_list(*, since, judge_version_ids, limit: int = PREVIEW_LIMIT) -> list[StoredChecks]:
    """Load the stored checks of the live queries decided since `since`, newest first (at most `limit`)."""
    lives = list(
        LiveQuery.objects.filter(status__in=DECIDED, finished_at__gte=since)
        .order_by("-finished_at")
        .values("pk", "query__question", "status", "verifier_result", "decision")[:limit]
    )
    ids = [live["pk"] for live in lives]
    votes: dict[int, dict[int, JudgeVote]] = {}
    verdicts = Verdict.objects.filter(
        query__live__finished_at__gte=since, run__isnull=True, repeat=0, judge_version_id__in=judge_version_ids
    ).values_list("query_id", "judge_version_id", "decision", "error_class_guess", "reason")
    for query_id, version_id, decision, guess, reason in verdicts.iterator():
        votes.setdefault(query_id, {})[version_id] = JudgeVote(version_id, decision, guess or "", reason or "")
    probes: dict[int, list[ProbeFinding]] = {}
    stored_probes = TriageProbe.objects.filter(live_query__finished_at__gte=since).select_related("probe_run")
    for probe in stored_probes.iterator():
        probes.setdefault(probe.live_query_id, []).append(ProbeFinding(probe.source, probe.probe_run.check_outcome))
    return [
        StoredChecks(
            live_id=pk,
            question=live["query__question"],
            flagged_now=live["status"] == IngestStatus.FLAGGED,
            reasons_now=tuple((live["decision"] or {}).get("reasons") or ()),
            verifier=_stored_verifier(live["verifier_result"] or {}),
            votes=votes.get(pk, {}),
            probes=tuple(probes.get(pk, ())),
        )
        for pk, live in zip(ids, lives, strict=True)
    ]


def policy_preview(*, draft: DraftPolicy, days: int = PREVIEW_DAYS, now=None) -> PolicyPreview:
    """Preview the draft over the live queries decided in the last `days` days."""
    since = (now or timezone.now()) - timedelta(days=days)
    rows = stored_checks_list(since=since, judge_version_ids=draft.judge_version_ids)
    preview = policy_preview_build(rows, draft, days=days)
    versions = JudgeVersion.objects.filter(pk__in=preview.missing_verdicts).select_related("judge")
    preview.missing_named = [(str(version), preview.missing_verdicts[version.pk]) for version in versions]
    if len(rows) == PREVIEW_LIMIT:
        preview.limited_to = PREVIEW_LIMIT
    return preview


def draft_from_form(cleaned: dict) -> DraftPolicy:
    """Read a draft policy from the admin form's cleaned data."""
    return DraftPolicy(
        rule=FlagRuleSpec(
            rule=cleaned["flag_rule"], k=cleaned["k"], flag_on_verifier_failure=cleaned["flag_on_verifier_failure"]
        ),
        judge_version_ids=tuple(sorted(version.pk for version in cleaned["judge_versions"])),
        run_verifier=cleaned["run_verifier"],
        run_fanout_detector=cleaned["run_fanout_detector"],
    )
