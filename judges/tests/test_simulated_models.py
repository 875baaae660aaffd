"""A simulated judge names a model the simulator serves, asked of the simulator at GET /v1/models (issue 31)."""

import pytest

from judges.forms import JudgeCreateForm
from judges.headline import dashboard_headline
from judges.simulated_models import simulated_model_problem, simulator_models

pytestmark = pytest.mark.django_db

FORM = {
    "name": "sim-named",
    "backend": "anthropic",
    "family": "claude",
    "temperature": "0",
    "max_tokens": "256",
    "price_input_per_mtok": "3",
    "price_output_per_mtok": "15",
    "price_cache_read_per_mtok": "0",
    "price_cache_write_per_mtok": "0",
    "config": '{"simulated": true}',
}


def test_the_simulator_lists_the_models_it_serves_as_a_vendor_does(vendor_simulator):
    served = simulator_models()
    assert {"sim-perfect", "sim-slow", "sim-claude-judge", "sim-gpt-judge"} <= set(served)
    assert "gpt-5" not in served


def test_a_simulated_judge_naming_a_model_the_simulator_does_not_serve_is_refused_on_the_model(vendor_simulator):
    form = JudgeCreateForm(data={**FORM, "model": "gpt-5"})
    assert not form.is_valid()
    (problem,) = form.errors["model"]
    assert "serves no model named 'gpt-5'" in problem and "sim-perfect" in problem
    assert JudgeCreateForm(data={**FORM, "model": "sim-perfect"}).is_valid()


def test_a_judge_bound_to_a_real_vendor_is_not_asked_about(settings):
    settings.VENDOR_SIMULATOR_URL = "http://127.0.0.1:9"  # nothing listens: it would be refused if asked
    form = JudgeCreateForm(data={**FORM, "model": "claude-sonnet-4-5", "config": "{}"})
    assert form.is_valid(), form.errors


def test_a_simulator_that_does_not_answer_is_said_so_with_its_address(settings):
    settings.VENDOR_SIMULATOR_URL = "http://127.0.0.1:9"
    problem = simulated_model_problem("sim-perfect")
    assert "http://127.0.0.1:9 does not answer" in problem and "make run" in problem


def test_the_headline_says_which_of_its_members_are_simulated():
    point = {
        "pareto": True,
        "members": ["sim-a v1", "real-b v1"],
        "rule": "any",
        "description": "sim-a v1 + real-b v1 (any)",
        "cost_per_accepted_usd": 0.01,
        "catch_rate": 0.5,
    }
    headline = dashboard_headline([point], 0.2, simulated={"sim-a v1"})
    assert headline["answer"]["simulated_members"] == ["sim-a v1"]
    assert dashboard_headline([point], 0.2)["answer"]["simulated_members"] == []
