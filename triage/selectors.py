"""Reads of the triage app: the queue, an item's evidence, the dashboard figures."""

from collections.abc import Iterator
from datetime import timedelta

from django.core.paginator import Page, Paginator
from django.db.models import Count, F, Q
from django.utils import timezone

from config.keyset import keyset_chunks, keyset_rows
from judges.metrics import percentile
from judges.models import JudgeVersion, Verdict
from triage.filters import QueueFilter
from triage.models import (
    Alert,
    EstimateSnapshot,
    IngestStatus,
    LiveQuery,
    Resolution,
    TriageItem,
    TriageStatus,
)
from triage.monitoring import CALIBRATION_RULE
from triage.policy import policy_current
from triage.queue import QUEUE_ORDER, claimable_q

QUEUE_PAGE_SIZE = 25
EXPORT_CHUNK = 2000  # rows a download reads from the database at a time
# The queue's order and the resolved list's, each ending in the primary key: downloads page by them (keyset).
QUEUE_EXPORT_ORDER = (*QUEUE_ORDER, "pk")
RESOLVED_ORDER = ("-resolved_at", "-pk")


def queue_filter(*, params, queryset=None) -> QueueFilter:
    """The queue's filters read from request parameters, over the claimable items (or `queryset`)."""
    base = TriageItem.objects.filter(claimable_q(timezone.now())) if queryset is None else queryset
    return QueueFilter(params or {}, queryset=base)


def queue_items(*, params) -> Iterator[TriageItem]:
    """Every claimable item in queue order (the download), filtered by `params`, in keyset chunks, SLA-marked."""
    for chunk in keyset_chunks(_queue_queryset(queue_filter(params=params)), QUEUE_EXPORT_ORDER, chunk=EXPORT_CHUNK):
        yield from _mark_sla(chunk)


def queue_page(*, filters: QueueFilter, page: str | int | None) -> tuple[Page, int]:
    """One page of the filtered queue, and how many claimable items there are unfiltered."""
    now = timezone.now()
    paginator = Paginator(_queue_queryset(filters), QUEUE_PAGE_SIZE)
    current = paginator.get_page(page)
    current.object_list = _mark_sla(list(current.object_list))
    return current, TriageItem.objects.filter(claimable_q(now)).count()


def _queue_queryset(filters: QueueFilter):
    return filters.qs.select_related("query__warehouse").order_by(*QUEUE_EXPORT_ORDER)


def _mark_sla(items):
    policy = policy_current()
    sla = timedelta(minutes=policy.sla_minutes if policy else 240)
    now = timezone.now()
    for item in items:
        item.sla_breached = now - item.created_at > sla
    return items


def claimed_items() -> list[TriageItem]:
    return list(
        TriageItem.objects.filter(status=TriageStatus.CLAIMED, claim_expires_at__gte=timezone.now()).select_related(
            "query", "assignee"
        )
    )


RESOLVED_PAGE_LIMIT = 200


def resolved_items(*, queryset=None, limit: int = RESOLVED_PAGE_LIMIT):
    """The latest resolved items (of `queryset`, e.g. the page's filters), newest first (the resolved page)."""
    return (queryset if queryset is not None else resolved_queryset())[:limit]


def resolved_items_all(*, queryset=None) -> Iterator[TriageItem]:
    """Every resolved item (of `queryset`), newest first (the download), read in keyset chunks."""
    return keyset_rows(queryset if queryset is not None else resolved_queryset(), RESOLVED_ORDER, chunk=EXPORT_CHUNK)


def resolved_queryset():
    """Resolved items, newest first, with what the list shows (query, warehouse, analyst)."""
    return (
        TriageItem.objects.filter(status=TriageStatus.RESOLVED)
        .select_related("query__warehouse", "resolved_by")
        .order_by(*RESOLVED_ORDER)
    )


def unjudged_queries(*, limit: int = 200):
    """Live queries every judge errored on: nobody has checked them, so people should see them."""
    return LiveQuery.objects.filter(status=IngestStatus.UNJUDGED).select_related("query__warehouse")[:limit]


def failed_queries(*, limit: int = 200):
    """Live queries the pipeline gave up on after TRIAGE_MAX_ATTEMPTS, most recent first, with their last error."""
    return (
        LiveQuery.objects.filter(status=IngestStatus.FAILED)
        .select_related("query__warehouse")
        .order_by("-finished_at", "-pk")[:limit]
    )


def item_evidence(*, item: TriageItem) -> dict:
    """Gather everything the analyst reads: verdicts, probes in plain words, verifier, preview."""
    live = LiveQuery.objects.filter(pk=item.query_id).first()
    verdicts = list(
        Verdict.objects.filter(query_id=item.query_id, run__isnull=True).select_related("judge_version__judge")
    )
    probes = list(live.probes.select_related("probe_run").all()) if live else []
    similar = (
        TriageItem.objects.filter(query__fingerprint=item.query.fingerprint, status=TriageStatus.RESOLVED)
        .exclude(pk=item.pk)
        .select_related("query", "resolved_by")
        .order_by("-resolved_at")[:10]
        if item.query.fingerprint
        else []
    )
    return {
        "live": live,
        "verdicts": verdicts,
        "probes": probes,
        "verifier": live.verifier_result if live else {},
        "preview": live.result_preview if live else {},
        "similar": similar,
        "events": item.events.select_related("actor").all(),
    }


AGE_BUCKETS = [
    ("< 15 min", timedelta(minutes=15)),
    ("15–60 min", timedelta(hours=1)),
    ("1–4 h", timedelta(hours=4)),
    ("4–24 h", timedelta(days=1)),
    ("> 1 day", None),
]


def age_distribution(*, now=None) -> list[dict]:
    """Count waiting items by age bucket, for the dashboard's bar chart (counted by the database, in one query)."""
    now = now or timezone.now()
    buckets, lower = {}, timedelta(0)
    for index, (_, upper) in enumerate(AGE_BUCKETS):
        # age >= lower and age < upper, as times: created at or before now - lower, after now - upper.
        within = Q(created_at__lte=now - lower) & (Q() if upper is None else Q(created_at__gt=now - upper))
        buckets[f"bucket_{index}"] = Count("pk", filter=within)
        lower = upper or lower
    counts = TriageItem.objects.filter(claimable_q(now)).aggregate(**buckets)
    rows = [{"name": name, "count": counts[f"bucket_{index}"]} for index, (name, _) in enumerate(AGE_BUCKETS)]
    peak = max((r["count"] for r in rows), default=0) or 1
    for row in rows:
        row["width"] = round(100 * row["count"] / peak)
    return rows


def judge_live_precision(*, since=None) -> list[dict]:
    """For each judge: share of its resolved flags the analysts confirmed wrong (unclear excluded)."""
    resolved = TriageItem.objects.filter(status=TriageStatus.RESOLVED).exclude(resolution=Resolution.UNCLEAR)
    if since:
        resolved = resolved.filter(resolved_at__gte=since)
    # One grouped query: per rejecting judge, its resolved flags and those confirmed wrong.
    counted = {
        judge_version: (decided, confirmed)
        for judge_version, decided, confirmed in resolved.filter(rejecting_judges__isnull=False)
        .values("rejecting_judges")
        .annotate(decided=Count("pk"), confirmed=Count("pk", filter=Q(resolution=Resolution.CONFIRMED_WRONG)))
        .order_by()
        .values_list("rejecting_judges", "decided", "confirmed")
    }
    rows = []
    for version in JudgeVersion.objects.filter(pk__in=list(counted)).select_related("judge"):
        decided, confirmed = counted[version.pk]
        rows.append({"judge": str(version), "flags": decided, "confirmed": confirmed, "precision": confirmed / decided})
    for row in rows:
        row["width"] = round(100 * row["precision"])
    return sorted(rows, key=lambda r: -r["precision"])


def dashboard_figures() -> dict:
    """Collect the queue dashboard: depth, ages, resolution times, throughput, precision."""
    now = timezone.now()
    week = now - timedelta(days=7)
    resolved_week = TriageItem.objects.filter(status=TriageStatus.RESOLVED, resolved_at__gte=week)
    waits = [
        (resolved - created).total_seconds() / 60
        for created, resolved in resolved_week.values_list("created_at", "resolved_at")
    ]
    spent = [s for s in resolved_week.values_list("time_spent_s", flat=True) if s is not None]
    throughput = (
        resolved_week.values("resolved_by__username")
        .annotate(
            week=Count("pk"),
            day=Count("pk", filter=Q(resolved_at__gte=now - timedelta(days=1))),
        )
        .order_by("-week")
    )
    return {
        "depth_open": TriageItem.objects.filter(claimable_q(now)).count(),
        "depth_claimed": TriageItem.objects.filter(status=TriageStatus.CLAIMED, claim_expires_at__gte=now).count(),
        "pending": LiveQuery.objects.filter(status__in=[IngestStatus.PENDING, IngestStatus.PROCESSING]).count(),
        "unjudged": LiveQuery.objects.filter(status=IngestStatus.UNJUDGED).count(),
        "failed": LiveQuery.objects.filter(status=IngestStatus.FAILED).count(),
        "ages": age_distribution(now=now),
        # The product's one percentile (judges.metrics), as for latencies.
        "resolution_minutes_p50": percentile(waits, 50),
        "resolution_minutes_p90": percentile(waits, 90),
        "seconds_spent_p50": percentile(spent, 50),
        "throughput": list(throughput),
        "precision": judge_live_precision(since=week),
        "alerts": Alert.objects.filter(acknowledged_at__isnull=True, resolved_at__isnull=True).select_related(
            "judge_version__judge"
        )[:20],
        "estimates": EstimateSnapshot.objects.select_related("judge_version__judge")[:60],
        "calibration_rule": CALIBRATION_RULE,
        "estimate_series": estimate_series(),
    }


def estimate_series(*, limit: int = 200) -> list[dict]:
    """Group recent estimate snapshots per judge, oldest first, for the over-time chart."""
    series: dict[int, dict] = {}
    snapshots = EstimateSnapshot.objects.select_related("judge_version__judge").order_by("-computed_at")[:limit]
    for snap in reversed(list(snapshots)):
        entry = series.setdefault(snap.judge_version_id, {"judge": str(snap.judge_version), "points": []})
        entry["points"].append(snap)
    return list(series.values())


def alerts_unresolved() -> list:
    """Return the open and acknowledged alerts, open ones first, newest first, with their deliveries."""
    unresolved = Alert.objects.filter(resolved_at__isnull=True).select_related(
        "judge_version__judge", "acknowledged_by"
    )
    ordered = unresolved.order_by(F("acknowledged_at").desc(nulls_first=True), "-created_at")
    return list(ordered.prefetch_related("deliveries")[:200])
