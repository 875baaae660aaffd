"""The live triage pipeline: verifier → judges (concurrently) → probes → decision.

`process_live_query` gathers the inputs of `triage.decision.decide` by calling the
verifier, judge and probe services, then stores the outcome with `live_query_record_decision`.
The verifier and the probes answer with an outcome (`probes.outcome.Outcome`); a fault of
either (the warehouse stopped, a role that cannot read, a refused probe) never flags.
"""

import logging
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict

from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone

from config.db_budget import db_connection_slot, thread_connection_slots
from config.task_retry import TRANSIENT_ERRORS
from judges.models import Verdict
from judges.services import judge_live_query
from labelling.models import QuerySource
from labelling.services import query_create
from probes.fanout import JoinFanoutHypothesis, check_fanout, detect_fanout
from probes.fingerprint import sql_fingerprint
from probes.outcome import INTERNAL, Outcome
from probes.preview import result_preview_run
from probes.selectors import catalogue_get_latest
from probes.verifier import verify
from triage.claims import live_query_attempt_failed, live_query_claim
from triage.decision import JudgeVote, ProbeFinding, TriageDecision, audit_draw, decide, rule_from_policy
from triage.models import AuditScope, IngestStatus, LiveQuery, TriageItem, TriageProbe
from triage.policy import policy_current

logger = logging.getLogger(__name__)

FANOUT_DETECTOR = "fanout_detector"


def verifier_run(*, query, catalogue) -> tuple[Outcome, dict]:
    """Run the deterministic verifier and return its outcome and what to store.

    A verifier that crashed, like one that could not reach the warehouse, is a fault: it
    is recorded ("verifier could not check: ...") and never flags.
    """
    try:
        result = verify(query.sql, catalogue, warehouse=query.warehouse, rules=query.warehouse.verifier_rules)
    except Exception as exc:  # noqa: BLE001 - a broken checker must not flag or lose the query
        logger.exception("triage: verifier crashed on query %s", query.pk)
        outcome = Outcome.fault(INTERNAL, f"{type(exc).__name__}: {exc}")
        return outcome, outcome.as_dict() | {"passed": False, "error": outcome.message}
    stored = result.as_dict()
    stored.pop("rules", None)
    stored["findings"] = _jsonable(stored["findings"])
    stored["verifier_version"] = str(stored["verifier_version"] or "")
    return result.outcome, stored


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

    One long-lived pool rather than one per query. Its threads share the process's
    connection budget (`config/db_budget.py`): a thread holds a connection only while it
    judges, and at most DB_MAX_CONNECTIONS_PER_PROCESS − 1 judge at once.
    """
    global _judge_pool
    with _judge_pool_lock:
        if _judge_pool is None:
            _judge_pool = ThreadPoolExecutor(max_workers=settings.TRIAGE_JUDGE_THREADS, thread_name_prefix="live-judge")
        return _judge_pool


def _judge_in_thread(judge_version, query):
    """Call one judge from a pool thread, within the process's connection budget."""
    with db_connection_slot():
        return judge_live_query(judge_version=judge_version, query=query)


def judges_run(*, query, judge_versions) -> list:
    """Judge the query with every live judge at once; reuse verdicts a redelivery already stored."""
    existing = {v.judge_version_id: v for v in Verdict.objects.filter(query=query, run__isnull=True, repeat=0)}
    todo = [jv for jv in judge_versions if jv.pk not in existing]
    if len(todo) == 1 or connections["default"].vendor == "sqlite" or thread_connection_slots() < 1:
        # SQLite serialises writers anyway; threads would only add lock waits. A budget of
        # one connection leaves none for threads.
        fresh = [judge_live_query(judge_version=jv, query=query) for jv in todo]
    elif todo:
        fresh = list(_judge_executor().map(lambda jv: _judge_in_thread(jv, query), todo))
    else:
        fresh = []
    by_version = existing | {v.judge_version_id: v for v in fresh}
    return [by_version[jv.pk] for jv in judge_versions if jv.pk in by_version]


def _hypothesis_from(data: dict):
    keys = ("suspected", "join_table", "grain_key", "probe_sql")
    return JoinFanoutHypothesis(**{k: data.get(k) for k in keys})


def _store_probe(live, source, verdict, make_probe_run):
    """Run a probe once per (live query, source) and store it; a failing probe fails open."""
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


def probes_run(*, live, query, verdicts, catalogue, policy) -> list[ProbeFinding]:
    """Probe every fan-out suspicion the judges raised, and the deterministic detector's.

    Docket writes each probe from the query's own FROM/JOIN tree, or runs the judge's
    `probe_sql` only if it has exactly that shape (`probes.fanout.check_fanout`).
    """
    findings = []
    warehouse = query.warehouse
    for verdict in verdicts:
        for index, data in enumerate(verdict.hypotheses or []):
            if not isinstance(data, dict) or not data.get("suspected"):
                continue
            source = f"judge:{verdict.judge_version_id}:{index}"
            run = _store_probe(
                live,
                source,
                verdict,
                lambda data=data: check_fanout(
                    hypothesis=_hypothesis_from(data),
                    warehouse=warehouse,
                    subject_sql=query.sql,
                    subject_fingerprint=query.fingerprint,
                ),
            )
            if run is not None:
                findings.append(ProbeFinding(source, run.check_outcome))
    if policy is not None and policy.run_fanout_detector and catalogue is not None:

        def detector_probe():
            hypothesis = detect_fanout(query.sql, catalogue, query.dialect)
            if not hypothesis.suspected:
                return None
            return check_fanout(
                hypothesis=hypothesis, warehouse=warehouse, subject_sql=query.sql, subject_fingerprint=query.fingerprint
            )

        run = _store_probe(live, FANOUT_DETECTOR, None, detector_probe)
        if run is not None:
            findings.append(ProbeFinding(FANOUT_DETECTOR, run.check_outcome))
    return findings


def result_preview(*, query, row_cap: int = 20) -> dict:
    """Run the query read-only for the analyst's preview (`probes/preview.py`); a refusal or error is shown as such."""
    try:
        result = result_preview_run(warehouse=query.warehouse, sql=query.sql, rows=row_cap).result
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


def live_query_process(*, live_id: int, claim_token: str = "") -> str | None:
    """Run the pipeline for one live query under a claim; safe to call again for the same id.

    `claim_token` is the caller's (a task passes its id, which its retries keep): the same
    token re-enters its claim, another finds the query taken and returns None. A transient
    error is raised for the task to retry; any other counts an attempt (`triage/claims.py`).
    """
    token = claim_token or uuid.uuid4().hex
    if not live_query_claim(live_id=live_id, token=token):
        return None
    try:
        return _live_query_judge(live_id=live_id, claim_token=token)
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:  # noqa: BLE001 - recorded on the row and counted; it ends as failed
        logger.exception("triage: the pipeline failed on live query %s", live_id)
        return live_query_attempt_failed(live_id=live_id, token=token, error=exc)


def _live_query_judge(*, live_id: int, claim_token: str) -> str | None:
    """Check, judge, probe and decide one claimed live query, and store the outcome."""
    live = LiveQuery.objects.select_related("query__warehouse", "policy").get(pk=live_id)
    query = live.query
    policy = live.policy or policy_current()
    if not query.fingerprint:
        query.fingerprint = sql_fingerprint(query.sql, query.dialect)
        query.save(update_fields=["fingerprint"])
    catalogue = None
    if query.warehouse_id and policy is not None and (policy.run_verifier or policy.run_fanout_detector):
        catalogue = catalogue_get_latest(warehouse_id=query.warehouse_id)
    verifier, verifier_stored = None, {}
    if policy is not None and policy.run_verifier and catalogue is not None:
        verifier, verifier_stored = verifier_run(query=query, catalogue=catalogue)
    judge_versions = list(policy.judge_versions.select_related("judge").order_by("pk")) if policy else []
    verdicts = judges_run(query=query, judge_versions=judge_versions) if judge_versions else []
    probes = []
    if query.warehouse_id:
        probes = probes_run(live=live, query=query, verdicts=verdicts, catalogue=catalogue, policy=policy)
    votes = [JudgeVote(v.judge_version_id, v.decision, v.error_class_guess or "", v.reason or "") for v in verdicts]
    decision = decide(verifier=verifier, votes=votes, probes=probes, rule=rule_from_policy(policy))
    preview = result_preview(query=query) if decision.flagged and query.warehouse_id else {}
    return live_query_record_decision(
        live_id=live_id,
        policy=policy,
        decision=decision,
        verifier_stored=verifier_stored,
        preview=preview,
        claim_token=claim_token,
    )


@transaction.atomic
def live_query_record_decision(
    *, live_id: int, policy, decision: TriageDecision, verifier_stored: dict, preview: dict, claim_token: str = ""
):
    """Store the pipeline's outcome: a queue item when flagged, an audit copy when drawn.

    With a `claim_token`, only while that claim holds: a worker whose claim was taken over
    stores nothing (the one that took it over decides).
    """
    live = LiveQuery.objects.select_for_update().select_related("query").get(pk=live_id)
    if claim_token and (live.status != IngestStatus.PROCESSING or live.claim_token != claim_token):
        return live.status
    live.claim_token = ""
    live.policy = policy
    live.verifier_result = verifier_stored
    live.decision = decision.as_dict()
    live.result_preview = preview
    live.finished_at = timezone.now()
    if decision.flagged:
        because = "; ".join(decision.reasons)
        if decision.notes:  # e.g. "verifier could not check: transport: ...": said, never a reason
            because += f" ({'; '.join(decision.notes)})"
        item, created = TriageItem.objects.get_or_create(
            query=live.query,
            defaults={
                "flagged_because": because,
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
    # The audit sample: accepted queries, or (audit_scope = all) flagged ones too, drawn alike.
    every_query = policy is not None and policy.audit_scope == AuditScope.ALL
    if live.status == IngestStatus.PASSED or (every_query and live.status == IngestStatus.FLAGGED):
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
