"""The database side of "informative first": the judges' verdicts on waiting items, ranked.

Registered on the labelling queue by `judges.apps` (labelling cannot read verdicts itself).
"""

from __future__ import annotations

import numpy as np
from django.db.models import Count

from judges import metrics
from judges.informative import informative_order, informative_scores
from judges.models import Decision, Verdict
from labelling.models import ErrorClass, Label, LabelDecision

CLASSES = list(ErrorClass.values)


def labelled_wrong_per_class(*, gold_set) -> list[int]:
    """Return, per error class, how many of the gold set's items carry a current wrong label of it."""
    counts = dict(
        Label.objects.filter(query__gold_set=gold_set, is_current=True, decision=LabelDecision.WRONG)
        .values_list("error_class")
        .annotate(n=Count("query_id", distinct=True))
        .order_by()
    )
    return [counts.get(slug, 0) for slug in CLASSES]


def verdict_signals(*, query_ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Return (reject probability items × judge versions, items × classes votes of rejecting verdicts).

    Every answered verdict on the items counts, from any run or live; errors are left out.
    """
    rows = list(
        Verdict.objects.filter(query_id__in=query_ids)
        .exclude(decision=Decision.ERROR)
        .values_list("query_id", "judge_version_id", "decision", "error_class_guess")
        .order_by()
    )
    item_of = {query_id: index for index, query_id in enumerate(query_ids)}
    judges = sorted({row[1] for row in rows})
    column_of = {judge: index for index, judge in enumerate(judges)}
    votes = np.zeros((len(query_ids), len(CLASSES)))
    class_index = {slug: index for index, slug in enumerate(CLASSES)}
    for query_id, _, decision, guess in rows:
        if decision == Decision.REJECT and guess in class_index:
            votes[item_of[query_id], class_index[guess]] += 1
    counts = metrics.counts_from_rows(
        [item_of[row[0]] for row in rows],
        [column_of[row[1]] for row in rows],
        [metrics.DECISION_CODES[row[2]] for row in rows],
        len(query_ids),
        len(judges),
    )
    return metrics.reject_prob(counts), votes


def informative_rank(*, gold_set, query_ids: list[int]) -> list[int]:
    """Rank waiting items: the judges' disagreement plus the per-class interval a label would narrow."""
    probs, votes = verdict_signals(query_ids=query_ids)
    class_counts = labelled_wrong_per_class(gold_set=gold_set) if gold_set is not None else [0] * len(CLASSES)
    scores = informative_scores(probs=probs, class_votes=votes, class_counts=class_counts)
    return informative_order(ids=query_ids, scores=scores)
