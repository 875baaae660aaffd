"""True provenance: a verdict is simulated exactly when the simulator's marker is in the answer it
got (whatever the base URL), badges read the verdicts, and imported verdicts say they are.

The real anthropic and openai SDKs call the simulator started on a free port; the vendor
without a marker is the same simulator behind a filter that strips it, as a real vendor's
answers (or a proxy's) would come.
"""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from judges.backends.simulator_marker import SIMULATOR_FIELD, SIMULATOR_HEADER
from judges.demo import run_inline
from judges.models import Backend, Judge, JudgeVersion, Verdict
from judges.services import judge_live_query
from judges.tests.conftest import TEST_MODELS
from judges.tests.factories import gold_set_version_with, mixed_items
from simulator import Simulator, start_in_thread
from simulator.app import SimulatorApp

pytestmark = pytest.mark.django_db
NOWHERE = "http://127.0.0.1:9"  # where nothing listens
CALLS = {"retry_base_delay_s": 0.01, "timeout_s": 2.0, "max_retries": 1}


class UnmarkedVendor(SimulatorApp):
    """The simulator's answers without its marker: what a real vendor (or a stripping proxy) sends."""

    async def respond(self, method, target, headers, body):
        status, response_headers, data = await super().respond(method, target, headers, body)
        response_headers = {name: value for name, value in response_headers.items() if name != SIMULATOR_HEADER}
        try:
            payload = json.loads(data)
        except ValueError:
            return status, response_headers, data
        if isinstance(payload, dict):
            payload.pop(SIMULATOR_FIELD, None)
        return status, response_headers, json.dumps(payload).encode()


@pytest.fixture
def simulator_elsewhere(settings):
    """The simulator on a port of its own, named by a judge's base_url only: no URL says "simulator"."""
    simulator = Simulator(models=TEST_MODELS)
    server, url = start_in_thread(simulator)
    settings.VENDOR_SIMULATOR_URL = NOWHERE
    settings.JUDGE_BASE_URLS = [url]
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture
def unmarked_vendor_at_the_simulator_url(settings):
    """An answering vendor without the marker, listening where VENDOR_SIMULATOR_URL points."""
    server, settings.VENDOR_SIMULATOR_URL = start_in_thread(app=UnmarkedVendor(Simulator(models=TEST_MODELS)))
    yield settings.VENDOR_SIMULATOR_URL
    server.shutdown()
    server.server_close()


def version_of(name, backend, **config):
    judge = Judge.objects.create(name=name)
    return JudgeVersion.objects.create(
        judge=judge, number=1, backend=backend, family="simulated", model="sim-perfect", config={**CALLS, **config}
    )


def base_url_for(backend, url):
    return url + "/v1" if backend == Backend.OPENAI_COMPATIBLE else url


def one_query(marker="wrong join_fanout"):
    version = gold_set_version_with([(marker, "wrong", "join_fanout")], name=f"gold-{marker.split()[0]}")
    return version.items.get().query


@pytest.mark.parametrize("backend", [Backend.ANTHROPIC, Backend.OPENAI_COMPATIBLE])
def test_an_answer_carrying_the_simulators_marker_is_simulated_whatever_the_base_url(simulator_elsewhere, backend):
    version = version_of(f"elsewhere-{backend}", backend, base_url=base_url_for(backend, simulator_elsewhere))
    verdict = judge_live_query(judge_version=version, query=one_query())
    assert verdict.decision == "reject", verdict.reason  # the call was answered
    assert (verdict.simulated, verdict.endpoint) == (True, "simulated")
    assert verdict.context["simulated"] is True


@pytest.mark.parametrize("backend", [Backend.ANTHROPIC, Backend.OPENAI_COMPATIBLE])
def test_an_answer_without_the_marker_is_not_simulated_even_from_the_simulators_url(
    unmarked_vendor_at_the_simulator_url, backend
):
    version = version_of(f"unmarked-{backend}", backend, simulated=True)
    verdict = judge_live_query(judge_version=version, query=one_query())
    assert verdict.decision == "reject", verdict.reason
    host = unmarked_vendor_at_the_simulator_url.removeprefix("http://")
    assert (verdict.simulated, verdict.endpoint) == (False, host)


@pytest.mark.parametrize("backend", [Backend.ANTHROPIC, Backend.OPENAI_COMPATIBLE])
def test_an_error_answered_by_the_simulator_is_a_simulated_error(simulator_elsewhere, backend):
    version = version_of(f"failing-{backend}", backend, base_url=base_url_for(backend, simulator_elsewhere))
    verdict = judge_live_query(judge_version=version, query=one_query("correct fault=500"))
    assert verdict.decision == "error" and "500" in verdict.reason
    assert (verdict.simulated, verdict.endpoint) == (True, "simulated")


def test_a_call_that_got_no_answer_is_not_simulated(settings):
    settings.VENDOR_SIMULATOR_URL = NOWHERE
    version = version_of("unanswered", Backend.ANTHROPIC, simulated=True)
    verdict = judge_live_query(judge_version=version, query=one_query())
    assert verdict.decision == "error"
    assert (verdict.simulated, verdict.endpoint) == (False, "127.0.0.1:9")


def test_message_batch_results_carry_the_marker_line_by_line(simulator_elsewhere):
    gold = gold_set_version_with(mixed_items(correct=3, wrong=2, faults=["500"]))
    version = version_of(
        "batched", Backend.ANTHROPIC, base_url=simulator_elsewhere, use_batches=True, batch_poll_s=0.05
    )
    run = run_inline(gold_set_version=gold, judge_versions=[version], repeats=1)
    verdicts = Verdict.objects.filter(run=run)
    assert verdicts.count() == 6 and verdicts.filter(decision="error").count() == 1
    assert set(verdicts.values_list("simulated", "endpoint")) == {(True, "simulated")}


def badges_on_pages(client, version, run) -> dict:
    """The badge HTML of the judges index, the judge page and the run page, by page."""
    pages = {
        "index": reverse("judges:index"),
        "judge": reverse("judges:judge_detail", args=[version.judge_id]),
        "run": reverse("judges:run_detail", args=[run.pk]),
    }
    return {name: client.get(url).content.decode() for name, url in pages.items()}


def test_badges_read_the_verdicts_not_the_registration(simulator_elsewhere, client_for, settings):
    gold = gold_set_version_with(mixed_items(correct=2, wrong=1))
    # Registered as real (a base_url, no "simulated"): its answers carried the marker.
    answered_by_simulator = version_of("looks-real", Backend.ANTHROPIC, base_url=simulator_elsewhere)
    run = run_inline(gold_set_version=gold, judge_versions=[answered_by_simulator], repeats=1)
    client = client_for("ml_engineer")
    for page, html in badges_on_pages(client, answered_by_simulator, run).items():
        assert 'class="badge sim"' in html and ">simulated</span>" in html, page


def test_a_version_registered_simulated_whose_answers_were_not_gets_no_simulated_badge(
    unmarked_vendor_at_the_simulator_url, client_for
):
    gold = gold_set_version_with(mixed_items(correct=2, wrong=1))
    registered_simulated = version_of("looks-simulated", Backend.ANTHROPIC, simulated=True)
    JudgeVersion.objects.filter(pk=registered_simulated.pk).update(is_simulated=True)
    run = run_inline(gold_set_version=gold, judge_versions=[registered_simulated], repeats=1)
    assert not Verdict.objects.filter(run=run, simulated=True).exists()
    for page, html in badges_on_pages(client_for("ml_engineer"), registered_simulated, run).items():
        assert 'class="badge sim"' not in html, page


def test_imported_verdicts_are_badged_imported(tmp_path, client_for):
    gold = gold_set_version_with(mixed_items(correct=1, wrong=1), name="imported-gold")
    path = tmp_path / "verdicts.jsonl"
    path.write_text(
        "\n".join(
            # With a cost: the judge page of an imported judge without costs is another item of issue 26 (a 500).
            json.dumps({"query_id": f"item-{i}", "judge": "elsewhere", "decision": "accept", "cost_usd": 0.01})
            for i in range(2)
        )
    )
    call_command("import_verdicts", str(path), "--gold-set", "imported-gold")
    version = Judge.objects.get(name="elsewhere").latest_version
    run = Verdict.objects.filter(judge_version=version).first().run
    assert run.gold_set_version == gold
    for page, html in badges_on_pages(client_for("ml_engineer"), version, run).items():
        assert ">imported</span>" in html and 'class="badge sim"' not in html, page
