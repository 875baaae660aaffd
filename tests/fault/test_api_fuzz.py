"""Fuzz every operation of the published OpenAPI schema with schemathesis, in process.

Requests go through the WSGI application gunicorn serves (`config/wsgi.py`: the API's paths on
the machine endpoints' middleware, the schema on the site's; token authentication, parsers) with
a valid API token. Every response must be free of server errors and
conform to the schema; the pipeline runs eagerly on whatever the fuzzer manages to
ingest, and every stored query must end in a final state.
"""

import os

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from config.machine import machine_or_site
from triage import tasks as triage_tasks  # noqa: F401 — eager mode below runs them in this process
from triage.models import IngestStatus, LiveQuery
from triage.policy import policy_publish
from triage.tests import factories

# Per operation and generation mode; small enough for the whole module to stay under a minute.
MAX_EXAMPLES = int(os.environ.get("FAULT_FUZZ_EXAMPLES", "60"))
CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance, content_type_conformance]
FINAL = {IngestStatus.FLAGGED, IngestStatus.PASSED, IngestStatus.UNJUDGED}


@pytest.fixture
def fuzz_target(transactional_db, tmp_path, monkeypatch, eager_tasks):
    """The fan-out trap warehouse, a policy running the verifier and detector, and a token."""
    factories.fanout_trap_warehouse(tmp_path / "shop.sqlite3", monkeypatch)
    policy_publish(changes={"run_verifier": True, "run_fanout_detector": True, "audit_share": 0.5})
    _, plaintext = factories.token()
    schema = schemathesis.openapi.from_wsgi("/api/schema/", machine_or_site(get_wsgi_application()))
    return schema, {"Authorization": f"Bearer {plaintext}"}


def aim_at_the_known_warehouse(case):
    """Send most generated queries to the registered warehouse, so they reach the pipeline."""
    body = case.body
    items = body if isinstance(body, list) else [body]
    for index, item in enumerate(items):
        if isinstance(item, dict) and "warehouse" in item and index % 4 != 3:
            item["warehouse"] = "shop"
    return case


def fuzz(operation, headers, mode):
    strategy = operation.as_strategy(generation_mode=mode)
    if operation.method.upper() == "POST" and mode == schemathesis.GenerationMode.POSITIVE:
        strategy = strategy.map(aim_at_the_known_warehouse)

    @given(case=strategy)
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def one_case(case):
        case.call_and_validate(headers=headers, checks=CHECKS)

    one_case()


def test_every_api_operation_answers_fuzzed_input_without_server_errors_and_as_documented(fuzz_target):
    schema, headers = fuzz_target
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {f"{op.method.upper()} {op.path}" for op in operations} >= {
        "POST /api/v1/queries",
        "GET /api/v1/queries/{id}",
    }
    for operation in operations:
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):
            fuzz(operation, headers, mode)
    stored = LiveQuery.objects.all()
    assert stored.exists(), "the fuzzer never got a query through to the pipeline"
    stuck = list(stored.exclude(status__in=FINAL).values_list("query__external_id", "status")[:5])
    assert not stuck, f"fuzzed queries left unfinished by the pipeline: {stuck}"
