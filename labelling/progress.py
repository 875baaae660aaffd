"""Each labeller's progress: labels done today and this week, and agreement with the others.

Loading is here (two queries); the agreement itself is `labelling.agreement.cohen_kappa`,
the product's one kappa. A label counts as done when its labeller made it (imports and
labels without a labeller are not anyone's work); agreement compares current labels given
blind (`labelling.blind`).
"""

from __future__ import annotations

import datetime
import math

from django.contrib.auth import get_user_model
from django.db.models import Count, Q
from django.utils import timezone

from config.roles import LABELLER
from labelling import agreement
from labelling.agreement_report import LOW_SUPPORT
from labelling.models import Label, LabelDecision, LabelSource

DECISIONS = [choice.value for choice in LabelDecision]


def period_starts(*, now: datetime.datetime) -> tuple[datetime.datetime, datetime.datetime]:
    """Return the start of today and of this week (Monday), in the server's time zone."""
    today = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    return today, today - datetime.timedelta(days=today.weekday())


def agreement_with_others(*, ratings: dict[int, dict[str, str]], rater: str) -> dict:
    """Return how one rater agrees with every other rater of the same items.

    Each (item, other rater) pair is one comparison: `n` comparisons (`low_support` under
    LOW_SUPPORT), the `share` on which both gave the same decision, and Cohen's kappa of
    the pooled pairs (None when undefined).
    """
    mine, theirs = [], []
    for by_rater in ratings.values():
        if rater not in by_rater:
            continue
        for other, decision in by_rater.items():
            if other != rater:
                mine.append(by_rater[rater])
                theirs.append(decision)
    if not mine:
        return {"n": 0, "share": None, "kappa": None, "low_support": True}
    kappa = agreement.cohen_kappa(mine, theirs, categories=DECISIONS)
    return {
        "n": len(mine),
        "share": sum(a == b for a, b in zip(mine, theirs, strict=True)) / len(mine),
        "kappa": None if math.isnan(kappa) else kappa,
        # The agreement page's rule: a figure on fewer comparisons says little.
        "low_support": len(mine) < LOW_SUPPORT,
    }


def labeller_progress_list(*, now: datetime.datetime | None = None) -> list[dict]:
    """Return one row per labeller (the role's members and anyone who labelled), by username."""
    today, week = period_starts(now=now or timezone.now())
    made = ~Q(label__source=LabelSource.IMPORT)
    users = (
        get_user_model()
        .objects.filter(Q(groups__name=LABELLER) | Q(label__isnull=False))
        .distinct()
        .annotate(
            done_today=Count("label", filter=made & Q(label__created_at__gte=today), distinct=True),
            done_week=Count("label", filter=made & Q(label__created_at__gte=week), distinct=True),
            current=Count("label", filter=Q(label__is_current=True), distinct=True),
        )
        .order_by("username")
    )
    ratings: dict[int, dict[str, str]] = {}
    # Agreement rests on labels given blind, as on the agreement page (labelling.blind).
    rows = Label.objects.filter(
        is_current=True, blind=True, labeller__isnull=False, query__label_count__gte=2
    ).values_list("query_id", "labeller__username", "decision")
    for query_id, username, decision in rows.iterator(chunk_size=5000):
        ratings.setdefault(query_id, {})[username] = decision
    return [
        {
            "username": user.username,
            "done_today": user.done_today,
            "done_week": user.done_week,
            "current": user.current,
            "agreement": agreement_with_others(ratings=ratings, rater=user.username),
        }
        for user in users
    ]
