"""Twenty analysts work the triage queue at once, for a bounded number of claims, on PostgreSQL.

While new flagged items keep arriving, each analyst claims, then resolves (mostly),
releases, or walks away and lets the claim expire before trying to resolve anyway. No
item may ever be held by two analysts at once, and every item must end resolved exactly
once. `FAULT_CLAIM_COUNT` sets how many claims the analysts make between them before new
items stop arriving (default 800 under CI=true, 150 otherwise). A count, not a duration,
so a slow machine soaks as hard as a fast one.
"""

import os
import random
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.utils import timezone

from labelling.models import Label, LabelSource, Query, QuerySource
from tests.support.concurrency import run_concurrently
from tests.support.services import running_in_ci
from triage.models import IngestStatus, LiveQuery, ResolutionEvent, TriageItem, TriageStatus
from triage.queue import triage_item_claim_next, triage_item_release, triage_item_resolve
from triage.tests import factories

ANALYSTS = 20
KEEP_OPEN = 30  # the feeder tops the queue up to this many open items
RESOLUTIONS = [("confirmed_wrong", "join_fanout"), ("false_alarm", ""), ("unclear", "")]


def soak_claims() -> int:
    default = "800" if running_in_ci() else "150"
    return int(os.environ.get("FAULT_CLAIM_COUNT") or default)


class ClaimLedger:
    """Who holds which item right now, as the analysts themselves see it."""

    def __init__(self, analysts: int):
        self.lock = threading.Lock()
        self.holder: dict[int, int] = {}
        self.double_claims: list[tuple[int, int, int]] = []
        self.claims = 0
        self.feeding = True
        self.working = analysts  # analysts that have neither returned nor raised yet

    def done(self, target_claims: int) -> bool:
        with self.lock:
            return self.claims >= target_claims

    def stop_feeding(self) -> None:
        with self.lock:
            self.feeding = False

    def still_feeding(self) -> bool:
        with self.lock:
            return self.feeding

    def analysts_working(self) -> bool:
        with self.lock:
            return self.working > 0

    def analyst_finished(self) -> None:
        with self.lock:
            self.working -= 1

    def claimed(self, item_id, analyst_id):
        with self.lock:
            self.claims += 1
            other = self.holder.get(item_id)
            if other is not None and other != analyst_id:
                self.double_claims.append((item_id, other, analyst_id))
            self.holder[item_id] = analyst_id

    def let_go(self, item_id, analyst_id):
        """Forget a holder; call before the item becomes claimable again, so no false alarm."""
        with self.lock:
            if self.holder.get(item_id) == analyst_id:
                del self.holder[item_id]


def add_flagged_items(count: int, warehouse) -> None:
    """Add `count` open flagged items, as factories.triage_item would, in three inserts.

    One at a time, the feeder thread could not keep up with twenty analysts (they would
    mostly find the queue empty); in bulk it keeps the queue full while they race for it.
    """
    queries = Query.objects.bulk_create(
        Query(
            question=f"Soak question {uuid.uuid4().hex}?",
            sql="SELECT 1",
            dialect="sqlite",
            warehouse=warehouse,
            source=QuerySource.LIVE,
            external_id=f"soak-{uuid.uuid4().hex}",
        )
        for _ in range(count)
    )
    LiveQuery.objects.bulk_create(LiveQuery(query=query, status=IngestStatus.FLAGGED) for query in queries)
    TriageItem.objects.bulk_create(
        TriageItem(query=query, flagged_because="test", judges_agreeing=1, judges_answered=1) for query in queries
    )


def feed_queue(ledger: ClaimLedger, target_claims: int) -> int:
    """Keep flagged items arriving until the analysts have made `target_claims` claims; return how many were added."""
    warehouse = factories.warehouse()
    added = 0
    try:
        # Stop early if every analyst has died of an error, which the test then re-raises.
        while not ledger.done(target_claims) and ledger.analysts_working():
            missing = KEEP_OPEN - TriageItem.objects.filter(status=TriageStatus.OPEN).count()
            if missing > 0:
                add_flagged_items(missing, warehouse)
                added += missing
            time.sleep(0.02)
    finally:
        ledger.stop_feeding()
    return added


def work_the_queue(analyst, seed: int, ledger: ClaimLedger) -> list[int]:
    """Claim and decide items until no more arrive and the queue is empty; return what this analyst resolved."""
    rng = random.Random(seed)
    resolved = []
    while True:
        # Read before claiming: once feeding has stopped, an empty queue stays empty.
        feeding = ledger.still_feeding()
        item = triage_item_claim_next(analyst=analyst)
        if item is None:
            if not feeding:
                return resolved
            time.sleep(0.01)
            continue
        assert item.status == TriageStatus.CLAIMED and item.assignee_id == analyst.pk
        ledger.claimed(item.pk, analyst.pk)
        roll = rng.random()
        if roll < 0.1:
            ledger.let_go(item.pk, analyst.pk)
            triage_item_release(item=item, analyst=analyst)
        elif roll < 0.15:
            # Walk away: the claim expires and someone else may take the item first.
            ledger.let_go(item.pk, analyst.pk)
            TriageItem.objects.filter(pk=item.pk, assignee=analyst).update(
                claim_expires_at=timezone.now() - timedelta(seconds=1)
            )
            time.sleep(rng.random() * 0.05)
            try:
                triage_item_resolve(item_id=item.pk, analyst=analyst, resolution="unclear")
                resolved.append(item.pk)
            except PermissionDenied:
                pass  # taken over, or already decided: the late decision must not count
        else:
            resolution, error_class = rng.choice(RESOLUTIONS)
            triage_item_resolve(item_id=item.pk, analyst=analyst, resolution=resolution, error_class=error_class)
            ledger.let_go(item.pk, analyst.pk)
            resolved.append(item.pk)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_twenty_analysts_claiming_for_a_while_never_share_an_item_and_resolve_each_exactly_once(django_user_model):
    for _ in range(KEEP_OPEN):
        factories.triage_item()
    analysts = [django_user_model.objects.create_user(f"soak-analyst-{i}") for i in range(ANALYSTS)]
    ledger = ClaimLedger(analysts=ANALYSTS)
    target_claims = soak_claims()

    def participant(index):
        if index == ANALYSTS:
            return feed_queue(ledger, target_claims)
        try:
            return work_the_queue(analysts[index], index, ledger)
        finally:
            ledger.analyst_finished()

    results = run_concurrently(participant, [(i,) for i in range(ANALYSTS + 1)])
    resolved = [pk for per_analyst in results[:ANALYSTS] for pk in per_analyst]
    total = KEEP_OPEN + results[ANALYSTS]

    assert not ledger.double_claims, f"items held by two analysts at once: {ledger.double_claims[:5]}"
    assert ledger.claims >= max(total, target_claims), "every item was claimed at least once"
    assert TriageItem.objects.count() == total
    assert not TriageItem.objects.exclude(status=TriageStatus.RESOLVED).exists(), "items were lost"
    assert len(resolved) == len(set(resolved)) == total, "an item was resolved twice, or not at all"
    events = ResolutionEvent.objects.values("item").annotate(n=Count("pk"))
    assert events.count() == total and {row["n"] for row in events} == {1}
    labels = Label.objects.filter(source=LabelSource.TRIAGE, is_current=True)
    assert labels.count() == total == labels.values("query").distinct().count()
