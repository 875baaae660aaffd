"""The stand-in for a judge whose config the allow-lists refuse: every call is an `error` verdict."""

from __future__ import annotations

from judges.backends.base import VerdictResult
from judges.vendor_access import judge_config_problems


class RefusedBackend:
    """Answers every query with an `error` verdict naming why the judge was not called.

    Plain rather than a JudgeBackend: it has no vendor, prices or pool to set up.
    """

    concurrent = False

    def __init__(self, judge_version, reason: str):
        self.judge_version = judge_version
        self.config = judge_version.config or {}
        self.reason = reason

    def vendor_key(self) -> str:
        return f"refused:{self.judge_version.pk}"

    def judge(self, query):
        return VerdictResult.error(self.reason, context={"backend": self.judge_version.backend, "refused": True})


def refused_backend(judge_version) -> RefusedBackend | None:
    """Return a backend that only answers `error` if the version's config is refused now, else None."""
    problems = judge_config_problems(judge_version.config or {})
    if not problems:
        return None
    return RefusedBackend(judge_version, "judge not called: " + "; ".join(problems))
