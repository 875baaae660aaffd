"""The loop lab from stored measurements: the `loop_model` and `replay_policy` commands and the page."""

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from judges import metrics
from judges.tests.calibration_builders import add_verdicts, labels, make_gold_set, make_judge_version, make_run
from loops.loop_model import FIGURES
from loops.models import RequestAttempt
from loops.tests.test_policy_replay import SEED_001_CASES, jsonl_for
from triage.tests import factories

pytestmark = pytest.mark.django_db
WRONG, CORRECT = 20, 80


@pytest.fixture
def calibrated():
    """A gold set of 20 wrong and 80 correct items, and two judges with known rates on it."""
    version = make_gold_set("loop-gold", labels(WRONG, CORRECT))
    run = make_run(version)
    verifier = make_judge_version("verifier", backend="verifier")
    graded = make_judge_version("graded")
    # verifier: catches 14 of 20 wrong, rejects 1 of 80 correct; graded: 15 of 20, 5 of 80.
    add_verdicts(run, verifier, ["reject"] * 14 + ["accept"] * 6 + ["reject"] + ["accept"] * 79, latency=4.0)
    add_verdicts(
        run, graded, ["reject"] * 15 + ["accept"] * 5 + ["reject"] * 5 + ["accept"] * 75, cost="0.019", latency=2100.0
    )
    return version


def loop_model_json(*args) -> dict:
    out = StringIO()
    call_command("loop_model", "--format", "json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_loop_model_json_has_every_figure_with_an_interval_for_each_checker_and_the_baseline(calibrated):
    report = loop_model_json(
        "--gold-set", "loop-gold", "--checker", "verifier", "--checker", "graded", "--generation-cost", "0.0041"
    )
    assert [c["checker"] for c in report["checkers"]] == ["no checker", "verifier", "graded"]
    for checker in report["checkers"]:
        for key in FIGURES:
            assert set(checker[key]) == {"value", "ci95"}, key
            low, high = checker[key]["ci95"]
            assert low <= checker[key]["value"] + 1e-9 <= high + 2e-9, (checker["checker"], key)
    accuracy = report["inputs"]["generator_accuracy"]
    assert accuracy["value"] == pytest.approx(0.8)
    assert accuracy["ci95"] == pytest.approx(list(metrics.wilson_interval(0.8, 100)))
    verifier = report["checkers"][1]
    assert verifier["catch_rate"]["value"] == pytest.approx(14 / 20)
    assert verifier["catch_rate"]["ci95"] == pytest.approx(list(metrics.wilson_interval(0.7, 20)))
    # The closed form at the measured point: p = 0.8, catch 0.7, false reject 1/80.
    rejected_first = 0.2 * 0.7 + 0.8 / 80
    expected_calls = 1 + rejected_first + rejected_first * (1 - 0.71)
    assert verifier["calls_per_question"]["value"] == pytest.approx(expected_calls)
    assert verifier["cost_per_accepted_usd"]["value"] == pytest.approx(
        expected_calls * 0.0041 / (1 - rejected_first * 0.29 * 0.6)
    )
    graded = report["checkers"][2]
    assert graded["cost_per_accepted_usd"]["value"] > verifier["cost_per_accepted_usd"]["value"]
    assert graded["latency_ms_p50"]["value"] == pytest.approx(2100.0)
    assert report["checkers"][0]["wrong_shipped_per_1000"]["value"] == pytest.approx(200.0)


def test_loop_model_takes_an_ensemble_and_comma_separated_checkers(calibrated):
    report = loop_model_json("--gold-set", "loop-gold", "--checker", "verifier,verifier+graded@any")
    ensemble = report["checkers"][2]
    assert ensemble["checker"] == "verifier+graded@any"
    assert ensemble["check_cost_usd"] == pytest.approx(0.019)
    assert ensemble["catch_rate"]["value"] >= report["checkers"][1]["catch_rate"]["value"]
    # Members run one after the other: the ensemble's check takes both latencies.
    assert ensemble["latency_ms_p50"]["value"] == pytest.approx(2104.0)


def test_loop_model_measures_retry_success_from_recorded_attempts(calibrated):
    live = [factories.live_query() for _ in range(10)]
    for index, query in enumerate(live):
        RequestAttempt.objects.create(live_query=query, position=1, tier="cheap", attempt=1, failure_class="syntax")
        passed = index < 6
        RequestAttempt.objects.create(
            live_query=query, position=2, tier="cheap", attempt=2, failure_class="" if passed else "syntax"
        )
    report = loop_model_json("--gold-set", "loop-gold", "--checker", "verifier")
    first, second = report["inputs"]["retry_success"]
    assert (first["value"], first["n"], first["source"]) == (0.6, 10, "recorded attempts")
    assert first["ci95"] == pytest.approx(list(metrics.wilson_interval(0.6, 10)))
    assert (second["value"], second["source"]) == (0.4, "entered")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gold-set", "nope", "--checker", "verifier"], "no version"),
        (["--gold-set", "loop-gold", "--checker", "ghost"], "no verdicts"),
        (["--gold-set", "loop-gold", "--checker", "a,b,c,d,e"], "at most 4"),
        (["--gold-set", "loop-gold", "--retry-success", "0.7,1.5"], "between 0 and 1"),
        (["--gold-set", "loop-gold", "--generation-cost", "-1"], "negative"),
        (["--gold-set", "loop-gold", "--checker", "verifier+graded@sometimes"], "unknown ensemble rule"),
    ],
)
def test_loop_model_refuses_bad_input_with_a_clear_message(calibrated, args, message):
    with pytest.raises(CommandError, match=message):
        loop_model_json(*args)


def replay_json(*args) -> dict:
    out = StringIO()
    call_command("replay_policy", "--format", "json", *args, stdout=out)
    return json.loads(out.getvalue())


def test_replay_policy_reproduces_seed_001s_fixture_from_a_file(tmp_path):
    path = tmp_path / "attempts.jsonl"
    path.write_text("\n".join(jsonl_for(SEED_001_CASES)) + "\n")
    summary = replay_json("--attempts", str(path), "--policy", "seed001", "--weights", "cheap=1,strong=8")
    got = {r["request_id"]: (r["outcome"], r["tier"], r["spent"]) for r in summary["requests"]}
    assert got == {name: (outcome, tier, spent) for name, _, _, outcome, tier, spent in SEED_001_CASES}
    assert summary["counts"]["accepted"] == 4 and summary["spend_per_accepted"] == pytest.approx(8.0)
    assert len(summary["ledgers"]["repair then climb"]) == 3


def test_replay_policy_reads_a_user_table_file(tmp_path):
    path = tmp_path / "attempts.jsonl"
    path.write_text("\n".join(jsonl_for(SEED_001_CASES)) + "\n")
    table = tmp_path / "never-climb.json"
    table.write_text(json.dumps({"actions": {"syntax": "repair"}, "max_same_tier": 3}))
    summary = replay_json("--attempts", str(path), "--policy", str(table))
    assert summary["policy"]["name"] == "never-climb"
    # "repair then climb" repairs a second time and finds no third cheap draft on record.
    assert summary["counts"] == {"accepted": 1, "stop": 4, "stop_backoff": 0, "escalate": 0, "unrecorded": 1}


def test_replay_policy_refuses_a_bad_file_naming_the_line(tmp_path):
    path = tmp_path / "attempts.jsonl"
    path.write_text('{"request_id": "a", "tier": "cheap", "failure_class": null}\n{"request_id": "b"}\n')
    with pytest.raises(CommandError, match="line 2"):
        replay_json("--attempts", str(path))
    with pytest.raises(CommandError, match="No such file"):
        replay_json("--attempts", str(tmp_path / "missing.jsonl"))


def test_replay_policy_replays_live_attempts_since_a_time():
    query = factories.live_query(external_id="live-1")
    for position, (tier, attempt, failure) in enumerate([("cheap", 1, "unknown_obj"), ("strong", 1, "")], start=1):
        RequestAttempt.objects.create(
            live_query=query, position=position, tier=tier, attempt=attempt, failure_class=failure, tokens=100
        )
    summary = replay_json("--live", "7d", "--weights", "cheap=1,strong=8")
    assert summary["requests"] == [{"request_id": "live-1", "outcome": "accepted", "tier": "strong", "spent": 900.0}]
    assert replay_json("--live", "2999-01-01")["requests"] == []
    with pytest.raises(CommandError, match="--live"):
        replay_json("--live", "last tuesday")


# --- the page ------------------------------------------------------------------------------


def test_the_loop_lab_shows_checkers_side_by_side_with_intervals(calibrated, client_for):
    client = client_for("ml_engineer")
    response = client.get(reverse("loops:lab"), {"version": calibrated.pk, "checker": ["verifier:1", "graded:1"]})
    assert response.status_code == 200
    report = response.context["report"]
    assert [c["checker"] for c in report["checkers"]] == ["no checker", "verifier:1", "graded:1"]
    body = response.content.decode()
    assert body.count('class="checker"') == 3
    assert "Wrong answers shipped per 1,000" in body and "[" in body


def test_the_loop_lab_says_what_is_wrong_with_bad_input(calibrated, client_for):
    response = client_for("ml_engineer").get(reverse("loops:lab"), {"version": calibrated.pk, "retry_success": "lots"})
    assert response.status_code == 200 and "report" not in response.context
    assert "Comma-separated shares" in response.content.decode()


@pytest.mark.parametrize("role", ["analyst", "labeller"])
def test_the_loop_lab_is_for_ml_engineers_only(calibrated, client_for, role):
    assert client_for(role).get(reverse("loops:lab")).status_code == 403


def test_the_loop_lab_sends_an_anonymous_visitor_to_log_in(client):
    response = client.get(reverse("loops:lab"))
    assert response.status_code == 302 and "/login" in response["Location"]


def test_the_judges_index_links_each_judge_to_its_loop_figures(calibrated, client_for):
    body = client_for("ml_engineer").get(reverse("judges:index")).content.decode()
    assert f"{reverse('loops:lab')}?checker=verifier:1" in body


def test_costs_recorded_as_decimals_feed_the_generator_cost(calibrated):
    query = factories.live_query()
    RequestAttempt.objects.create(
        live_query=query,
        position=1,
        tier="cheap",
        attempt=1,
        failure_class="",
        cost_usd=Decimal("0.0041"),
        latency_ms=900,
    )
    report = loop_model_json("--gold-set", "loop-gold", "--checker", "verifier")
    assert report["inputs"]["generation_cost_usd"] == pytest.approx(0.0041)
    assert report["checkers"][0]["latency_ms_p50"]["value"] == pytest.approx(900.0)
