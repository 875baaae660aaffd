"""The database side of "informative first": the judges' verdicts on waiting items, ranked.

Registered on the labelling queue by `judges.apps` (labelling cannot read verdicts itself).
"""

from __future__ import annotations

import numpy as np
from django.db.models import Count

from judges import metrics
from judges.informative import informative_order, informative_scores
from judges.models import Decision, Verdict
from labelling.error_classes import error_classes_split
from labelling.models import Label, LabelDecision
from labelling.taxonomy import TaxonomyIndex, goldset_taxonomy, taxonomy_index


def labelled_wrong_per_class(*, gold_set, classes: list[str]) -> list[int]:
    """Return, per error class, how many of the gold set's items carry a current wrong label of it.

    The database counts items per stored class text; an item labelled with several classes
    counts in each of them.
    """
    per_text = (
        Label.objects.filter(query__gold_set=gold_set, is_current=True, decision=LabelDecision.WRONG)
        .values_list("error_class")
        .annotate(n=Count("query_id", distinct=True))
        .order_by()
    )
    counts: dict[str, int] = {}
    for text, n in per_text:
        for name in error_classes_split(text):
            counts[name] = counts.get(name, 0) + n
    return [counts.get(slug, 0) for slug in classes]


def verdict_signals(*, query_ids: list[int], taxonomy: TaxonomyIndex) -> tuple[np.ndarray, np.ndarray]:
    """Return (reject probability items × judge versions, items × classes votes of rejecting verdicts).

    Every answered verdict on the items counts, from any run or live; errors are left out. A
    guess counts for the class of the taxonomy it names (through its other names and maps_to).
    """
    classes = taxonomy.active
    rows = list(
        Verdict.objects.filter(query_id__in=query_ids)
        .exclude(decision=Decision.ERROR)
        .values_list("query_id", "judge_version_id", "decision", "error_class_guess")
        .order_by()
    )
    item_of = {query_id: index for index, query_id in enumerate(query_ids)}
    judges = sorted({row[1] for row in rows})
    column_of = {judge: index for index, judge in enumerate(judges)}
    votes = np.zeros((len(query_ids), len(classes)))
    class_index = {slug: index for index, slug in enumerate(classes)}
    for query_id, _, decision, guess in rows:
        named = taxonomy.resolve(guess) if guess else None
        if decision == Decision.REJECT and named in class_index:
            votes[item_of[query_id], class_index[named]] += 1
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
    taxonomy = taxonomy_index(goldset_taxonomy(gold_set))
    probs, votes = verdict_signals(query_ids=query_ids, taxonomy=taxonomy)
    classes = taxonomy.active
    class_counts = (
        labelled_wrong_per_class(gold_set=gold_set, classes=classes) if gold_set is not None else [0] * len(classes)
    )
    scores = informative_scores(probs=probs, class_votes=votes, class_counts=class_counts)
    return informative_order(ids=query_ids, scores=scores)
