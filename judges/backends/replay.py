"""Replayed verdicts: judged elsewhere, imported (see `import_verdicts`). Never calls out."""

from judges.backends.base import JudgeBackend


class BackendCannotJudge(RuntimeError):
    """This backend has no way to judge a query; its verdicts can only be imported."""


class ReplayBackend(JudgeBackend):
    def judge(self, query):
        raise BackendCannotJudge(
            f"{self.judge_version} replays imported verdicts; it cannot judge a query. Import verdicts instead."
        )
