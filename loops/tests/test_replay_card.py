"""The triage dashboard's replay card: served by the loop lab, reached by URL from the dashboard."""

import pytest
from django.urls import reverse

from loops.models import RequestAttempt
from tests.support.access import admitted
from triage.tests import factories

pytestmark = pytest.mark.django_db


def test_the_triage_dashboard_loads_the_replay_card_from_the_loop_lab(client_for):
    html = client_for("analyst").get("/triage/dashboard/").content.decode()
    assert f'hx-get="{reverse("loops:replay-card")}"' in html


def test_the_replay_card_shows_the_replayed_spend_per_accepted_answer(client_for):
    client = client_for("analyst")
    assert "Replayed spend per accepted answer" not in client.get(reverse("loops:replay-card")).content.decode()
    for index, failures in enumerate([["syntax", ""], ["unknown_obj"]]):
        live = factories.live_query(external_id=f"r{index}")
        for position, failure in enumerate(failures, start=1):
            RequestAttempt.objects.create(
                live_query=live, position=position, tier="cheap", attempt=position, failure_class=failure, tokens=1
            )
    response = client.get(reverse("loops:replay-card"))
    replay = response.context["loop_replay"]
    # r0 repairs once and is accepted for 2 units; r1 climbs and finds no strong draft on record.
    assert replay["counts"]["accepted"] == 1 and replay["counts"]["unrecorded"] == 1
    assert replay["spend_per_accepted"] == pytest.approx(3.0)
    assert "Replayed spend per accepted answer" in response.content.decode()


@pytest.mark.parametrize(("who", "allowed"), [("analyst", True), ("ml_engineer", True), ("labeller", False)])
def test_the_replay_card_is_for_whoever_sees_the_live_dashboard(client_for, who, allowed):
    response = client_for(who).get(reverse("loops:replay-card"))
    assert admitted(response) is allowed and (allowed or response.status_code == 403)
