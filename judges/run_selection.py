"""Which calibration runs a report rests on: the user's run selection and the default rule.

Its own module because the report (`judges.report`) and the selectors that build on the
report both need it; the report must not import the selectors.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from judges.models import CalibrationRun, RunStatus
from labelling.models import QueryOrigin

# Which gold items a report counts: organic ones, mutation-seeded ones, or both.
SOURCE_BOTH = "both"
SOURCES = (QueryOrigin.ORGANIC.value, QueryOrigin.MUTATED.value, SOURCE_BOTH)


@dataclass(frozen=True)
class RunSelection:
    """Which calibration runs a report rests on, as the user asked for them."""

    run_ids: tuple[int, ...] | None = None
    # Runs named by label (as import_verdicts names them): every run with that label on the version.
    run_labels: tuple[str, ...] = ()
    since: datetime.date | None = None
    until: datetime.date | None = None
    source: str = SOURCE_BOTH

    @property
    def rule(self) -> str:
        """Describe the selection in words, as the page and the JSON state it."""
        parts = []
        if self.named:
            parts.append("runs " + ", ".join([*(str(i) for i in self.run_ids or ()), *self.run_labels]))
        else:
            parts.append("every completed run")
        if self.since:
            parts.append(f"created on or after {self.since.isoformat()}")
        if self.until:
            parts.append(f"created on or before {self.until.isoformat()}")
        if self.source != SOURCE_BOTH:
            parts.append(f"on {self.source} items only")
        return " ".join(parts)

    @property
    def named(self) -> bool:
        """True when the user named runs (by id or label) rather than taking the default rule."""
        return self.run_ids is not None or bool(self.run_labels)

    def as_dict(self) -> dict:
        return {
            "runs": list(self.run_ids) if self.run_ids is not None else None,
            "run_labels": list(self.run_labels),
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "source": self.source,
            "rule": self.rule,
        }


def run_selection_parse(
    *, runs: str | None = None, since: str | None = None, until: str | None = None, source: str | None = None
) -> RunSelection:
    """Parse "3,4", ISO dates and an item source as typed by a user; raise ValueError saying what is wrong."""
    source = (source or "").strip() or SOURCE_BOTH
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}; got {source!r}")
    run_ids, run_labels = None, ()
    if runs is not None and runs.strip():
        ids, labels = set(), []
        for part in (part.strip() for part in runs.split(",")):
            if not part:
                continue
            if part.lstrip("-").isdigit():
                if int(part) < 1:
                    raise ValueError(f"runs must be positive run ids or run labels separated by commas; got {runs!r}")
                ids.add(int(part))
            elif part not in labels:
                labels.append(part)
        if not ids and not labels:
            raise ValueError(f"runs must be run ids or labels separated by commas, e.g. 3,join-lint; got {runs!r}")
        run_ids, run_labels = (tuple(sorted(ids)) if ids else None), tuple(labels)
    return RunSelection(
        run_ids=run_ids,
        run_labels=run_labels,
        since=parse_date(since, "since"),
        until=parse_date(until, "until"),
        source=source,
    )


def gold_items_of_source(items, source: str):
    """Narrow a queryset of gold-set version items to the selection's source (organic, mutated or both)."""
    return items if source == SOURCE_BOTH else items.filter(query__origin=source)


def parse_date(raw: str | None, name: str) -> datetime.date | None:
    if raw is None or not raw.strip():
        return None
    try:
        return datetime.date.fromisoformat(raw.strip())
    except ValueError:
        raise ValueError(f"{name} must be a date like 2026-01-31; got {raw!r}") from None


def calibration_run_ids_get(*, gold_set_version, selection: RunSelection | None = None) -> list[int]:
    """Return the ids, ascending, of the runs a report on this gold-set version rests on (`calibration_runs_get`)."""
    return list(calibration_runs_get(gold_set_version=gold_set_version, selection=selection))


def calibration_runs_get(*, gold_set_version, selection: RunSelection | None = None) -> dict[int, str]:
    """Return {run id: its label ("" for none)}, by id, of the runs a report on this gold-set version rests on.

    Default: every completed run on the version. Named runs must exist on this version
    (any status: the user asked for them); a date range keeps runs created within it
    (both ends included, in the server's time zone) and, without named runs, completed ones.
    Raises ValueError naming runs that are not on the version.
    """
    selection = selection or RunSelection()
    runs = CalibrationRun.objects.filter(gold_set_version=gold_set_version)
    if selection.named:
        ids = set(selection.run_ids or ())
        found = set(runs.filter(pk__in=ids).values_list("pk", flat=True))
        labelled = dict(runs.filter(label__in=selection.run_labels).values_list("pk", "label"))
        unknown = [str(i) for i in sorted(ids - found)]
        unknown += [repr(label) for label in selection.run_labels if label not in labelled.values()]
        if unknown:
            raise ValueError(
                f"run{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                f"{'are' if len(unknown) > 1 else 'is'} not a calibration run on {gold_set_version}"
            )
        runs = runs.filter(pk__in=found | set(labelled))
    else:
        runs = runs.filter(status=RunStatus.COMPLETED)
    if selection.since:
        runs = runs.filter(created_at__date__gte=selection.since)
    if selection.until:
        runs = runs.filter(created_at__date__lte=selection.until)
    return dict(runs.order_by("pk").values_list("pk", "label"))


def judge_calibration_runs_get(*, judge_version) -> tuple[object, list[int]]:
    """Return (gold-set version, run ids) that calibrate a live judge: triage's run rule.

    The gold-set version of the judge version's latest completed run, and every completed
    run on it — the dashboard's default selection, of which the judge's figures use the
    runs it took part in.
    """
    latest = (
        CalibrationRun.objects.filter(judge_versions=judge_version, status=RunStatus.COMPLETED)
        .select_related("gold_set_version__gold_set")
        .order_by("-finished_at", "-created_at", "-pk")
        .first()
    )
    if latest is None:
        return None, []
    version = latest.gold_set_version
    return version, calibration_run_ids_get(gold_set_version=version)
