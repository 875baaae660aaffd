"""The triage dashboard's queue times use the product's one percentile (`judges.metrics.percentile`)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from triage.models import Resolution, TriageItem, TriageStatus
from triage.selectors import dashboard_figures
from triage.tests import factories


@pytest.mark.django_db
def test_the_triage_dashboards_queue_times_use_the_same_percentile():
    now = timezone.now()
    for minutes in (10, 20, 30, 40):
        item = factories.triage_item()
        TriageItem.objects.filter(pk=item.pk).update(
            status=TriageStatus.RESOLVED,
            resolution=Resolution.FALSE_ALARM,
            created_at=now - timedelta(minutes=minutes),
            resolved_at=now,
            time_spent_s=minutes,
        )
    figures = dashboard_figures()
    # Nearest rank would have said 30 and 40.
    assert figures["resolution_minutes_p50"] == pytest.approx(25.0, abs=0.1)
    assert figures["resolution_minutes_p90"] == pytest.approx(37.0, abs=0.1)
    assert figures["seconds_spent_p50"] == pytest.approx(25.0)
