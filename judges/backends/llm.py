"""The LLM backend for a vendor name, shared by the plain and the composite backends."""

from judges.backends.anthropic_backend import AnthropicBackend
from judges.backends.base import JudgeBackend
from judges.backends.openai_backend import OpenAICompatibleBackend
from judges.models import Backend


def vendor_backend(judge_version, vendor: str, *, hypotheses: bool = False) -> JudgeBackend:
    """Return the LLM backend for `vendor` (anthropic or openai_compatible)."""
    if vendor == Backend.ANTHROPIC:
        return AnthropicBackend(judge_version, hypotheses=hypotheses)
    if vendor == Backend.OPENAI_COMPATIBLE:
        return OpenAICompatibleBackend(judge_version, hypotheses=hypotheses)
    raise ValueError(f"unknown vendor {vendor!r}: use anthropic or openai_compatible")
