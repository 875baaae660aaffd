"""The simulator gets the simulator's key, always; its URL is allowed only where it is enabled.

The simulator listens on a local port that anything on the machine could bind first, so a
vendor key sent there is a key given away. These tests set real-looking vendor keys, call
judges bound to the simulator in every way a judge can be, and read what the running
simulator received (`GET /_sim/keys`: a hash of each call's key).
"""

import hashlib
import json
import urllib.request

import pytest

from judges.backends import get_backend
from judges.backends.vendors import SIMULATOR_KEY, Endpoint, anthropic_endpoint
from judges.models import Judge, JudgeVersion
from judges.tests.factories import simulated_version
from judges.vendor_access import base_url_allowed, judge_config_problems
from labelling.models import Query

pytestmark = pytest.mark.django_db

REAL_LOOKING_ANTHROPIC_KEY = "sk-ant-api03-" + "Q7x2" * 20 + "-AA"
REAL_LOOKING_OPENAI_KEY = "sk-proj-" + "Zb81" * 30


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def real_keys_set(monkeypatch, settings):
    monkeypatch.setenv("ANTHROPIC_API_KEY", REAL_LOOKING_ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", REAL_LOOKING_OPENAI_KEY)
    settings.ANTHROPIC_API_KEY = REAL_LOOKING_ANTHROPIC_KEY  # what settings read at start-up
    settings.OPENAI_API_KEY = REAL_LOOKING_OPENAI_KEY


def keys_received(simulator_url: str) -> list[dict]:
    with urllib.request.urlopen(f"{simulator_url}/_sim/keys", timeout=5) as response:
        return json.loads(response.read())["keys"]


def query() -> Query:
    return Query.objects.create(question="How many orders?", sql="SELECT COUNT(*) FROM orders", external_id="k-1")


def version_with(backend: str, **config) -> JudgeVersion:
    judge = Judge.objects.create(name=f"{backend}-{len(config)}-{abs(hash(json.dumps(config))) % 10_000}")
    return JudgeVersion.objects.create(
        judge=judge, number=1, backend=backend, model="sim-perfect", config={"timeout_s": 2, **config}
    )


def test_a_judge_bound_to_the_simulator_in_any_spelling_sends_it_only_the_simulator_key(
    real_keys_set, vendor_simulator
):
    url = vendor_simulator.url
    shouting = url.replace("http://", "HTTP://").rstrip("/") + "/"
    versions = [
        simulated_version(name="by-flag", backend="anthropic"),
        simulated_version(name="by-flag-openai", backend="openai_compatible"),
        version_with("anthropic", base_url=url),
        version_with("anthropic", base_url=shouting),
        version_with("openai_compatible", base_url=url + "/v1"),
        version_with("openai_compatible", base_url=url, api_key_env="OPENAI_API_KEY"),
    ]
    for version in versions:
        verdict = get_backend(version).judge(query())
        assert verdict.decision in ("accept", "reject"), verdict.reason
        assert verdict.simulated
    received = keys_received(url)
    assert len(received) == len(versions)
    assert {entry["key_sha256"] for entry in received} == {sha256(SIMULATOR_KEY)}
    assert not {sha256(REAL_LOOKING_ANTHROPIC_KEY), sha256(REAL_LOOKING_OPENAI_KEY)} & {
        entry["key_sha256"] for entry in received
    }


def test_the_vendor_base_url_setting_pointing_at_the_simulator_sends_the_simulator_key(
    real_keys_set, vendor_simulator, settings
):
    settings.ANTHROPIC_BASE_URL = vendor_simulator.url
    endpoint = anthropic_endpoint({})
    assert endpoint.simulated and endpoint.api_key == SIMULATOR_KEY


def test_a_simulated_endpoint_cannot_be_made_with_another_key():
    with pytest.raises(ValueError, match="simulator's key only"):
        Endpoint("http://127.0.0.1:8765", REAL_LOOKING_ANTHROPIC_KEY, True)


def test_with_the_simulator_disabled_its_url_is_refused_and_it_receives_nothing(vendor_simulator, settings):
    settings.VENDOR_SIMULATOR_ENABLED = False
    url = vendor_simulator.url
    assert not base_url_allowed(url)
    for config in ({"simulated": True}, {"base_url": url}, {"base_url": url + "/v1"}):
        assert any("VENDOR_SIMULATOR_ENABLED" in problem for problem in judge_config_problems(config))
    verdict = get_backend(simulated_version(name="sim-off")).judge(query())
    assert verdict.decision == "error" and "VENDOR_SIMULATOR_ENABLED" in verdict.reason
    assert keys_received(url) == []


def test_with_the_simulator_enabled_its_url_is_allowed(vendor_simulator, settings):
    settings.VENDOR_SIMULATOR_ENABLED = True
    assert base_url_allowed(vendor_simulator.url)
    assert judge_config_problems({"base_url": vendor_simulator.url}) == []
