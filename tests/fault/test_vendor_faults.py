"""A calibration run against a vendor that fails 20% of its calls: it completes, faults are errors, never rejects."""

import re
import threading

import pytest
from django.db.models import Count

from judges.models import CalibrationRun, RunStatus, Verdict
from judges.services import calibration_run_start
from judges.tests.factories import gold_set_version_with, mixed_items, simulated_version
from simulator import SimModel, Simulator, start_in_thread
from tests.support.fixtures import WorkerProcess, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.slow]

CORRECT, WRONG, REPEATS = 45, 15, 2
# 5% each of 429 (retry-after), 500, hangs past the client's timeout and malformed tool
# output: 20% of calls fault. The model is otherwise perfect and never flips, so any reject
# on a correct item could only be a fault folded into a verdict.
FAULTY = SimModel(
    catch_probability=1.0,
    false_reject_probability=0.0,
    flip_probability=0.0,
    class_accuracy=1.0,
    latency_ms=2,
    rate_limit_rate=0.05,
    server_error_rate=0.05,
    timeout_rate=0.05,
    malformed_rate=0.05,
    retry_after_s=0.05,
    hang_s=1.5,
)
# No retries for 5xx and timeouts, so those faults surface as error verdicts; 429s are
# still waited out (they are pacing, not failures).
JUDGE_CONFIG = {"timeout_s": 0.5, "max_retries": 0, "retry_base_delay_s": 0.01, "concurrency": 8}
ERROR_REASONS = {
    "500": re.compile(r"HTTP 500"),
    "timeout": re.compile(r"Timeout", re.I),
    "malformed": re.compile(r"malformed answer", re.I),
}


class RecordingSimulator(Simulator):
    """The simulator, noting every well-formed answer it gives (model, SQL, decision)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.answers: list[tuple[str, str, str]] = []
        self.answers_lock = threading.Lock()

    def answer(self, model_name, sql, tool_name, malformed):
        payload = super().answer(model_name, sql, tool_name, malformed)
        if not malformed:
            with self.answers_lock:
                self.answers.append((model_name, sql, payload["decision"]))
        return payload


@pytest.fixture
def faulty_vendor(settings):
    simulator = RecordingSimulator(models={"sim-faulty": FAULTY})
    server, url = start_in_thread(simulator)
    settings.VENDOR_SIMULATOR_URL = url
    simulator.url = url
    yield simulator
    server.shutdown()
    server.server_close()


def test_a_run_against_a_vendor_failing_one_call_in_five_completes_with_errors_and_no_invented_rejects(
    transactional_db, faulty_vendor
):
    version = gold_set_version_with(mixed_items(correct=CORRECT, wrong=WRONG))
    judges = [
        simulated_version(name="faulty-anthropic", backend="anthropic", model="sim-faulty", **JUDGE_CONFIG),
        simulated_version(name="faulty-openai", backend="openai_compatible", model="sim-faulty", **JUDGE_CONFIG),
    ]
    worker = WorkerProcess(extra_env={"VENDOR_SIMULATOR_URL": faulty_vendor.url}).start()
    try:
        run = calibration_run_start(gold_set_version=version, judge_versions=judges, repeats=REPEATS)
        wait_for(
            lambda: CalibrationRun.objects.get(pk=run.pk).status == RunStatus.COMPLETED,
            timeout=90,
            what=f"the run to complete (worker log: {worker.output()[-3000:]})",
        )
    finally:
        worker.stop()

    run.refresh_from_db()
    verdicts = Verdict.objects.filter(run=run).select_related("query")
    slots = (CORRECT + WRONG) * REPEATS * len(judges)
    assert verdicts.count() == slots == run.done_count
    per_slot = verdicts.values("judge_version", "query", "repeat").annotate(n=Count("id"))
    assert per_slot.count() == slots and {row["n"] for row in per_slot} == {1}

    # Faults happened, of every kind, and the run counted those that surfaced as errors.
    faults = {key.rsplit(":", 1)[-1] for key, n in faulty_vendor.stats.items() if ":fault:" in key and n}
    assert faults == {"429", "500", "timeout", "malformed"}, faulty_vendor.stats
    errors = verdicts.filter(decision="error")
    assert errors.exists() and run.error_count == errors.count()
    kinds = {kind for error in errors for kind, pattern in ERROR_REASONS.items() if pattern.search(error.reason)}
    assert kinds == {"500", "timeout", "malformed"}
    assert all(any(p.search(e.reason) for p in ERROR_REASONS.values()) for e in errors), "an unexplained error"
    assert not errors.filter(reason__contains="429").exists(), "a rate limit is waited out, not an error"

    # No reject is invented: rejects fall only on wrong items, each one the simulator's own answer.
    wrong_sql = set(version.items.filter(decision="wrong").values_list("query__sql", flat=True))
    rejected_by_vendor = {sql for model, sql, decision in faulty_vendor.answers if decision == "reject"}
    rejects = verdicts.filter(decision="reject")
    assert rejects.exists()
    for verdict in rejects:
        assert verdict.query.sql in wrong_sql and verdict.query.sql in rejected_by_vendor
        assert verdict.error_class_guess == "join_fanout"
    correct_decisions = set(verdicts.exclude(query__sql__in=wrong_sql).values_list("decision", flat=True))
    assert correct_decisions <= {"accept", "error"}
    wrong_decisions = set(verdicts.filter(query__sql__in=wrong_sql).values_list("decision", flat=True))
    assert wrong_decisions <= {"reject", "error"}
