"""The pipeline against the real verifier, fan-out detector, probes and judges.

These need `probes.verifier`, `probes.fanout`, `probes.selectors` and
`probes.execution`; the tests that judge also need `judges.services` and the judges'
vendor simulator. Each is skipped until the branch providing it is merged. The
warehouse is a SQLite file built here, with a fan-out trap: orders (412 rows) joined to
order_items (several rows per order).
"""

import pytest

for module in ("probes.verifier", "probes.fanout", "probes.selectors", "probes.execution"):
    pytest.importorskip(module, reason=f"{module} is not merged yet")

from judges.models import Backend, Judge, JudgeVersion, Verdict  # noqa: E402
from judges.tests.factories import simulated_version  # noqa: E402
from simulator import SimModel, Simulator, start_in_thread  # noqa: E402
from triage.models import IngestStatus, LiveQuery, TriageItem  # noqa: E402
from triage.pipeline import live_query_process  # noqa: E402
from triage.policy import policy_publish  # noqa: E402
from triage.tests import factories  # noqa: E402

pytestmark = pytest.mark.django_db


def needs_live_judging():
    """Skip a test that calls live judges until `judges.services` is merged."""
    pytest.importorskip("judges.services", reason="judges.services is not merged yet")


FANOUT_SQL = factories.FANOUT_SQL
CLEAN_SQL = factories.CLEAN_SQL
UNKNOWN_COLUMN_SQL = factories.UNKNOWN_COLUMN_SQL


@pytest.fixture
def shop(tmp_path, monkeypatch):
    return factories.fanout_trap_warehouse(tmp_path / "shop.sqlite3", monkeypatch)


def verifier_judge():
    judge = Judge.objects.create(name="verifier-judge")
    return JudgeVersion.objects.create(judge=judge, number=1, backend=Backend.VERIFIER)


def run(shop, sql, **policy_changes):
    live = factories.live_query(wh=shop, sql=sql)
    live_query_process(live_id=live.pk)
    live.refresh_from_db()
    return live


def test_the_fanout_detector_confirms_a_fanning_join_and_puts_it_first(shop):
    policy_publish(changes={"run_fanout_detector": True, "run_verifier": True, "audit_share": 0})
    live = run(shop, FANOUT_SQL)
    assert live.status == IngestStatus.FLAGGED
    item = TriageItem.objects.get(query=live.query)
    assert item.probe_confirmed and item.error_class_guess == "join_fanout"
    probe = live.probes.get().probe_run
    assert probe.outcome == "confirmed" and probe.probe_sql
    assert live.result_preview.get("columns"), "a flagged query gets a result preview"


def test_a_clean_query_passes(shop):
    policy_publish(changes={"run_fanout_detector": True, "run_verifier": True, "audit_share": 0})
    assert run(shop, CLEAN_SQL).status == IngestStatus.PASSED


def test_a_verifier_failure_flags_with_its_findings(shop):
    policy_publish(changes={"run_fanout_detector": False, "run_verifier": True, "flag_on_verifier_failure": True})
    live = run(shop, UNKNOWN_COLUMN_SQL)
    assert live.status == IngestStatus.FLAGGED
    assert live.verifier_result["passed"] is False
    assert TriageItem.objects.get(query=live.query).verifier_failed


def test_live_judges_store_one_verdict_each_and_a_redelivery_reuses_it(shop):
    needs_live_judging()
    judge = verifier_judge()
    policy_publish(changes={"run_fanout_detector": False, "run_verifier": False}, judge_versions=[judge])
    live = run(shop, UNKNOWN_COLUMN_SQL)
    verdicts = Verdict.objects.filter(query=live.query, run__isnull=True)
    assert verdicts.count() == 1
    assert verdicts.get().decision in ("accept", "reject", "error")
    LiveQuery.objects.filter(pk=live.pk).update(status=IngestStatus.PENDING)
    live_query_process(live_id=live.pk)
    assert Verdict.objects.filter(query=live.query, run__isnull=True).count() == 1


@pytest.fixture
def simulator(settings):
    """Run the judges app's vendor simulator on a free local port with an always-right model."""
    needs_live_judging()
    models = {
        "sim-perfect": SimModel(
            family="simulated",
            catch_probability=1.0,
            false_reject_probability=0.0,
            flip_probability=0.0,
            class_accuracy=1.0,
            latency_ms=2,
            retry_after_s=0.05,
        )
    }
    server, url = start_in_thread(Simulator(models=models))
    settings.VENDOR_SIMULATOR_URL = url
    yield url
    server.shutdown()
    server.server_close()


def simulated_judges(count):
    return [simulated_version(name=f"sim-judge-{i}") for i in range(count)]


WRONG_MARKED = FANOUT_SQL + " -- sim: wrong join_fanout"


# Two judges run on threads with their own connections (on PostgreSQL), so the rows they
# read must be committed: these tests use a transactional database.
@pytest.mark.django_db(transaction=True)
def test_judges_that_agree_on_a_wrong_query_flag_it_with_their_reasons(shop, simulator):
    judges = simulated_judges(2)
    policy_publish(changes={"run_fanout_detector": False, "run_verifier": False}, judge_versions=judges)
    live = run(shop, WRONG_MARKED)
    assert live.status == IngestStatus.FLAGGED
    item = TriageItem.objects.get(query=live.query)
    assert item.judges_agreeing == 2 and item.error_class_guess == "join_fanout"
    assert set(item.rejecting_judges.all()) == set(judges)


@pytest.mark.django_db(transaction=True)
def test_a_query_every_judge_errors_on_lands_in_the_unjudged_list(shop, simulator):
    judges = simulated_judges(2)
    policy_publish(changes={"run_fanout_detector": False, "run_verifier": False}, judge_versions=judges)
    live = run(shop, CLEAN_SQL + " -- sim: correct fault=malformed")
    assert live.status == IngestStatus.UNJUDGED
    assert set(Verdict.objects.filter(query=live.query).values_list("decision", flat=True)) == {"error"}
    assert not TriageItem.objects.filter(query=live.query).exists()
