"""The triage dashboard's queue figures are counted by the database, and equal the row-by-row ones (issue 33)."""

from datetime import timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from judges.models import JudgeVersion
from triage.models import Resolution, TriageItem, TriageStatus
from triage.queue import claimable_q
from triage.selectors import AGE_BUCKETS, age_distribution, judge_live_precision
from triage.tests import factories

pytestmark = pytest.mark.django_db


def random_queue(rng, n: int, analyst, judges) -> None:
    """Items open, claimed (some claims expired) and resolved, of every age, flagged by some judges."""
    now = timezone.now()
    for _ in range(n):
        item = factories.triage_item()
        kind = rng.choice(["open", "claimed", "expired", "resolved"])
        fields = {"created_at": now - timedelta(minutes=float(rng.choice([1, 14.99, 15, 59, 60, 61, 300, 2000])))}
        if kind in ("claimed", "expired"):
            expires = now + timedelta(minutes=5) if kind == "claimed" else now - timedelta(minutes=5)
            fields |= {"status": TriageStatus.CLAIMED, "assignee": analyst, "claim_expires_at": expires}
        elif kind == "resolved":
            fields |= {
                "status": TriageStatus.RESOLVED,
                "resolution": rng.choice(list(Resolution.values)),
                "resolved_by": analyst,
                "resolved_at": now - timedelta(days=float(rng.choice([0.5, 3, 9]))),
            }
        TriageItem.objects.filter(pk=item.pk).update(**fields)
        chosen = [judge for judge in judges if rng.random() < 0.5]
        item.rejecting_judges.add(*chosen)


# --- the twins: the figures as they were computed, one row per item --------------------------


def twin_ages(now) -> list[dict]:
    ages = [
        now - created for created in TriageItem.objects.filter(claimable_q(now)).values_list("created_at", flat=True)
    ]
    rows, lower = [], timedelta(0)
    for name, upper in AGE_BUCKETS:
        count = sum(1 for age in ages if age >= lower and (upper is None or age < upper))
        rows.append({"name": name, "count": count})
        lower = upper or lower
    peak = max((r["count"] for r in rows), default=0) or 1
    for row in rows:
        row["width"] = round(100 * row["count"] / peak)
    return rows


def twin_precision(since) -> list[dict]:
    resolved = TriageItem.objects.filter(status=TriageStatus.RESOLVED).exclude(resolution=Resolution.UNCLEAR)
    resolved = resolved.filter(resolved_at__gte=since)
    rows = []
    for version in JudgeVersion.objects.filter(
        pk__in=resolved.values_list("rejecting_judges", flat=True)
    ).select_related("judge"):
        mine = resolved.filter(rejecting_judges=version)
        decided = mine.count()
        confirmed = mine.filter(resolution=Resolution.CONFIRMED_WRONG).count()
        rows.append({"judge": str(version), "flags": decided, "confirmed": confirmed, "precision": confirmed / decided})
    for row in rows:
        row["width"] = round(100 * row["precision"])
    return sorted(rows, key=lambda r: -r["precision"])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_queue_figures_from_the_database_equal_the_row_by_row_ones(seed, role_users):
    rng = np.random.default_rng(seed)
    judges = [factories.judge_version() for _ in range(3)]
    random_queue(rng, 40, role_users["analyst"], judges)
    now = timezone.now()
    assert age_distribution(now=now) == twin_ages(now)
    week = now - timedelta(days=7)
    assert judge_live_precision(since=week) == twin_precision(week)


def test_the_triage_dashboard_costs_the_same_with_4_items_or_40(client_for, role_users):
    rng = np.random.default_rng(7)
    judges = [factories.judge_version() for _ in range(2)]
    random_queue(rng, 4, role_users["analyst"], judges)
    client = client_for("admin")
    with CaptureQueriesContext(connection) as few:
        assert client.get(reverse("triage:dashboard")).status_code == 200
    judges += [factories.judge_version() for _ in range(4)]
    random_queue(rng, 36, role_users["analyst"], judges)
    with CaptureQueriesContext(connection) as many:
        assert client.get(reverse("triage:dashboard")).status_code == 200
    assert len(many) == len(few)
