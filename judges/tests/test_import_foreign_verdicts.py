"""import_verdicts on other tools' output: promptfoo, inspect-ai (files written by the real
tools against the vendor simulator, see fixtures/verdicts/README.md) and a mapped CSV."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from judges.models import Judge, Verdict
from judges.report import build_report
from judges.verdict_formats import decision_from_text
from judges.verdict_import import judge_slug
from labelling.goldset_io import goldset_import

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures" / "verdicts"
GOLD = {
    "p1": ("correct", None),
    "p2": ("wrong", "join_fanout"),
    "p3": ("correct", None),
    "p4": ("wrong", "wrong_measure"),
    "p5": ("wrong", "missing_filter"),
}


@pytest.fixture
def gold(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"id": i, "question": f"q {i}", "sql": f"SELECT '{i}'", "label": d, "error_class": c})
            for i, (d, c) in GOLD.items()
        )
    )
    return goldset_import(path_or_file=path, gold_set_name="foreign")


def run(*args) -> str:
    out = io.StringIO()
    call_command("import_verdicts", *map(str, args), "--gold-set", "foreign", stdout=out)
    return out.getvalue()


def promptfoo_results() -> list[dict]:
    return json.loads((FIXTURES / "promptfoo-results.json").read_text())["results"]["results"]


def test_promptfoo_results_become_one_judge_per_provider_with_their_outputs_as_verdicts(gold):
    out = run(FIXTURES / "promptfoo-results.json")
    assert "(promptfoo)" in out and "skipped 2 verdicts for 1 items not in foreign v1: not-in-gold" in out
    expected = {}
    for result in promptfoo_results():
        if result["vars"]["query_id"] in GOLD:
            decision = json.loads(result["response"]["output"])["decision"]
            expected[(result["provider"]["label"], result["vars"]["query_id"])] = (decision, result)
    stored = {(v.judge_version.judge.title, v.query.external_id): v for v in Verdict.objects.select_related("query")}
    assert set(stored) == set(expected)
    for key, (decision, result) in expected.items():
        verdict = stored[key]
        assert verdict.decision == decision
        assert verdict.judge_version.config == {"imported": True, "source_format": "promptfoo"}
        assert (verdict.simulated, verdict.endpoint) == (False, "imported")
        assert verdict.latency_ms == result["latencyMs"]
        # promptfoo prices gpt-4o; it writes 0 for a model it cannot price: not measured.
        assert (verdict.cost_usd is None) == (not result["cost"])
    gpt = Judge.objects.get(display_name="openai/gpt-4o")
    assert gpt.name == "openai-gpt-4o" and Judge.objects.get(name="claude-3-5-sonnet").title == "claude-3.5-sonnet"
    report = build_report(gold_set_version=gold)
    by_name = {j["name"]: j for j in report["judges"]}
    assert set(by_name) == {"openai/gpt-4o", "claude-3.5-sonnet"}
    assert by_name["claude-3.5-sonnet"]["cost_per_verdict_usd"] is None  # unmeasured, not $0
    assert by_name["openai/gpt-4o"]["cost_per_verdict_usd"] == pytest.approx(
        sum(float(r["cost"]) for (name, _), (_, r) in expected.items() if name == "openai/gpt-4o") / 5
    )


def test_promptfoo_graders_can_be_the_judges(gold):
    run(FIXTURES / "promptfoo-results.json", "--promptfoo-judges", "grader")
    judges = set(Judge.objects.values_list("display_name", flat=True))
    assert judges == {"openai/gpt-4o / accepts-sql", "claude-3.5-sonnet / accepts-sql"}
    for result in promptfoo_results():
        if result["vars"]["query_id"] not in GOLD:
            continue
        passed = result["gradingResult"]["componentResults"][0]["pass"]
        verdict = Verdict.objects.get(
            query__external_id=result["vars"]["query_id"],
            judge_version__judge__display_name=f"{result['provider']['label']} / accepts-sql",
        )
        assert verdict.decision == ("accept" if passed else "reject")


def test_a_zstandard_eval_log_is_refused_with_the_way_to_convert_it(gold):
    with pytest.raises(CommandError, match="inspect log convert --to json"):
        run(FIXTURES / "inspect-docket-judge.eval")
    assert not Verdict.objects.exists()


@pytest.mark.parametrize("name", ["inspect-docket-judge.json"])
def test_an_inspect_ai_log_becomes_the_model_s_verdicts(gold, name):
    out = run(FIXTURES / name)
    assert "(inspect)" in out and "not-in-gold" in out
    log = json.loads((FIXTURES / "inspect-docket-judge.json").read_text())
    judge = Judge.objects.get()
    assert judge.title == log["eval"]["model"] == "openai/gpt-4o"
    if name.endswith(".json"):
        for sample in log["samples"]:
            if sample["id"] not in GOLD:
                continue
            verdict = Verdict.objects.get(query__external_id=sample["id"])
            assert verdict.decision == sample["scores"]["pattern"]["answer"]
            assert verdict.latency_ms == pytest.approx(sample["output"]["time"] * 1000, abs=0.001)
            assert verdict.cost_usd is None and verdict.input_tokens == sample["output"]["usage"]["input_tokens"]
    assert Verdict.objects.count() == 5


def test_a_mapped_csv_reads_the_named_fields_and_rejects_on_the_reject_when_value(gold):
    out = run(
        FIXTURES / "mapped.csv",
        "--judge",
        "openai/gpt-4o",
        "--map",
        "query_id=item",
        "--map",
        "decision=judge_result",
        "--map",
        "cost_usd=cost",
        "--map",
        "latency_ms=latency",
        "--reject-when",
        "false",
    )
    assert "imported 5 verdicts (csv)" in out and "skipped 1 verdicts for 1 items not in foreign v1: ghost-1" in out
    verdicts = {v.query.external_id: v for v in Verdict.objects.select_related("query")}
    assert {k: v.decision for k, v in verdicts.items()} == {
        "p1": "accept",
        "p2": "reject",
        "p3": "accept",
        "p4": "reject",
        "p5": "accept",
    }
    assert verdicts["p1"].cost_usd is None and verdicts["p1"].latency_ms is None
    assert str(verdicts["p2"].cost_usd) == "0.00210000" and verdicts["p2"].latency_ms == 850
    report = build_report(gold_set_version=gold)
    judge = report["judges"][0]
    assert judge["name"] == "openai/gpt-4o" and judge["slug"] == "openai-gpt-4o"
    # Means over measured values only: costs of p2, p3, p5; latencies of p2, p4, p5.
    assert judge["cost_per_verdict_usd"] == pytest.approx((0.0021 + 0.0019 + 0.0020) / 3)
    assert judge["latency_ms_p50"] == pytest.approx(850)
    assert judge["catch_rate"] == pytest.approx(2 / 3)


def test_strict_makes_an_unknown_item_fatal_and_writes_nothing(gold):
    with pytest.raises(CommandError, match="item 'not-in-gold' is not in foreign v1"):
        run(FIXTURES / "promptfoo-results.json", "--strict")
    assert not Verdict.objects.exists() and not Judge.objects.exists()


def test_version_picks_the_gold_set_version(gold, tmp_path):
    path = tmp_path / "more.jsonl"
    path.write_text(json.dumps({"id": "p6", "question": "q", "sql": "SELECT 6", "label": "correct"}) + "\n")
    goldset_import(path_or_file=path, gold_set_name="foreign")
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text(json.dumps({"query_id": "p6", "judge": "gpt-4.1", "decision": "accept"}) + "\n")
    with pytest.raises(CommandError, match="no verdict names an item of foreign v1.*p6"):
        run(verdicts, "--version", "1")
    assert "on foreign v2" in run(verdicts, "--version", "2")
    assert Judge.objects.get().name == "gpt-4-1"
    with pytest.raises(CommandError, match="has no version 9"):
        run(verdicts, "--version", "9")


def test_an_empty_file_is_an_error_not_a_success(gold, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(CommandError, match="the file has no verdicts"):
        run(empty)


@pytest.mark.parametrize(
    ("text", "reject_when", "expected"),
    [
        ('{"decision": "reject", "reason": "x"}', None, "reject"),
        ("ACCEPT. Looks right.", None, "accept"),
        ("Wrong: fans out", None, "reject"),
        ("I am not sure", None, "error"),
        ("false", "false", "reject"),
        ("true", "false", "accept"),
        (True, "true", "reject"),
    ],
)
def test_decisions_read_from_text(text, reject_when, expected):
    assert decision_from_text(text, reject_when) == expected


def test_judge_slugs_come_from_free_text_names():
    assert [judge_slug(n) for n in ("openai/gpt-4o", "gpt-4.1", "claude-3.5-sonnet", "  ")] == [
        "openai-gpt-4o",
        "gpt-4-1",
        "claude-3-5-sonnet",
        "judge",
    ]
