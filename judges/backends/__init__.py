"""Judge backends behind one interface: `get_backend(judge_version).judge(query) -> VerdictResult`."""

import logging

from django.db import connection, connections

from judges.backends.base import JudgeBackend, VerdictResult
from judges.backends.hypothesis_probe import HypothesisProbeBackend
from judges.backends.ladder import LadderBackend, rung_problem
from judges.backends.llm import vendor_backend
from judges.backends.refused import refused_backend
from judges.backends.replay import BackendCannotJudge, ReplayBackend
from judges.backends.self_consistency import SelfConsistencyBackend
from judges.backends.vendors import version_endpoint
from judges.backends.verifier import VerifierBackend
from judges.models import Backend
from judges.vendor_access import judge_config_problems

__all__ = [
    "BackendCannotJudge",
    "JudgeBackend",
    "VerdictResult",
    "get_backend",
    "judge_safely",
    "live_judging_problem",
    "vendor_backend",
]

log = logging.getLogger(__name__)


def get_backend(judge_version) -> JudgeBackend:
    """Build the backend a judge version names."""
    if refused := refused_backend(judge_version):  # a key or host outside the allow-lists
        return refused
    backend = judge_version.backend
    if backend in (Backend.ANTHROPIC, Backend.OPENAI_COMPATIBLE):
        return vendor_backend(judge_version, backend)
    if backend == Backend.SELF_CONSISTENCY:
        return SelfConsistencyBackend(judge_version)
    if backend == Backend.HYPOTHESIS_PROBE:
        return HypothesisProbeBackend(judge_version)
    if backend == Backend.VERIFIER:
        return VerifierBackend(judge_version)
    if backend == Backend.LADDER:
        return LadderBackend(judge_version)
    if backend == Backend.REPLAY:
        return ReplayBackend(judge_version)
    raise ValueError(f"unknown backend {backend!r}")


def live_judging_problem(judge_version, *, this_environment: bool = True) -> str:
    """Say why this version cannot judge live queries, or "" when it can.

    Each reason is one every call would hit, whatever the query: a replay judge has nothing to
    answer and a ladder without a known rung cannot be built; and, in this environment (its
    settings and keys; left out with `this_environment=False`), a config the allow-lists refuse
    is never called (`refused_backend`) and a vendor judge whose key variable is unset fails.
    """
    if judge_version.backend == Backend.REPLAY:
        return "it replays verdicts imported from elsewhere and has nothing to answer a new query with"
    if judge_version.backend == Backend.LADDER and (problem := rung_problem(judge_version.config)):
        return problem
    if not this_environment:
        return ""
    if problems := judge_config_problems(judge_version.config or {}):
        return "its config is refused here, so it is never called: " + "; ".join(problems)
    endpoint = version_endpoint(judge_version.backend, judge_version.config)
    if endpoint is not None and endpoint.missing_key:
        return f"{endpoint.missing_key} is not set here, so every call to its vendor fails"
    return ""


def judge_safely(backend, query) -> VerdictResult:
    """Call the backend; anything it raises becomes an error verdict, never a reject."""
    try:
        return backend.judge(query)
    except Exception as exc:  # noqa: BLE001 - a crashing checker is counted, not folded into a verdict
        log.exception("judge %s crashed on query %s", backend.judge_version, query.pk)
        return VerdictResult.error(f"judge crashed: {type(exc).__name__}: {exc}")
    finally:
        # This thread's own connections only, and never inside a transaction (a draft tried on the
        # edit page runs in one that is rolled back: judges.drafts).
        threaded = getattr(backend, "uses_database", False) and getattr(backend, "concurrent", False)
        if threaded and not connection.in_atomic_block:
            connections.close_all()
