"""Audit a gold-set version: is each item's gold answer something a judge can be measured against?

Per item, the reference (its reference SQL, or its own SQL when it is labelled correct)
runs through the read-only path (`probes.execution.run_readonly`) on the warehouse as it
is now. The checks (`labelling.audit_checks`): the reference fails to run; LIMIT without
ORDER BY, or a cut that splits a tie (the query runs again with LIMIT n+1 and the
ordering key is compared at the boundary); the clock or random numbers; a shape the
question does not pin (heuristic, "check"); an empty reference; identical results with
disagreeing labels. Results are compared with the gold comparison's normalisation
(`labelling.compare`: order-insensitive, numbers rounded to two decimals).
"""

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass

import sqlglot
from celery import current_app
from django.db import IntegrityError, transaction
from django.utils import timezone
from sqlglot.errors import SqlglotError

from config.progress import TaskStatus, failure_recorded
from labelling import audit_checks as checks
from labelling.compare import normalise_row
from labelling.models import GoldSetAudit, GoldSetVersion, GoldSetVersionItem, LabelDecision
from probes.execution import run_readonly
from probes.fingerprint import sqlglot_dialect

RUN_TIMEOUT_S = 10.0
ROW_CAP = 5000
# Publishing audits the new version at once up to this size; a larger one is audited on request.
AUDIT_AT_PUBLISH_MAX_ITEMS = 2000
SEVERITIES = ("error", "warning", "check")
AUDIT_TASK = "labelling.goldset_audit_run"
PROGRESS_EVERY = 20  # items between two progress writes


@dataclass
class Ran:
    """A complete result, or why there is none."""

    columns: list
    rows: list
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


class Runner:
    """Run SQL read-only, each distinct (warehouse, text) once per audit."""

    def __init__(self):
        self.cache: dict[tuple[int, str], Ran] = {}

    def run(self, warehouse, sql: str, row_cap: int = ROW_CAP) -> Ran:
        key = (warehouse.pk, sql)
        if key not in self.cache:
            result = run_readonly(warehouse=warehouse, sql=sql, row_cap=row_cap, timeout_s=RUN_TIMEOUT_S)
            if not result.allowed:
                ran = Ran([], [], f"refused by the read-only guard: {result.reason}")
            elif not result.executed or result.error:
                ran = Ran([], [], result.error or result.reason or "did not run")
            elif result.truncated:
                ran = Ran([], [], f"more than {row_cap} rows: not compared")
            else:
                ran = Ran(list(result.columns), [list(row) for row in result.rows])
            self.cache[key] = ran
        return self.cache[key]


def result_key(ran: Ran) -> str:
    """Return a digest equal for two results the gold comparison calls a match."""
    bag = sorted(repr(normalise_row(row)) for row in ran.rows)
    return hashlib.sha256(repr((len(ran.columns), bag)).encode()).hexdigest()


def reference_of(item: GoldSetVersionItem) -> str:
    query = item.query
    if query.reference_sql:
        return query.reference_sql
    return query.sql if item.decision == LabelDecision.CORRECT else ""


def _check_item(item: GoldSetVersionItem, reference: str, runner: Runner) -> tuple[list, Ran | None]:
    query = item.query
    name = query.external_id
    try:
        tree = sqlglot.parse_one(reference, read=sqlglot_dialect(query.dialect))
    except SqlglotError as exc:
        return [
            checks.Finding(
                name, checks.REFERENCE_FAILS, "error", "The reference does not parse.", {"error": str(exc)[:300]}
            )
        ], None
    findings = checks.limits_without_order(name, tree) + checks.nondeterministic_functions(name, tree)
    ran = runner.run(query.warehouse, reference)
    if not ran.ok:
        message = "The reference does not run on the warehouse as it is now."
        findings.append(checks.Finding(name, checks.REFERENCE_FAILS, "error", message, {"error": ran.error[:300]}))
        return findings, None
    findings += checks.empty_result(name, ran.columns, ran.rows)
    findings += checks.shape_checks(name, query.question, tree, ran.columns, ran.rows)
    select = checks.outer_select(tree)
    probe = checks.tie_probe(select) if select is not None else None
    if probe is not None:
        probe_tree, positions, limit = probe
        probed = runner.run(query.warehouse, probe_tree.sql(dialect=sqlglot_dialect(query.dialect)), limit + 1)
        if probed.ok:
            findings += checks.tie_at_cut(name, probed.rows, probed.columns, positions, limit)
    return findings, ran


def _identical_results(entries: list[dict]) -> list[checks.Finding]:
    """Flag wrong items whose result is the reference's, and same-result items labelled differently."""
    findings = []
    groups = defaultdict(list)
    for entry in entries:
        if entry["own"] is None:
            continue
        groups[entry["reference"], entry["own"]].append(entry)
        if entry["decision"] == LabelDecision.WRONG and entry["own"] == entry["reference"]:
            findings.append(
                checks.Finding(
                    entry["item"],
                    checks.IDENTICAL_RESULTS_DISAGREE,
                    "error",
                    "Labelled wrong, yet its result is identical to its reference's.",
                    {"label": f"wrong {entry['error_class']}".strip(), "rows": entry["rows"]},
                )
            )
    for group in groups.values():
        labels = {(entry["decision"], entry["error_class"]) for entry in group}
        if len(group) > 1 and len(labels) > 1:
            findings.append(
                checks.Finding(
                    group[0]["item"],
                    checks.IDENTICAL_RESULTS_DISAGREE,
                    "error",
                    f"{len(group)} items return identical results for identical references but are labelled"
                    " differently.",
                    {
                        "items": {e["item"]: f"{e['decision']} {e['error_class']}".strip() for e in group},
                        "rows": group[0]["rows"],
                    },
                )
            )
    return findings


def goldset_audit(*, version: GoldSetVersion, progress=None) -> dict:
    """Audit every item of the version; return the findings and their counts per class.

    `progress(done, total)`, if given, is told how many items are done every `PROGRESS_EVERY` items.
    """
    runner = Runner()
    findings: list[checks.Finding] = []
    entries = []
    items = GoldSetVersionItem.objects.filter(version=version).select_related("query__warehouse").order_by("query_id")
    total = checked = 0
    count = items.count() if progress else 0
    for item in items:
        if progress and total % PROGRESS_EVERY == 0:
            progress(total, count)
        total += 1
        reference = reference_of(item)
        if not reference or item.query.warehouse_id is None:
            continue
        checked += 1
        found, ran = _check_item(item, reference, runner)
        findings += found
        if ran is None:
            continue
        own = ran if item.decision == LabelDecision.CORRECT else runner.run(item.query.warehouse, item.query.sql)
        entries.append(
            {
                "item": item.query.external_id,
                "decision": item.decision,
                "error_class": item.error_class,
                "reference": result_key(ran),
                "own": result_key(own) if own.ok else None,
                "rows": ran.rows[: checks.EVIDENCE_ROWS],
            }
        )
    findings += _identical_results(entries)
    counts = Counter(finding.cls for finding in findings)
    return {
        "gold_set": version.gold_set.name,
        "version": version.number,
        "items": total,
        "items_checked": checked,
        "counts": {cls: counts.get(cls, 0) for cls in checks.FINDING_CLASSES},
        "findings": [finding.as_dict() for finding in findings],
    }


def goldset_audit_run(*, version: GoldSetVersion, request_id: str | None = None) -> GoldSetAudit:
    """Audit the version and store the outcome as its latest audit.

    With a `request_id` (a task's), the audit that request stored already is returned
    instead of a second one: a redelivered task audits once.
    """
    if request_id and (done := GoldSetAudit.objects.filter(request_id=request_id).first()):
        return done
    report = goldset_audit(version=version)
    try:
        with transaction.atomic():
            return GoldSetAudit.objects.create(
                version=version,
                items_checked=report["items_checked"],
                counts=report["counts"],
                findings=report["findings"],
                request_id=request_id or None,
            )
    except IntegrityError:
        # The same request stored it meanwhile (two deliveries at once): keep that one.
        return GoldSetAudit.objects.get(request_id=request_id)


def audit_at_publish(*, version: GoldSetVersion) -> GoldSetAudit | None:
    """Audit a freshly published version when it is small enough to do at once; else None (`publish_gold`)."""
    if version.items.count() > AUDIT_AT_PUBLISH_MAX_ITEMS:
        return None
    return goldset_audit_run(version=version)


def goldset_audit_request(*, version: GoldSetVersion) -> GoldSetAudit:
    """Queue an audit of the version as a task (the page shows its progress); one already pending is returned.

    The task is sent after the commit, by name (tasks import services, never the reverse).
    """
    pending = GoldSetAudit.objects.filter(version=version, status__in=[TaskStatus.QUEUED, TaskStatus.RUNNING]).first()
    if pending is not None:
        return pending
    audit = GoldSetAudit.objects.create(version=version, status=TaskStatus.QUEUED, items_total=version.items.count())
    transaction.on_commit(
        lambda: current_app.send_task(AUDIT_TASK, kwargs={"version_id": version.pk, "audit_id": audit.pk})
    )
    return audit


def goldset_audit_tracked(*, audit_id: int) -> str | None:
    """Run one requested audit, writing its progress and then its findings on its row; return its status.

    A redelivered task re-runs a running audit from the start and leaves a finished one alone.
    """
    audit = GoldSetAudit.objects.select_related("version__gold_set").filter(pk=audit_id).first()
    claimed = GoldSetAudit.objects.filter(pk=audit_id, status__in=[TaskStatus.QUEUED, TaskStatus.RUNNING])
    if audit is None or not claimed.update(status=TaskStatus.RUNNING, items_done=0):
        return audit.status if audit else None
    rows = GoldSetAudit.objects.filter(pk=audit_id)

    def progress(done: int, total: int) -> None:
        rows.update(items_done=done, items_total=total)

    with failure_recorded(rows):
        report = goldset_audit(version=audit.version, progress=progress)
    rows.update(
        status=TaskStatus.DONE,
        items_done=report["items"],
        items_total=report["items"],
        items_checked=report["items_checked"],
        counts=report["counts"],
        findings=report["findings"],
        finished_at=timezone.now(),
    )
    return TaskStatus.DONE


def audit_summary(*, findings: list[dict]) -> str:
    """Say in one line what an audit found, e.g. "2 errors, 1 check (limit_splits_tie 2, shape_unpinned 1)"."""
    if not findings:
        return "no findings"
    severities = Counter(finding["severity"] for finding in findings)
    classes = Counter(finding["class"] for finding in findings)
    parts = [f"{severities[s]} {s}{'s' if severities[s] != 1 else ''}" for s in SEVERITIES if severities[s]]
    detail = ", ".join(f"{cls} {n}" for cls, n in sorted(classes.items()))
    return f"{', '.join(parts)} ({detail})"
