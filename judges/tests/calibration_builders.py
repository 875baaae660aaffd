"""Build gold sets, judges, runs and verdicts for report, import and dashboard tests."""

from decimal import Decimal

from judges.models import Backend, CalibrationRun, Judge, JudgeVersion, RunStatus, Verdict
from labelling.models import GoldSet, GoldSetVersion, GoldSetVersionItem, Query


def make_gold_set(name: str, labels: list[tuple[str, str]], number: int = 1) -> GoldSetVersion:
    """Create a gold set whose version `number` holds one item per (decision, error class)."""
    gold_set, _ = GoldSet.objects.get_or_create(name=name)
    version = GoldSetVersion.objects.create(gold_set=gold_set, number=number)
    for index, (decision, error_class) in enumerate(labels):
        query, _ = Query.objects.get_or_create(
            gold_set=gold_set,
            external_id=f"q{index:03d}",
            defaults={"question": f"question {index}", "sql": f"SELECT {index}"},
        )
        GoldSetVersionItem.objects.create(version=version, query=query, decision=decision, error_class=error_class)
    return version


def make_published_gold_set(name: str, labels: list[tuple[str, str]], number: int = 1) -> GoldSetVersion:
    """Create a gold-set version as `make_gold_set` does, then freeze it as publishing would."""
    version = make_gold_set(name, labels, number=number)
    GoldSetVersion.objects.filter(pk=version.pk).update(is_frozen=True)
    version.refresh_from_db()
    return version


def labels(wrong: int, correct: int, error_class: str = "join_fanout") -> list[tuple[str, str]]:
    return [("wrong", error_class)] * wrong + [("correct", "")] * correct


def make_judge_version(name: str, number: int = 1, simulated: bool = False, **fields) -> JudgeVersion:
    judge, _ = Judge.objects.get_or_create(name=name)
    return JudgeVersion.objects.create(
        judge=judge, number=number, backend=fields.pop("backend", Backend.REPLAY), is_simulated=simulated, **fields
    )


def make_run(version: GoldSetVersion, label: str = "run", status: str = RunStatus.COMPLETED, repeats: int = 1):
    return CalibrationRun.objects.create(gold_set_version=version, label=label, status=status, repeats=repeats)


def item_queries(version: GoldSetVersion) -> list[Query]:
    """Return the version's queries in item order (q000, q001, ...)."""
    return [item.query for item in version.items.select_related("query").order_by("query__external_id")]


def add_verdicts(run, judge_version, decisions, *, repeat=0, cost="0", latency=0.0, reasons=None):
    """Store one verdict per item: decisions[i] in accept/reject/error, or None to skip."""
    run.judge_versions.add(judge_version)
    queries = item_queries(run.gold_set_version)
    Verdict.objects.bulk_create(
        Verdict(
            judge_version=judge_version,
            query=query,
            run=run,
            repeat=repeat,
            decision=decision,
            reason=(reasons or {}).get(index, f"{decision} by {judge_version}"),
            cost_usd=Decimal(cost),
            latency_ms=latency(index) if callable(latency) else latency,
            # As a call records it: a simulated version's verdicts came from the simulator.
            simulated=judge_version.is_simulated,
        )
        for index, (query, decision) in enumerate(zip(queries, decisions, strict=True))
        if decision is not None
    )
