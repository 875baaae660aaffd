"""What the judge edit page offers as worked examples: the judge's misses and false rejects on dev.

A candidate is a dev item of a gold-set version's split that the judge got wrong, as the
dashboard counts it (`judges.confusion.majority_outcomes` on the report's data, split `dev`):
a *miss* is a wrong item its majority verdict accepted, a *false reject* a correct item it
rejected. The figures are those of the judge's newest version with verdicts on that gold-set
version. Test items are never offered (they are not loaded), and `judges.examples` refuses one
sent anyway. A version without a split offers nothing and says how to split it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from judges import confusion
from judges.calibration_data import load_calibration
from judges.models import Judge, JudgeVersion
from labelling.models import GoldSetVersion, Query
from labelling.split_models import GoldSetSplit, SplitPart

# How many of each kind the page lists (the most decided first: all draws agreed on the error).
CANDIDATES_SHOWN = 25


def example_value(gold_set_version_id: int, external_id: str) -> str:
    """The form value naming one gold item of one gold-set version: "<version id>:<external id>"."""
    return f"{gold_set_version_id}:{external_id}"


@dataclass
class Candidates:
    """The edit page's examples section for one gold-set version."""

    gold_set_version: GoldSetVersion | None
    gold_versions: list[GoldSetVersion] = field(default_factory=list)
    judge_version: JudgeVersion | None = None  # whose verdicts the misses and false rejects are
    is_split: bool = False
    misses: list[dict] = field(default_factory=list)
    false_rejects: list[dict] = field(default_factory=list)
    try_items: list[dict] = field(default_factory=list)  # what "try on one item" may run on: dev (or all if unsplit)
    problem: str = ""  # why nothing is offered


def candidate_gold_versions(judge: Judge) -> list[GoldSetVersion]:
    """Return the frozen gold-set versions the judge ran on (newest first), else every frozen version."""
    frozen = GoldSetVersion.objects.filter(is_frozen=True).select_related("gold_set")
    ran_on = list(frozen.filter(calibration_runs__judge_versions__judge=judge).distinct().order_by("-pk"))
    return ran_on or list(frozen.order_by("-pk"))


def _default_version(versions: list[GoldSetVersion]) -> GoldSetVersion | None:
    split = set(GoldSetSplit.objects.filter(version__in=versions).values_list("version_id", flat=True))
    return next((version for version in versions if version.pk in split), versions[0] if versions else None)


def _items(data, rows: np.ndarray, column: int, questions: dict[int, str]) -> list[dict]:
    counts = data.counts
    decided = np.abs(counts.rejects[rows, column] - counts.accepts[rows, column])
    ordered = rows[np.lexsort((np.asarray(data.external_ids, dtype=object)[rows], -decided))][:CANDIDATES_SHOWN]
    return [
        {
            "value": example_value(data.gold_set_version.pk, data.external_ids[row]),
            "query_id": int(data.query_ids[row]),
            "external_id": data.external_ids[row],
            "error_class": data.error_class[row],
            "question": questions.get(int(data.query_ids[row]), ""),
            "rejects": int(counts.rejects[row, column]),
            "accepts": int(counts.accepts[row, column]),
        }
        for row in ordered.tolist()
    ]


def example_candidates_get(*, judge: Judge, gold_set_version_id: int | None = None) -> Candidates:
    """Return the candidates on the chosen gold-set version (default: the newest split one the judge ran on)."""
    versions = candidate_gold_versions(judge)
    chosen = next((v for v in versions if v.pk == gold_set_version_id), None) or _default_version(versions)
    found = Candidates(gold_set_version=chosen, gold_versions=versions)
    if chosen is None:
        found.problem = "No gold set is published yet: examples come from a gold set's dev items."
        return found
    found.is_split = GoldSetSplit.objects.filter(version=chosen).exists()
    items = chosen.items.order_by("query__external_id")
    if found.is_split:
        items = items.filter(query__split_items__split__version=chosen, query__split_items__part=SplitPart.DEV)
    found.try_items = [
        {"value": example_value(chosen.pk, external_id), "external_id": external_id, "decision": decision}
        for external_id, decision in items.values_list("query__external_id", "decision")
    ]
    if not found.is_split:
        found.problem = (
            f"{chosen} has no dev/test split, so nothing on it may become an example: split it once with "
            f"`manage.py split_gold --gold-set {chosen.gold_set.name} --version {chosen.number} --test-share 0.5 "
            "--seed 1`, then read its dev part with the dashboard's Split control."
        )
        return found
    data = load_calibration(gold_set_version=chosen, split=SplitPart.DEV)
    ours = set(judge.versions.values_list("pk", flat=True))
    columns = [column for column, column_judge in enumerate(data.judges) if column_judge.id in ours]
    if not columns:
        found.problem = f"No version of {judge.name} has verdicts from a completed run on {chosen}'s dev items yet."
        return found
    column = max(columns, key=lambda c: data.judges[c].number)
    found.judge_version = JudgeVersion.objects.select_related("judge").get(pk=data.judges[column].id)
    outcomes = confusion.majority_outcomes(data.counts, column)
    misses = np.flatnonzero(data.is_wrong & (outcomes == confusion.OUTCOME_ACCEPT))
    false_rejects = np.flatnonzero(~data.is_wrong & (outcomes == confusion.OUTCOME_REJECT))
    wanted = [int(data.query_ids[row]) for row in (*misses.tolist(), *false_rejects.tolist())]
    questions = dict(Query.objects.filter(pk__in=wanted).values_list("pk", "question"))
    found.misses = _items(data, misses, column, questions)
    found.false_rejects = _items(data, false_rejects, column, questions)
    return found
