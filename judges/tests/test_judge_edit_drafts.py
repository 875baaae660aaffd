"""The judge edit page: misses and false rejects on dev as example candidates, a version note, a try on one item."""

import json
import re

import pytest
from django.urls import reverse

from judges.models import JudgeVersion, Verdict
from judges.selectors import judge_edit_initial
from judges.tests.calibration_builders import add_verdicts, item_queries, make_run
from judges.tests.factories import gold_set_version_with, mixed_items, simulated_version
from labelling.models import GoldSetVersion
from labelling.splits import goldset_split
from probes.models import ProbeRun
from tests.support.access import denied

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    """A split gold-set version (8 wrong, 12 correct, one correct item the simulator fails with 500s) and a judge
    whose v1 accepted every wrong item and rejected the even-numbered correct ones."""
    version = gold_set_version_with(mixed_items(correct=12, wrong=8, faults=("500",)), name="tune")
    GoldSetVersion.objects.filter(pk=version.pk).update(is_frozen=True)
    version.refresh_from_db()
    split = goldset_split(version=version, test_share=0.5, seed=1)
    parts = dict(split.items.values_list("query__external_id", "part"))
    judge_version = simulated_version(name="tuned", retry_base_delay_s=0.01, max_retries=1)
    gold = {item.query.external_id: item.decision for item in version.items.select_related("query")}
    decisions = [
        "accept" if gold[q.external_id] == "wrong" or int(q.external_id.split("-")[1]) % 2 else "reject"
        for q in item_queries(version)
    ]
    add_verdicts(make_run(version), judge_version, decisions)
    misses = {i for i, d in gold.items() if d == "wrong" and parts[i] == "dev"}
    false_rejects = {
        i for i, d in gold.items() if d == "correct" and parts[i] == "dev" and int(i.split("-")[1]) % 2 == 0
    }
    return {
        "version": version,
        "judge_version": judge_version,
        "parts": parts,
        "gold": gold,
        "misses": misses,
        "false_rejects": false_rejects,
    }


def draft_data(judge_version, **extra):
    """The edit form as the page sends it, starting from the version in use."""
    initial = judge_edit_initial(judge_version)
    data = {name: value for name, value in initial.items() if value is not None}
    data["config"] = json.dumps(initial["config"])
    data["include_result_preview"] = "on" if initial["include_result_preview"] else ""
    return {**data, **extra}


def offered(html, section):
    block = re.search(rf'<section id="{section}">(.*?)</section>', html, re.S).group(1)
    return set(re.findall(r'data-candidate="([^"]+)"', block))


def value(setup, external_id):
    return f"{setup['version'].pk}:{external_id}"


def test_the_edit_page_offers_the_judges_dev_misses_and_false_rejects_and_never_a_test_item(client_for, setup):
    url = reverse("judges:judge_edit", args=[setup["judge_version"].judge_id])
    html = client_for("ml_engineer").get(url).content.decode()
    assert offered(html, "candidate-misses") == setup["misses"]
    assert offered(html, "candidate-false-rejects") == setup["false_rejects"]
    test_items = {i for i, part in setup["parts"].items() if part == "test"}
    assert not test_items & set(re.findall(r'data-candidate="([^"]+)"', html))
    assert not any(f'value="{value(setup, i)}"' in html for i in test_items)  # nor as an item to try on


def test_ticking_a_candidate_saves_it_as_an_example_of_the_new_version_with_its_note(client_for, setup):
    judge_version = setup["judge_version"]
    miss = sorted(setup["misses"])[0]
    client = client_for("ml_engineer")
    url = reverse("judges:judge_edit", args=[judge_version.judge_id])
    answer = client.post(
        url, draft_data(judge_version, examples=[value(setup, miss)], note="Shows it a fan-out", confirm="save")
    )
    assert answer.status_code == 302
    new = JudgeVersion.objects.get(judge=judge_version.judge, number=2)
    assert list(new.examples.values_list("query__external_id", flat=True)) == [miss]
    assert new.note == "Shows it a fan-out"
    detail = client.get(reverse("judges:judge_detail", args=[judge_version.judge_id])).content.decode()
    assert "Shows it a fan-out" in detail
    compare = client.get(reverse("judges:judge_compare", args=[judge_version.judge_id])).content.decode()
    assert 'id="version-notes"' in compare and "Shows it a fan-out" in compare
    # The next edit keeps v2's example ticked.
    again = client.get(url).content.decode()
    assert re.search(rf'value="{value(setup, miss)}" checked', again)


def test_a_test_item_sent_as_an_example_is_refused_with_the_message_and_nothing_is_saved(client_for, setup):
    judge_version = setup["judge_version"]
    held_out = next(i for i, part in sorted(setup["parts"].items()) if part == "test")
    answer = client_for("ml_engineer").post(
        reverse("judges:judge_edit", args=[judge_version.judge_id]),
        draft_data(judge_version, examples=[value(setup, held_out)], confirm="save"),
    )
    assert answer.status_code == 200
    assert f"{held_out} is in the test split of tune v1: a test item can never be an example" in answer.content.decode()
    assert judge_version.judge.versions.count() == 1


def test_a_version_without_a_split_offers_nothing_and_says_how_to_split_it(client_for):
    version = gold_set_version_with(mixed_items(correct=3, wrong=3), name="raw")
    GoldSetVersion.objects.filter(pk=version.pk).update(is_frozen=True)
    judge_version = simulated_version(name="untuned")
    add_verdicts(make_run(version), judge_version, ["accept"] * 6)
    html = client_for("ml_engineer").get(reverse("judges:judge_edit", args=[judge_version.judge_id])).content.decode()
    assert "raw v1 has no dev/test split" in html and "split_gold --gold-set raw --version 1" in html
    assert "Split control" in html and 'id="candidate-misses"' not in html


def test_trying_the_draft_on_one_item_runs_the_simulator_and_stores_nothing(client_for, setup, vendor_simulator):
    judge_version = setup["judge_version"]
    wrong = sorted(setup["misses"])[0]
    before = (Verdict.objects.count(), JudgeVersion.objects.count())
    answer = client_for("ml_engineer").post(
        reverse("judges:judge_edit", args=[judge_version.judge_id]),
        draft_data(judge_version, prompt_template="Be strict.", try_item=value(setup, wrong), confirm="try"),
    )
    html = answer.content.decode()
    assert answer.status_code == 200 and 'id="try-result"' in html
    assert answer.context["tried"]["verdict"].decision == "reject"  # sim-perfect catches a wrong item
    assert 'data-decision="reject"' in html and "Be strict." in answer.context["tried"]["request_json"]
    assert answer.context["tried"]["verdict"].simulated
    sql = next(q.sql for q in item_queries(setup["version"]) if q.external_id == wrong)
    assert vendor_simulator.calls_per_sql[sql] == 1  # one real call, through the SDK
    assert (Verdict.objects.count(), JudgeVersion.objects.count()) == before


def test_a_vendor_fault_on_the_try_is_an_error_never_a_reject(client_for, vendor_simulator):
    # An unsplit version: any of its items may be tried on (none is held out).
    version = gold_set_version_with(mixed_items(correct=1, wrong=1, faults=("500",)), name="faulty")
    GoldSetVersion.objects.filter(pk=version.pk).update(is_frozen=True)
    judge_version = simulated_version(name="flaky", retry_base_delay_s=0.01, max_retries=1)
    faulty = next(q for q in item_queries(version) if "fault=500" in q.sql)
    answer = client_for("ml_engineer").post(
        reverse("judges:judge_edit", args=[judge_version.judge_id]),
        draft_data(judge_version, try_item=f"{version.pk}:{faulty.external_id}", confirm="try"),
    )
    assert answer.context["tried"]["verdict"].decision == "error"
    assert 'data-decision="error"' in answer.content.decode()
    assert vendor_simulator.calls_per_sql[faulty.sql] == 2  # the call and its one retry, both 500
    assert not Verdict.objects.exists() and judge_version.judge.versions.count() == 1


def test_trying_on_a_test_item_is_refused(client_for, setup):
    judge_version = setup["judge_version"]
    held_out = next(i for i, part in sorted(setup["parts"].items()) if part == "test")
    answer = client_for("ml_engineer").post(
        reverse("judges:judge_edit", args=[judge_version.judge_id]),
        draft_data(judge_version, try_item=value(setup, held_out), confirm="try"),
    )
    assert "tried" not in answer.context
    assert f"{held_out} is in the test split of tune v1: trying a draft on a held-out item" in answer.content.decode()


@pytest.mark.parametrize("role", ["labeller", "analyst", "outsider"])
def test_who_may_not_change_judges_cannot_see_candidates_or_try(client_for, setup, role):
    judge_version = setup["judge_version"]
    url = reverse("judges:judge_edit", args=[judge_version.judge_id])
    client = client_for(role)
    assert denied(client.get(url))
    before = Verdict.objects.count()
    miss = sorted(setup["misses"])[0]
    assert denied(client.post(url, draft_data(judge_version, try_item=value(setup, miss), confirm="try")))
    assert Verdict.objects.count() == before


def test_the_built_in_prompt_sent_back_with_a_browsers_crlf_lines_stays_the_built_in_one(client_for, setup):
    judge_version = setup["judge_version"]
    data = draft_data(judge_version, note="only a note", confirm="save")
    data["prompt_template"] = data["prompt_template"].replace("\n", "\r\n")  # as a textarea posts it
    client_for("ml_engineer").post(reverse("judges:judge_edit", args=[judge_version.judge_id]), data)
    saved = judge_version.judge.versions.get(number=2)
    assert saved.prompt_template == "" and saved.note == "only a note"


def test_a_try_of_a_probing_judge_keeps_its_transaction_and_stores_no_probe_or_verdict(client_for, vendor_simulator):
    # The hypothesis-and-probe backend reads the database from its own threads: judge_safely would close
    # this thread's connections after it, which inside the try's transaction would break it.
    version = gold_set_version_with(mixed_items(correct=1, wrong=1), name="probing")
    GoldSetVersion.objects.filter(pk=version.pk).update(is_frozen=True)
    judge_version = simulated_version(name="prober", backend="hypothesis_probe")
    wrong = next(q for q in item_queries(version) if "wrong" in q.sql)
    answer = client_for("ml_engineer").post(
        reverse("judges:judge_edit", args=[judge_version.judge_id]),
        draft_data(judge_version, try_item=f"{version.pk}:{wrong.external_id}", confirm="try"),
    )
    assert answer.status_code == 200 and answer.context["tried"]["verdict"].decision in ("accept", "reject", "error")
    assert vendor_simulator.calls_per_sql[wrong.sql] == 1
    assert not Verdict.objects.exists() and not ProbeRun.objects.exists()
    assert judge_version.judge.versions.count() == 1
