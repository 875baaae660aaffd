"""The database side of the ladder table: which judge columns of a report are ladder rungs."""

from __future__ import annotations

from judges.ladder import ladder_table, rung_columns
from judges.models import Backend, JudgeVersion


def ladder_rungs(*, data) -> list[tuple[str, int]]:
    """Return (rung, judge column) of the ladder judges among a report's columns, up the ladder.

    One column per rung: its latest version among the selected runs' verdicts.
    """
    ladder = {judge.id: column for column, judge in enumerate(data.judges) if judge.backend == Backend.LADDER}
    if not ladder:
        return []
    configs = JudgeVersion.objects.filter(pk__in=list(ladder)).values_list("pk", "config")
    numbers = {judge.id: judge.number for judge in data.judges}
    return rung_columns({ladder[pk]: ((config or {}).get("rung"), numbers[pk]) for pk, config in configs})


def ladder_report(*, data) -> list[dict]:
    """Return the report's `ladder`: cumulative catch, false reject and marginal catch per rung."""
    rungs = ladder_rungs(data=data)
    if not rungs:
        return []
    columns = [column for _, column in rungs]
    return ladder_table(rungs=[rung for rung, _ in rungs], draws=data.draws, columns=columns, is_wrong=data.is_wrong)
