"""The live window as counts: what the drift monitor and the live error rate read, grouped by the database.

Every live figure (the judge's live catch and false-reject rates, its flag rate, the
Rogan–Gladen, stratified and PPI error rates) depends on a live query only through a few
facts: its status (flagged or passed), the decision of its latest current correct/wrong
label (its own for a flagged query, its audit copy's for a passed one), and the judge's live
verdict on it. So the database groups the window by those facts and returns at most a few
dozen rows of counts, however many live queries there are; nothing here holds one row per
live query in Python (`triage/tests/test_live_counts.py` counts the rows fetched).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Case, CharField, Count, OuterRef, Subquery, Value, When

from judges.models import Decision, Verdict
from labelling.models import Label, LabelDecision
from triage.models import IngestStatus, LiveQuery

WINDOW_STATUSES = (IngestStatus.FLAGGED, IngestStatus.PASSED)
NO_LABEL = ""


@dataclass(frozen=True)
class LiveCell:
    """How many live queries of the window share one combination of facts."""

    flagged: bool  # the pipeline flagged it (else it passed)
    label: str  # "wrong", "correct" or "" (no current correct/wrong label)
    decision: str  # the judge's live verdict: accept, reject, error or "" (none)
    count: int


@dataclass(frozen=True)
class LiveSample:
    """One live judge's window, as counts."""

    cells: list[LiveCell]
    models: Counter = field(default_factory=Counter)  # the vendor model ids its live verdicts reported

    def total(self, **facts) -> int:
        """Count the live queries whose facts are the ones named, e.g. total(flagged=True, label="wrong")."""
        return sum(cell.count for cell in self.cells if all(getattr(cell, k) == v for k, v in facts.items()))

    @property
    def flagged_total(self) -> int:
        return self.total(flagged=True)

    @property
    def unflagged_total(self) -> int:
        return self.total(flagged=False)

    @property
    def judged(self) -> int:
        """Live queries the judge answered (accept or reject)."""
        return self.total(decision=Decision.ACCEPT) + self.total(decision=Decision.REJECT)

    @property
    def flagged_by_judge(self) -> int:
        return self.total(decision=Decision.REJECT)

    def labelled(self, flagged: bool) -> int:
        """Labelled live queries of a stratum, whatever the judge said."""
        return self.total(flagged=flagged) - self.total(flagged=flagged, label=NO_LABEL)

    def labelled_wrong(self, flagged: bool) -> int:
        return self.total(flagged=flagged, label=LabelDecision.WRONG)

    @property
    def flagged_share_labelled(self) -> float:
        return self.labelled(True) / self.flagged_total if self.flagged_total else 0.0

    @property
    def audit_share_labelled(self) -> float:
        return self.labelled(False) / self.unflagged_total if self.unflagged_total else 0.0

    def answered_labelled(self) -> list[LiveCell]:
        """The cells of labelled queries the judge answered: the live rates' rows, with their counts."""
        return [
            cell
            for cell in self.cells
            if cell.label != NO_LABEL and cell.decision in (Decision.ACCEPT, Decision.REJECT) and cell.count
        ]


def live_window(since):
    """The live queries the estimates rest on: flagged or passed, created since `since` (all when None)."""
    live = LiveQuery.objects.filter(status__in=WINDOW_STATUSES)
    return live if since is None else live.filter(created_at__gte=since)


def latest_label(query_field: str) -> Subquery:
    """The decision of the latest current correct/wrong label of the query in `query_field` (unsure says nothing)."""
    labels = Label.objects.filter(
        query_id=OuterRef(query_field),
        is_current=True,
        decision__in=[LabelDecision.CORRECT, LabelDecision.WRONG],
    ).order_by("-created_at", "-pk")
    return Subquery(labels.values("decision")[:1])


def window_label():
    """A flagged query's own latest label (the analyst's), a passed one's audit copy's."""
    return Case(
        When(status=IngestStatus.FLAGGED, then=latest_label("query_id")),
        When(audit_query__isnull=False, then=latest_label("audit_query_id")),
        default=Value(NO_LABEL),
        output_field=CharField(),
    )


def live_sample_load(*, judge_version, since) -> LiveSample:
    """Group the live window by (status, label, the judge's live verdict); count each group."""
    verdict = Verdict.objects.filter(judge_version=judge_version, run__isnull=True, query_id=OuterRef("pk"))
    rows = (
        live_window(since)
        .annotate(window_label=window_label(), judge_decision=Subquery(verdict.order_by("-pk").values("decision")[:1]))
        .values("status", "window_label", "judge_decision")
        .annotate(n=Count("pk"))
        .order_by()
    )
    grouped = Counter()
    for status, label, decision, n in rows.values_list("status", "window_label", "judge_decision", "n"):
        # No label row (NULL) and no audit copy ("") are one fact: no label.
        grouped[status == IngestStatus.FLAGGED, label or NO_LABEL, decision or ""] += n
    cells = [LiveCell(*facts, count) for facts, count in sorted(grouped.items())]
    models = Counter(
        dict(
            Verdict.objects.filter(
                judge_version=judge_version, run__isnull=True, query_id__in=live_window(since).values("pk")
            )
            .exclude(model_reported="")
            .values_list("model_reported")
            .annotate(n=Count("id"))
            .order_by()
        )
    )
    return LiveSample(cells=cells, models=models)


def ppi_counts_load(*, since) -> dict[tuple[bool, str], int]:
    """Return {(flagged, audit label or ""): live queries} of the window: PPI's labelled and unlabelled parts."""
    rows = (
        live_window(since)
        .annotate(
            audit_label=Case(
                When(audit_query__isnull=False, then=latest_label("audit_query_id")),
                default=Value(NO_LABEL),
                output_field=CharField(),
            ),
            flagged=Case(When(status=IngestStatus.FLAGGED, then=Value(1)), default=Value(0)),
        )
        .values("flagged", "audit_label")
        .annotate(n=Count("pk"))
        .order_by()
        .values_list("flagged", "audit_label", "n")
    )
    counts: dict[tuple[bool, str], int] = {}
    for flagged, label, n in rows:
        key = (bool(flagged), label or NO_LABEL)
        counts[key] = counts.get(key, 0) + n
    return counts
