"""Every backend through the real SDKs against the local vendor simulator, faults included."""

import pytest

from judges.backends import BackendCannotJudge, get_backend
from judges.backends.anthropic_backend import AnthropicBackend
from judges.backends.base import VerdictResult, token_cost
from judges.demo import run_inline
from judges.models import CalibrationRun, Decision, RunChunk, Verdict
from judges.runner import run_chunk_execute
from judges.services import judge_live_query
from judges.tests.factories import gold_set_version_with, mixed_items, simulated_version
from labelling.models import Query
from probes.outcome import Outcome, OutcomeKind

pytestmark = pytest.mark.django_db

WRONG_SQL = (
    "SELECT o.id, SUM(oi.price) FROM orders o JOIN order_items oi ON oi.order_id = o.id "
    "GROUP BY o.id -- sim: wrong join_fanout"
)
RIGHT_SQL = "SELECT COUNT(*) FROM orders -- sim: correct"
# Client timeout for calls the simulator is told to hang on (it hangs 2.5 s, see conftest).
HANG_TIMEOUT_S = 0.25


def query(sql):
    return Query(question="How much revenue per order?", sql=sql, dialect="sqlite", external_id="q")


@pytest.mark.parametrize("backend", ["anthropic", "openai_compatible"])
def test_a_vendor_backend_rejects_a_wrong_query_and_accepts_a_right_one(vendor_simulator, backend):
    version = simulated_version(backend=backend)
    judge = get_backend(version)
    wrong, right = judge.judge(query(WRONG_SQL)), judge.judge(query(RIGHT_SQL))
    assert (wrong.decision, wrong.error_class) == ("reject", "join_fanout")
    assert (right.decision, right.error_class) == ("accept", "")
    assert right.model_reported == "sim-perfect"
    assert right.output_tokens > 0 and right.cost_usd > 0
    assert right.context["simulated"] is True


@pytest.mark.parametrize("backend", ["anthropic", "openai_compatible"])
def test_calls_to_one_endpoint_share_a_client_and_its_kept_alive_connection(vendor_simulator, backend):
    judge = get_backend(simulated_version(backend=backend))
    for sql in [RIGHT_SQL, WRONG_SQL] * 3:
        judge.judge(query(sql))
    # Another judge version on the same endpoint: the same client, the same connection.
    get_backend(simulated_version(name="another", backend=backend)).judge(query(RIGHT_SQL))
    vendor = "anthropic" if backend == "anthropic" else "openai"
    assert vendor_simulator.stats[f"{vendor}:answered"] == 7
    assert vendor_simulator.stats["connections"] == 1


def test_anthropic_backend_caches_the_static_prompt_and_prices_cache_tokens(vendor_simulator):
    version = simulated_version()
    # Long enough to reach the family's minimum cacheable length (1,024 tokens).
    version.prompt_template = "Review the SQL against the question; answer with the tool.\n" * 90
    version.save()
    judge = get_backend(version)
    first, second = judge.judge(query(RIGHT_SQL)), judge.judge(query(WRONG_SQL))
    assert first.cache_write_tokens > 0 and first.cache_read_tokens == 0
    assert second.cache_read_tokens == first.cache_write_tokens and second.cache_write_tokens == 0
    assert first.raw_response["content"][0]["name"] == "record_verdict"


def test_openai_backend_reads_a_json_schema_answer(vendor_simulator):
    judge = get_backend(simulated_version(backend="openai_compatible", structured="json_schema"))
    result = judge.judge(query(WRONG_SQL))
    assert result.decision == "reject"
    assert result.raw_response["choices"][0]["message"]["content"]


@pytest.mark.parametrize("backend", ["anthropic", "openai_compatible"])
@pytest.mark.parametrize(
    ("fault", "decision", "reason_part"),
    [
        ("429x2", "accept", None),  # rate limit waited out, not counted
        ("529x1", "accept", None),  # overload waited out, not counted
        ("500x2", "accept", None),  # within the retry budget
        ("500", "error", "gave up after 4 attempts"),
        ("timeout", "error", "Timeout"),
        ("malformed", "error", "malformed answer"),
    ],
)
def test_a_vendor_fault_is_waited_out_or_becomes_an_error_never_a_reject(
    vendor_simulator, backend, fault, decision, reason_part
):
    # A hang outlasts any client timeout; a short one keeps its four attempts quick.
    config = {"timeout_s": HANG_TIMEOUT_S} if fault == "timeout" else {}
    version = simulated_version(backend=backend, **config)
    result = get_backend(version).judge(query(f"SELECT 1 -- sim: correct fault={fault}"))
    assert result.decision == decision
    if reason_part:
        assert reason_part in result.reason


def test_rate_limits_are_retried_without_counting_against_the_retry_budget(vendor_simulator):
    version = simulated_version(max_retries=0)
    result = get_backend(version).judge(query("SELECT 1 -- sim: correct fault=429x3"))
    assert result.decision == "accept"
    assert result.context["attempts"]["rate_limited"] == 3
    assert result.context["attempts"]["retried"] == 0


def test_a_rate_limit_that_never_clears_ends_as_an_error_after_the_patience_limit(vendor_simulator):
    version = simulated_version(rate_limit_patience_s=0.2)
    result = get_backend(version).judge(query("SELECT 1 -- sim: wrong join_fanout fault=429"))
    assert result.decision == "error"
    assert "rate limited" in result.reason


def test_self_consistency_takes_the_majority_of_its_samples(vendor_simulator):
    version = simulated_version(backend="self_consistency", samples=3, vendor="openai_compatible")
    result = get_backend(version).judge(query(WRONG_SQL))
    assert result.decision == "reject"
    assert result.context["votes"] == {"reject": 3}
    assert vendor_simulator.stats["openai:answered"] == 3


def test_self_consistency_whose_samples_all_fail_is_an_error(vendor_simulator):
    version = simulated_version(backend="self_consistency", samples=3)
    result = get_backend(version).judge(query("SELECT 1 -- sim: wrong join_fanout fault=malformed"))
    assert result.decision == "error"


def test_hypothesis_judge_returns_a_fanout_hypothesis_with_a_probe(vendor_simulator):
    answer = AnthropicBackend(simulated_version(), hypotheses=True).judge(query(WRONG_SQL))
    (hypothesis,) = answer.hypotheses
    assert hypothesis["suspected"] is True
    assert hypothesis["join_table"] == "order_items"
    assert hypothesis["probe_sql"].startswith("SELECT COUNT(*)")


def test_hypothesis_probe_judge_without_a_warehouse_is_an_error_never_an_accept(vendor_simulator):
    result = get_backend(simulated_version(backend="hypothesis_probe")).judge(query(WRONG_SQL))
    assert result.decision == "error", "no probe could run: nothing was checked"
    assert result.context["probe_outcomes"][0]["outcome"] == "refused"
    assert result.input_tokens > 0, "the model's call is still counted"


def test_verifier_judge_without_a_warehouse_is_an_error_not_a_reject():
    result = get_backend(simulated_version(backend="verifier")).judge(query(WRONG_SQL))
    assert result.decision == "error"


def test_a_replay_judge_cannot_judge():
    with pytest.raises(BackendCannotJudge):
        get_backend(simulated_version(backend="replay")).judge(query(RIGHT_SQL))


@pytest.mark.parametrize("backend", ["anthropic", "openai_compatible"])
def test_a_run_with_injected_faults_has_every_verdict_the_right_errors_and_no_invented_reject(
    vendor_simulator, backend
):
    faults = ["429x2", "529x1", "500x1", "500", "timeout", "malformed"]
    version = gold_set_version_with(mixed_items(correct=6, wrong=4, faults=faults))
    # The "timeout" item hangs on every attempt; the calls that answer take milliseconds.
    judge_version = simulated_version(backend=backend, timeout_s=0.5)
    run = run_inline(gold_set_version=version, judge_versions=[judge_version], repeats=2)
    verdicts = Verdict.objects.filter(run=run)
    assert run.status == "completed"
    assert verdicts.count() == 16 * 2
    errors = verdicts.filter(decision=Decision.ERROR)
    # "500" fails for good every time; timeout and malformed likewise. The x1/x2 faults clear.
    assert sorted({e.query.sql.split("fault=")[1] for e in errors}) == ["500", "malformed", "timeout"]
    assert errors.count() == 3 * 2
    rejects = verdicts.filter(decision=Decision.REJECT)
    assert rejects.count() == 4 * 2
    assert all("wrong" in v.query.sql for v in rejects)
    assert run.error_count == 6 and run.done_count == 32


def test_judging_a_live_query_stores_one_verdict_and_returns_it_again(vendor_simulator):
    live = Query.objects.create(question="q", sql=WRONG_SQL, source="live", external_id="live-1")
    version = simulated_version()
    first = judge_live_query(judge_version=version, query=live)
    again = judge_live_query(judge_version=version, query=live)
    assert first.pk == again.pk and first.run is None
    assert first.decision == "reject"
    assert vendor_simulator.stats["anthropic:answered"] == 1


def test_a_live_query_hit_by_a_vendor_outage_gets_an_error_verdict(vendor_simulator):
    live = Query.objects.create(
        question="q", sql="SELECT 1 -- sim: wrong join_fanout fault=500", source="live", external_id="live-2"
    )
    verdict = judge_live_query(judge_version=simulated_version(), query=live)
    assert verdict.decision == "error"
    assert "500" in verdict.reason


def test_a_run_through_the_message_batches_api_stores_every_verdict_at_half_price(vendor_simulator):
    version = gold_set_version_with(mixed_items(correct=5, wrong=3, faults=["500", "malformed"]))
    batched = simulated_version(name="batched", use_batches=True, batch_poll_s=0.05)
    direct = simulated_version(name="direct")
    run = run_inline(gold_set_version=version, judge_versions=[batched, direct], repeats=1)
    by_batch = Verdict.objects.filter(run=run, judge_version=batched)
    assert run.status == "completed"
    assert by_batch.count() == 10
    assert by_batch.filter(decision="reject").count() == 3
    assert sorted(v.query.sql.split("fault=")[1] for v in by_batch.filter(decision="error")) == ["500", "malformed"]
    batch_id = RunChunk.objects.get(run=run, judge_version=batched).batch_id
    assert batch_id.startswith("msgbatch_") and all(v.context["batch_id"] == batch_id for v in by_batch)
    verdict = by_batch.filter(decision="accept").first()
    tokens = {
        name: getattr(verdict, name)
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    }
    assert verdict.output_tokens > 0
    assert verdict.cost_usd == token_cost(batched, **tokens, discount=0.5)
    assert vendor_simulator.stats["anthropic:batch_requests"] == 10


def test_a_resumed_batch_chunk_collects_the_same_batch_instead_of_paying_twice(vendor_simulator):
    version = gold_set_version_with(mixed_items(correct=4, wrong=2))
    batched = simulated_version(name="batched", use_batches=True, batch_poll_s=0.05)
    run = run_inline(gold_set_version=version, judge_versions=[batched], repeats=1)
    chunk = RunChunk.objects.get(run=run)
    # As if the worker died after submitting the batch, before storing what it returned.
    Verdict.objects.filter(run=run).delete()
    RunChunk.objects.filter(pk=chunk.pk).update(status="pending")
    CalibrationRun.objects.filter(pk=run.pk).update(status="running")
    assert run_chunk_execute(chunk_id=chunk.pk) == "done"
    assert Verdict.objects.filter(run=run).count() == 6
    assert vendor_simulator.stats["anthropic:batch_requests"] == 6
    assert len(vendor_simulator.batches) == 1


def test_a_verdict_is_a_checkers_outcome_and_back():
    from_fault = VerdictResult.from_outcome(Outcome.fault("transport", "warehouse down"))
    assert (from_fault.decision, from_fault.context["fault"]) == ("error", "transport")
    assert from_fault.outcome == Outcome.fault("transport", "warehouse down")
    cost = VerdictResult.from_outcome(Outcome.failed("timeout", "cross join"))
    assert (cost.decision, cost.error_class, cost.context["failure_class"]) == ("reject", "other", "timeout")
    assert VerdictResult.from_outcome(Outcome.passed("ok")).outcome.kind is OutcomeKind.PASSED
