"""The live triage pipeline: verifier → judges (concurrently) → probes → decision.

`decide` is a pure function over what the checks returned and the policy's rule; it is
the whole of the flagging logic and is tested on its own. `process_live_query` gathers
those inputs by calling the verifier, judge and probe services, then stores the outcome.
"""

import hashlib
import logging
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.utils import timezone

from judges.metrics import majority_rejects

logger = logging.getLogger(__name__)

FANOUT_DETECTOR = "fanout_detector"


@dataclass(frozen=True)
class VerifierOutcome:
    passed: bool
    failure_class: str = ""
    message: str = ""


@dataclass(frozen=True)
class JudgeVote:
    judge_version_id: int
    decision: str  # accept | reject | error
    error_class_guess: str = ""
    reason: str = ""


@dataclass(frozen=True)
class ProbeFinding:
    source: str  # FANOUT_DETECTOR or "judge:<id>:<n>"
    outcome: str  # confirmed | refuted | refused | error
    message: str = ""


@dataclass(frozen=True)
class FlagRuleSpec:
    rule: str = "any"  # any | majority | k_of_n | verifier_only
    k: int = 1
    flag_on_verifier_failure: bool = True


@dataclass(frozen=True)
class TriageDecision:
    flagged: bool
    unjudged: bool
    reasons: list[str] = field(default_factory=list)
    judges_total: int = 0
    judges_answered: int = 0
    judges_agreeing: int = 0
    rejecting_judge_ids: list[int] = field(default_factory=list)
    probe_confirmed: bool = False
    verifier_failed: bool = False
    error_class_guess: str = ""

    @property
    def priority(self) -> int:
        """One sortable number mirroring the queue order: probes, then agreement."""
        return 1000 * self.probe_confirmed + 100 * self.verifier_failed + self.judges_agreeing

    def as_dict(self) -> dict:
        return asdict(self) | {"priority": self.priority}


def judges_flag(rule: FlagRuleSpec, answered: int, rejects: int) -> bool:
    """Apply the judge part of the flag rule; errored judges neither vote nor count."""
    if rule.rule == "any":
        return rejects >= 1
    if rule.rule == "majority":
        return bool(majority_rejects(rejects, answered))  # the product's one tie rule
    if rule.rule == "k_of_n":
        return rejects >= rule.k
    return False  # verifier_only


def decide(
    *, verifier: VerifierOutcome | None, votes: list[JudgeVote], probes: list[ProbeFinding], rule: FlagRuleSpec
) -> TriageDecision:
    """Decide whether a live query goes to an analyst, and how urgently.

    A judge fault (`error`) never flags; a confirmed probe or a failed deterministic
    verifier (when the policy says so) flags on its own, because both are reproducible.
    A refused or failed probe fails open. If every judge errored and nothing else
    flagged the query, it is `unjudged`: shown to people in its own list, not dropped.
    """
    answered = [v for v in votes if v.decision in ("accept", "reject")]
    rejecting = [v for v in answered if v.decision == "reject"]
    reasons = []
    if judges_flag(rule, len(answered), len(rejecting)):
        reasons.append(f"{len(rejecting)} of {len(votes)} judges rejected ({rule.rule})")
    verifier_failed = verifier is not None and not verifier.passed
    if verifier_failed and rule.flag_on_verifier_failure:
        reasons.append(f"verifier: {verifier.failure_class or 'failed'} {verifier.message}".strip())
    confirmed = [p for p in probes if p.outcome == "confirmed"]
    for probe in confirmed:
        reasons.append(f"probe confirmed: {probe.message or probe.source}")
    guesses = Counter(v.error_class_guess for v in rejecting if v.error_class_guess)
    if confirmed:
        guess = "join_fanout"
    elif verifier_failed and verifier.failure_class:
        guess = verifier.failure_class
    else:
        guess = guesses.most_common(1)[0][0] if guesses else ""
    flagged = bool(reasons)
    return TriageDecision(
        flagged=flagged,
        unjudged=bool(votes) and not answered and not flagged,
        reasons=reasons,
        judges_total=len(votes),
        judges_answered=len(answered),
        judges_agreeing=len(rejecting),
        rejecting_judge_ids=sorted(v.judge_version_id for v in rejecting),
        probe_confirmed=bool(confirmed),
        verifier_failed=verifier_failed,
        error_class_guess=guess,
    )


def audit_draw(*, key: str, share: float, salt: str = "docket-audit") -> bool:
    """Decide deterministically whether an unflagged query joins the audit sample.

    A hash of the key gives a uniform number in [0, 1): the same query always gets the
    same answer (a redelivered task cannot sample twice), and the rate is `share`.
    """
    if share <= 0:
        return False
    digest = hashlib.sha256(f"{salt}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


def rule_from_policy(policy) -> FlagRuleSpec:
    if policy is None:
        return FlagRuleSpec()
    return FlagRuleSpec(rule=policy.flag_rule, k=policy.k, flag_on_verifier_failure=policy.flag_on_verifier_failure)


# --- Orchestration ----------------------------------------------------------------------


def _claim_for_processing(live_id: int) -> bool:
    from triage.models import IngestStatus, LiveQuery

    claimed = LiveQuery.objects.filter(pk=live_id, status=IngestStatus.PENDING).update(
        status=IngestStatus.PROCESSING, started_at=timezone.now()
    )
    if claimed:
        return True
    # A worker that died mid-run leaves `processing`; the sweeper re-sends it and we take over.
    stale = timezone.now() - timezone.timedelta(seconds=settings.TRIAGE_PROCESSING_TIMEOUT_S)
    return bool(
        LiveQuery.objects.filter(pk=live_id, status=IngestStatus.PROCESSING, started_at__lt=stale).update(
            started_at=timezone.now()
        )
    )


def run_verifier(query, catalogue) -> tuple[VerifierOutcome | None, dict]:
    """Run the deterministic verifier; a crash of the verifier fails open (recorded, not flagged)."""
    from probes.verifier import verify

    try:
        result = verify(query.sql, catalogue, warehouse=query.warehouse, rules=query.warehouse.verifier_rules)
    except Exception as exc:  # noqa: BLE001 - a broken checker must not flag or lose the query
        logger.exception("triage: verifier crashed on query %s", query.pk)
        return None, {"error": f"{type(exc).__name__}: {exc}"}
    stored = {
        "passed": result.passed,
        "failure_class": result.failure_class or "",
        "message": result.message or "",
        "findings": _jsonable(result.findings),
        "verifier_version": str(result.verifier_version or ""),
        "catalogue_version": result.catalogue_version,
    }
    return VerifierOutcome(result.passed, result.failure_class or "", result.message or ""), stored


def _jsonable(value):
    if value is None:
        return []
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if hasattr(value, "__dataclass_fields__"):
        return _jsonable(asdict(value))
    return value if isinstance(value, str | int | float | bool) else str(value)


_judge_pool: ThreadPoolExecutor | None = None
_judge_pool_lock = threading.Lock()


def _judge_executor() -> ThreadPoolExecutor:
    """The process's pool of threads for live judge calls, started on first use.

    One long-lived pool rather than one per query: its threads keep their database
    connections (within CONN_MAX_AGE) instead of opening one per judge per query.
    """
    global _judge_pool
    with _judge_pool_lock:
        if _judge_pool is None:
            _judge_pool = ThreadPoolExecutor(max_workers=settings.TRIAGE_JUDGE_THREADS, thread_name_prefix="live-judge")
        return _judge_pool


def _judge_in_thread(judge_version, query):
    """Call one judge from a pool thread, on that thread's own database connection."""
    from judges.services import judge_live_query

    try:
        return judge_live_query(judge_version=judge_version, query=query)
    finally:
        # What the end of a request does: drop the connection if it is too old or broken.
        close_old_connections()


def run_judges(query, judge_versions) -> list:
    """Judge the query with every live judge at once; reuse verdicts a redelivery already stored."""
    from judges.models import Verdict

    existing = {v.judge_version_id: v for v in Verdict.objects.filter(query=query, run__isnull=True, repeat=0)}
    todo = [jv for jv in judge_versions if jv.pk not in existing]
    if len(todo) == 1 or connections["default"].vendor == "sqlite":
        # SQLite serialises writers anyway; threads would only add lock waits.
        from judges.services import judge_live_query

        fresh = [judge_live_query(judge_version=jv, query=query) for jv in todo]
    elif todo:
        fresh = list(_judge_executor().map(lambda jv: _judge_in_thread(jv, query), todo))
    else:
        fresh = []
    by_version = existing | {v.judge_version_id: v for v in fresh}
    return [by_version[jv.pk] for jv in judge_versions if jv.pk in by_version]


def _hypothesis_from(data: dict):
    from probes.fanout import JoinFanoutHypothesis

    keys = ("suspected", "join_table", "grain_key", "probe_sql")
    return JoinFanoutHypothesis(**{k: data.get(k) for k in keys})


def _store_probe(live, source, verdict, make_probe_run):
    """Run a probe once per (live query, source) and store it; a failing probe fails open."""
    from triage.models import TriageProbe

    stored = TriageProbe.objects.filter(live_query=live, source=source).select_related("probe_run").first()
    if stored:
        return stored.probe_run
    try:
        probe_run = make_probe_run()
    except Exception:  # noqa: BLE001 - a broken probe is recorded in the log, never a flag
        logger.exception("triage: probe %s crashed for live query %s", source, live.pk)
        return None
    if probe_run is None:
        return None
    TriageProbe.objects.get_or_create(
        live_query=live, source=source, defaults={"verdict": verdict, "probe_run": probe_run}
    )
    return probe_run


def run_probes(live, query, verdicts, catalogue, policy) -> list[ProbeFinding]:
    """Probe every fan-out hypothesis the judges raised, and the deterministic detector's."""
    findings = []
    warehouse = query.warehouse
    for verdict in verdicts:
        for index, data in enumerate(verdict.hypotheses or []):
            if not isinstance(data, dict) or not data.get("suspected") or not data.get("probe_sql"):
                continue
            from probes.fanout import check_fanout

            source = f"judge:{verdict.judge_version_id}:{index}"
            run = _store_probe(
                live,
                source,
                verdict,
                lambda data=data: check_fanout(
                    hypothesis=_hypothesis_from(data), warehouse=warehouse, subject_fingerprint=query.fingerprint
                ),
            )
            if run is not None:
                findings.append(ProbeFinding(source, run.outcome, run.message))
    if policy is not None and policy.run_fanout_detector and catalogue is not None:

        def detector_probe():
            from probes.fanout import check_fanout, detect_fanout

            hypothesis = detect_fanout(query.sql, catalogue, query.dialect)
            if not hypothesis.suspected:
                return None
            return check_fanout(hypothesis=hypothesis, warehouse=warehouse, subject_fingerprint=query.fingerprint)

        run = _store_probe(live, FANOUT_DETECTOR, None, detector_probe)
        if run is not None:
            findings.append(ProbeFinding(FANOUT_DETECTOR, run.outcome, run.message))
    return findings


def result_preview(query, row_cap: int = 20) -> dict:
    """Run the query read-only for the analyst's preview; a refusal or error is shown as such."""
    from probes.execution import run_readonly

    try:
        result = run_readonly(warehouse=query.warehouse, sql=query.sql, row_cap=row_cap)
    except Exception as exc:  # noqa: BLE001 - the preview is a convenience, never a blocker
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {
        "allowed": result.allowed,
        "reason": result.reason or "",
        "executed": result.executed,
        "columns": _jsonable(list(result.columns or [])),
        "rows": _jsonable([list(r) for r in (result.rows or [])][:row_cap]),
        "elapsed_ms": result.elapsed_ms,
        "error": result.error or "",
    }


def process_live_query(*, live_id: int) -> str | None:
    """Run the pipeline for one live query; safe to call again for the same id."""
    from probes.fingerprint import sql_fingerprint
    from triage.models import LiveQuery
    from triage.services import current_policy

    if not _claim_for_processing(live_id):
        return None
    live = LiveQuery.objects.select_related("query__warehouse", "policy").get(pk=live_id)
    query = live.query
    policy = live.policy or current_policy()
    if not query.fingerprint:
        query.fingerprint = sql_fingerprint(query.sql, query.dialect)
        query.save(update_fields=["fingerprint"])
    catalogue = None
    if query.warehouse_id and policy is not None and (policy.run_verifier or policy.run_fanout_detector):
        from probes.selectors import catalogue_get_latest

        catalogue = catalogue_get_latest(warehouse_id=query.warehouse_id)
    verifier, verifier_stored = None, {}
    if policy is not None and policy.run_verifier and catalogue is not None:
        verifier, verifier_stored = run_verifier(query, catalogue)
    judge_versions = list(policy.judge_versions.select_related("judge").order_by("pk")) if policy else []
    verdicts = run_judges(query, judge_versions) if judge_versions else []
    probes = run_probes(live, query, verdicts, catalogue, policy) if query.warehouse_id else []
    votes = [JudgeVote(v.judge_version_id, v.decision, v.error_class_guess or "", v.reason or "") for v in verdicts]
    decision = decide(verifier=verifier, votes=votes, probes=probes, rule=rule_from_policy(policy))
    preview = result_preview(query) if decision.flagged and query.warehouse_id else {}
    return live_query_record_decision(
        live_id=live_id, policy=policy, decision=decision, verifier_stored=verifier_stored, preview=preview
    )


@transaction.atomic
def live_query_record_decision(*, live_id: int, policy, decision: TriageDecision, verifier_stored: dict, preview: dict):
    """Store the pipeline's outcome: a queue item when flagged, an audit copy when drawn."""
    from labelling.models import QuerySource
    from labelling.services import query_create
    from triage.models import IngestStatus, LiveQuery, TriageItem

    live = LiveQuery.objects.select_for_update().select_related("query").get(pk=live_id)
    live.policy = policy
    live.verifier_result = verifier_stored
    live.decision = decision.as_dict()
    live.result_preview = preview
    live.finished_at = timezone.now()
    if decision.flagged:
        item, created = TriageItem.objects.get_or_create(
            query=live.query,
            defaults={
                "flagged_because": "; ".join(decision.reasons),
                "priority": decision.priority,
                "policy": policy,
                "probe_confirmed": decision.probe_confirmed,
                "verifier_failed": decision.verifier_failed,
                "judges_agreeing": decision.judges_agreeing,
                "judges_answered": decision.judges_answered,
                "error_class_guess": decision.error_class_guess,
            },
        )
        if created and decision.rejecting_judge_ids:
            item.rejecting_judges.set(decision.rejecting_judge_ids)
        live.status = IngestStatus.FLAGGED
    elif decision.unjudged:
        live.status = IngestStatus.UNJUDGED
    else:
        live.status = IngestStatus.PASSED
        share = policy.audit_share if policy else 0
        if live.audit_query_id is None and audit_draw(key=str(live.pk), share=share):
            query = live.query
            # The labelling app's own constructor: fingerprint and queue fields stay consistent.
            live.audit_query = query_create(
                question=query.question,
                sql=query.sql,
                dialect=query.dialect,
                warehouse=query.warehouse,
                source=QuerySource.AUDIT,
                external_id=query.external_id,
                metadata=query.metadata | {"live_query_id": query.pk, "audit_share": share},
            )
    live.save()
    return live.status
