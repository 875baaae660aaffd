"""The simulator, which imports nothing of Docket, agrees with Docket on what both must know."""

import pytest

from judges.backends import cache_minimums, simulator_marker
from labelling.models import ErrorClass
from simulator import conventions


def test_the_simulators_marker_is_the_one_docket_reads():
    assert conventions.SIMULATOR_HEADER == simulator_marker.SIMULATOR_HEADER
    assert conventions.SIMULATOR_FIELD == simulator_marker.SIMULATOR_FIELD


def test_a_simulated_judge_names_dockets_error_classes():
    assert list(ErrorClass.values) == conventions.ERROR_CLASSES


@pytest.mark.parametrize(
    "model",
    [
        "claude-haiku-4-5",
        "claude-haiku-4.5-20251001",
        "claude-opus-4-6",
        "claude-opus-4-1",
        "claude-3-5-haiku-latest",
        "claude-sonnet-4-5",
        "sim-claude-judge",
        "sim-generator",
        "",
    ],
)
def test_the_simulator_bills_caching_by_the_table_dockets_backends_use(model):
    assert conventions.anthropic_cache_minimum(model) == cache_minimums.anthropic_cache_minimum(model)
    assert conventions.OPENAI_CACHE_MINIMUM == cache_minimums.OPENAI_CACHE_MINIMUM
    assert conventions.OPENAI_CACHE_STEP == cache_minimums.OPENAI_CACHE_STEP
