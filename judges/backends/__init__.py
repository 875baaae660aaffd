"""Judge backends behind one interface: `get_backend(judge_version).judge(query) -> VerdictResult`."""

import logging

from django.db import connection, connections

from judges.backends.base import JudgeBackend, VerdictResult
from judges.backends.hypothesis_probe import HypothesisProbeBackend
from judges.backends.ladder import LadderBackend
from judges.backends.llm import vendor_backend
from judges.backends.refused import refused_backend
from judges.backends.replay import BackendCannotJudge, ReplayBackend
from judges.backends.self_consistency import SelfConsistencyBackend
from judges.backends.verifier import VerifierBackend
from judges.models import Backend

__all__ = ["BackendCannotJudge", "JudgeBackend", "VerdictResult", "get_backend", "judge_safely", "vendor_backend"]

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
