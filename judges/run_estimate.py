"""What a calibration run would take, shown before Start: calls, cost and time.

`run_estimate` is pure: calls are items × judge versions × repeats; each version's cost and
time come from the mean cost and latency of the verdicts it has already given (none yet:
unknown, said so, never a guess), its time divided by its concurrency, the versions running
side by side. `run_estimate_get` reads those means from the database.
"""

from dataclasses import dataclass

from django.db.models import Avg, Count

from judges.models import Backend, JudgeVersion, Verdict
from labelling.models import GoldSetVersion

DEFAULT_CONCURRENCY = 8  # judges/backends/policy.py: a vendor pool's concurrency unless the config says


@dataclass(frozen=True)
class VersionMeasure:
    label: str
    mean_cost_usd: float | None
    mean_latency_ms: float | None
    concurrency: int


@dataclass(frozen=True)
class RunEstimate:
    items: int
    calls: int
    cost_usd: float | None  # None: no chosen version has a measured cost
    unmeasured: tuple[str, ...]  # versions with no verdicts to estimate from
    seconds: float | None

    @property
    def partial(self) -> bool:
        return bool(self.unmeasured) and self.cost_usd is not None


def run_estimate(*, items: int, repeats: int, measures: list[VersionMeasure]) -> RunEstimate:
    per_version = items * repeats
    costs = [m.mean_cost_usd * per_version for m in measures if m.mean_cost_usd is not None]
    times = [per_version * m.mean_latency_ms / 1000 / max(1, m.concurrency) for m in measures if m.mean_latency_ms]
    return RunEstimate(
        items=items,
        calls=per_version * len(measures),
        cost_usd=sum(costs) if costs else None,
        unmeasured=tuple(m.label for m in measures if m.mean_cost_usd is None),
        seconds=max(times) if times else None,
    )


def run_estimate_get(*, gold_set_version, judge_versions, repeats: int) -> RunEstimate:
    versions = list(judge_versions)
    means = {
        row["judge_version"]: row
        for row in Verdict.objects.filter(judge_version__in=versions, cost_usd__isnull=False)
        .values("judge_version")
        .annotate(cost=Avg("cost_usd"), latency=Avg("latency_ms"), n=Count("pk"))
    }
    measures = []
    for version in versions:
        row = means.get(version.pk)
        concurrency = int((version.config or {}).get("concurrency") or DEFAULT_CONCURRENCY)
        cost = float(row["cost"]) if row and row["cost"] is not None else None
        latency = float(row["latency"]) if row and row["latency"] is not None else None
        measures.append(VersionMeasure(str(version), cost, latency, concurrency))
    items = gold_set_version.items.count() if gold_set_version is not None else 0
    return run_estimate(items=items, repeats=int(repeats), measures=measures)


# --- the run form's defaults and choices ---------------------------------------------------


def _number(value) -> int | None:
    return int(value) if isinstance(value, str) and value.isdigit() else None


def run_start_initial(query: dict) -> dict:
    """Preselect what the user came from: `?gold_set_version=`, and `?judge=` (its latest runnable
    version) or `?judge_version=`; the form itself falls back to the version with most items."""
    initial = {"gold_set_version": _number(query.get("gold_set_version"))}
    runnable = JudgeVersion.objects.exclude(backend=Backend.REPLAY)
    chosen = None
    if (pk := _number(query.get("judge_version"))) is not None:
        chosen = runnable.filter(pk=pk).first()
    elif (judge := _number(query.get("judge"))) is not None:
        chosen = runnable.filter(judge_id=judge).order_by("-number").first()
    if chosen is not None:
        initial["judge_versions"] = [chosen.pk]
    return initial


def _form_choices(form) -> tuple:
    if form.is_bound:
        form.is_valid()  # errors are the form's to show; the estimate uses what is valid
        data = form.cleaned_data
        return data.get("gold_set_version"), list(data.get("judge_versions") or []), data.get("repeats") or 1
    version = GoldSetVersion.objects.filter(pk=form.initial.get("gold_set_version")).first()
    judges = list(JudgeVersion.objects.filter(pk__in=form.initial.get("judge_versions") or []))
    return version, judges, form.fields["repeats"].initial


def run_start_estimate(form) -> RunEstimate:
    version, judge_versions, repeats = _form_choices(form)
    return run_estimate_get(gold_set_version=version, judge_versions=judge_versions, repeats=repeats)


def run_start_any_simulated(form) -> bool:
    """Whether any judge version the form offers answers from the simulator (the copy mentions it only then)."""
    return any(version.is_simulated for version in form.fields["judge_versions"].queryset)
