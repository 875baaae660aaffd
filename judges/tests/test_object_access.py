"""Least visibility: who may open which verdict, judge and run (judges/views.py `_get_*_for_user`).

Analysts read the live verdicts their triage items link to; a calibration verdict (a gold
set's item, the full prompt, the reference SQL) is the ML engineers' and answers 404 to an
analyst, as if it did not exist. One test per role, plus the outsider.
"""

import pytest
from django.urls import reverse

from judges.models import Judge, JudgeVersion, Verdict
from judges.tests.calibration_builders import make_run
from labelling.models import GoldSet, GoldSetVersion, Query

pytestmark = pytest.mark.django_db

GOLD_SQL = "SELECT SUM(total) FROM orders WHERE status <> 'cancelled' -- the reference"


@pytest.fixture
def verdicts():
    judge = Judge.objects.create(name="visible")
    version = JudgeVersion.objects.create(judge=judge, number=1, backend="verifier")
    gold_set = GoldSet.objects.create(name="private-gold")
    gold_version = GoldSetVersion.objects.create(gold_set=gold_set, number=1)
    run = make_run(gold_version)
    gold_query = Query.objects.create(question="Revenue?", sql=GOLD_SQL, gold_set=gold_set, external_id="gold-1")
    live_query = Query.objects.create(question="Orders?", sql="SELECT COUNT(*) FROM orders", external_id="live-1")
    return {
        "live": Verdict.objects.create(judge_version=version, query=live_query, run=None, decision="accept"),
        "calibration": Verdict.objects.create(judge_version=version, query=gold_query, run=run, decision="reject"),
        "judge": judge,
        "run": run,
    }


def open_verdict(client, verdict):
    return client.get(reverse("judges:verdict_detail", args=[verdict.pk]))


def test_an_analyst_reads_a_live_verdict(client_for, verdicts):
    response = open_verdict(client_for("analyst"), verdicts["live"])
    assert response.status_code == 200 and "(live)" in response.content.decode()


def test_an_analyst_cannot_read_a_calibration_verdict(client_for, verdicts):
    response = open_verdict(client_for("analyst"), verdicts["calibration"])
    assert response.status_code == 404
    assert GOLD_SQL not in response.content.decode()


def test_an_ml_engineer_reads_live_and_calibration_verdicts(client_for, verdicts):
    client = client_for("ml_engineer")
    assert open_verdict(client, verdicts["live"]).status_code == 200
    assert open_verdict(client, verdicts["calibration"]).status_code == 200


def test_an_admin_reads_every_verdict(client_for, verdicts):
    client = client_for("admin")
    assert open_verdict(client, verdicts["live"]).status_code == 200
    assert open_verdict(client, verdicts["calibration"]).status_code == 200


@pytest.mark.parametrize("role", ["labeller", "outsider"])
def test_a_labeller_and_an_outsider_read_no_verdict(client_for, verdicts, role):
    client = client_for(role)
    assert open_verdict(client, verdicts["live"]).status_code == 403
    assert open_verdict(client, verdicts["calibration"]).status_code == 403


def test_a_verdict_that_does_not_exist_is_a_404(client_for, verdicts):
    assert client_for("ml_engineer").get(reverse("judges:verdict_detail", args=[10_000_000])).status_code == 404


@pytest.mark.parametrize(
    ("role", "expected"), [("ml_engineer", 200), ("admin", 200), ("analyst", 403), ("outsider", 403)]
)
def test_judges_and_runs_open_to_ml_engineers_only(client_for, verdicts, role, expected):
    client = client_for(role)
    assert client.get(reverse("judges:judge_detail", args=[verdicts["judge"].pk])).status_code == expected
    assert client.get(reverse("judges:run_detail", args=[verdicts["run"].pk])).status_code == expected
    assert client.post(reverse("judges:run_cancel", args=[verdicts["run"].pk])).status_code in (
        (302,) if expected == 200 else (expected,)
    )
