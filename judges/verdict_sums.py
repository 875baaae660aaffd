"""Per-judge verdict counts and costs of runs: recorded as a run completes, summed otherwise.

A report prices each judge from four sums over its verdicts (how many, how many with a
measured cost, their cost, how many simulated). Summing them scans every verdict of the
runs, a second time after the report's own fetch (0.9 s at five million verdicts), so a
completed run's sums are recorded once (`RunVerdictSums`). Triggers in the database delete
a run's recorded sums whenever one of its verdicts is written: recorded sums are never
stale, whoever writes, and a run without them is summed from its verdicts as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, Q, Sum

from judges.models import RunVerdictSums, Verdict

RawSums = tuple[int, int, Decimal, int]  # verdicts, verdicts with a cost, their cost, simulated verdicts


def summed_from_verdicts(verdicts, *group) -> Iterator[tuple[tuple, RawSums]]:
    """Yield (group values, raw sums) of a Verdict queryset, summed by the database."""
    rows = (
        verdicts.values_list(*group)
        .annotate(
            verdicts=Count("id"),
            costed=Count("cost_usd"),
            cost=Sum("cost_usd"),
            simulated=Count("id", filter=Q(simulated=True)),
        )
        .order_by()
    )
    for *key, verdicts_n, costed, cost, simulated in rows:
        yield tuple(key), (verdicts_n, costed, Decimal(cost or 0), simulated)


@transaction.atomic
def record_verdict_sums(run_ids: Iterable[int]) -> None:
    """Record the runs' sums per judge version from their verdicts, replacing any recorded.

    Call it once nothing else writes these runs' verdicts (the run completed, or this
    transaction wrote them): a verdict written while the sums are summed would not be in
    them, and its trigger could not delete rows not yet committed.
    """
    run_ids = list(run_ids)
    RunVerdictSums.objects.filter(run_id__in=run_ids).delete()
    RunVerdictSums.objects.bulk_create(
        RunVerdictSums(
            run_id=run_id, judge_version_id=judge_id, verdicts=n, costed=costed, cost_usd=cost, simulated=simulated
        )
        for (run_id, judge_id), (n, costed, cost, simulated) in summed_from_verdicts(
            Verdict.objects.filter(run_id__in=run_ids), "run_id", "judge_version_id"
        )
    )


def verdict_sums(run_ids: list[int], *, by_gold_set_version: bool = False) -> dict[tuple, RawSums]:
    """Return {(judge version id,) or (gold-set version id, judge version id): raw sums} over the runs.

    Recorded sums are read where a run has them; the other runs' verdicts are summed.
    """
    version = ("run__gold_set_version_id",) if by_gold_set_version else ()
    recorded = RunVerdictSums.objects.filter(run_id__in=run_ids).values_list(
        "run_id", *version, "judge_version_id", "verdicts", "costed", "cost_usd", "simulated"
    )
    totals: dict[tuple, RawSums] = {}
    summed_runs = set()
    for run_id, *key_and_sums in recorded:
        summed_runs.add(run_id)
        add_sums(totals, tuple(key_and_sums[:-4]), tuple(key_and_sums[-4:]))
    unrecorded = [run_id for run_id in run_ids if run_id not in summed_runs]
    if unrecorded:
        verdicts = Verdict.objects.filter(run_id__in=unrecorded)
        for key, sums in summed_from_verdicts(verdicts, *version, "judge_version_id"):
            add_sums(totals, key, sums)
    return totals


def add_sums(totals: dict[tuple, RawSums], key: tuple, sums: RawSums) -> None:
    """Add one group's sums into `totals` (every sum is a plain sum, so parts add up exactly)."""
    before = totals.get(key)
    totals[key] = sums if before is None else tuple(a + b for a, b in zip(before, sums, strict=True))
