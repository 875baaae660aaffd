"""Judge backends behind one interface: `get_backend(judge_version).judge(query) -> VerdictResult`."""

from judges import vendor_access
from judges.backends.base import JudgeBackend, VerdictResult
from judges.backends.ladder import LadderBackend
from judges.backends.replay import BackendCannotJudge
from judges.models import Backend

__all__ = ["BackendCannotJudge", "JudgeBackend", "VerdictResult", "get_backend", "vendor_backend"]


def vendor_backend(judge_version, vendor: str, *, hypotheses: bool = False) -> JudgeBackend:
    """Return the LLM backend for `vendor` (anthropic or openai_compatible)."""
    if vendor == Backend.ANTHROPIC:
        from judges.backends.anthropic_backend import AnthropicBackend

        return AnthropicBackend(judge_version, hypotheses=hypotheses)
    if vendor == Backend.OPENAI_COMPATIBLE:
        from judges.backends.openai_backend import OpenAICompatibleBackend

        return OpenAICompatibleBackend(judge_version, hypotheses=hypotheses)
    raise ValueError(f"unknown vendor {vendor!r}: use anthropic or openai_compatible")


def get_backend(judge_version) -> JudgeBackend:
    """Build the backend a judge version names."""
    if refused := vendor_access.refused_backend(judge_version):  # a key or host outside the allow-lists
        return refused
    backend = judge_version.backend
    if backend in (Backend.ANTHROPIC, Backend.OPENAI_COMPATIBLE):
        return vendor_backend(judge_version, backend)
    if backend == Backend.SELF_CONSISTENCY:
        from judges.backends.self_consistency import SelfConsistencyBackend

        return SelfConsistencyBackend(judge_version)
    if backend == Backend.HYPOTHESIS_PROBE:
        from judges.backends.hypothesis_probe import HypothesisProbeBackend

        return HypothesisProbeBackend(judge_version)
    if backend == Backend.VERIFIER:
        from judges.backends.verifier import VerifierBackend

        return VerifierBackend(judge_version)
    if backend == Backend.LADDER:
        return LadderBackend(judge_version)
    if backend == Backend.REPLAY:
        from judges.backends.replay import ReplayBackend

        return ReplayBackend(judge_version)
    raise ValueError(f"unknown backend {backend!r}")
