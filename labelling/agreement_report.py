"""Agreement figures of a gold set: load ratings (ORM), then compute (pure numpy functions)."""

import itertools
from collections import Counter
from dataclasses import dataclass, field

from labelling import agreement
from labelling.models import Adjudication, ErrorClass, GoldSet, Query
from labelling.selectors import agreement_ratings, disagreeing_queries


@dataclass
class PairAgreement:
    rater_a: str
    rater_b: str
    items: int
    kappa: float
    kappa_decision: float


@dataclass
class ClassAgreement:
    error_class: str
    ratings: int
    alpha: float
    fleiss: float | None


@dataclass
class AgreementReport:
    items: int = 0
    raters: list[str] = field(default_factory=list)
    alpha: float = float("nan")
    alpha_decision: float = float("nan")
    fleiss: float | None = None
    fleiss_raters: int = 0
    fleiss_items: int = 0
    pairs: list[PairAgreement] = field(default_factory=list)
    classes: list[ClassAgreement] = field(default_factory=list)
    disagreements: list[dict] = field(default_factory=list)


def _decision(category: str) -> str:
    return category.split(":", 1)[0]


def agreement_report(*, gold_set: GoldSet) -> AgreementReport:
    """Compute Cohen's kappa per pair, Krippendorff's alpha and Fleiss' kappa overall and per class."""
    table = agreement_ratings(gold_set=gold_set)
    report = AgreementReport(items=len(table.ratings), raters=table.raters)
    if not table.ratings:
        return report
    per_item = [list(r.values()) for r in table.ratings.values()]
    categories = sorted({c for ratings in per_item for c in ratings})
    report.alpha = agreement.krippendorff_alpha_nominal(agreement.count_table(per_item, categories))
    decisions = [[_decision(c) for c in ratings] for ratings in per_item]
    report.alpha_decision = agreement.krippendorff_alpha_nominal(
        agreement.count_table(decisions, sorted({d for r in decisions for d in r}))
    )
    # Fleiss needs the same number of raters on every item: use the most common number.
    report.fleiss_raters = Counter(len(r) for r in per_item).most_common(1)[0][0]
    even = [r for r in per_item if len(r) == report.fleiss_raters]
    report.fleiss_items = len(even)
    report.fleiss = agreement.fleiss_kappa(agreement.count_table(even, categories))
    for a, b in itertools.combinations(table.raters, 2):
        both = [(r[a], r[b]) for r in table.ratings.values() if a in r and b in r]
        if not both:
            continue
        ra, rb = [x for x, _ in both], [y for _, y in both]
        report.pairs.append(
            PairAgreement(
                a,
                b,
                len(both),
                agreement.cohen_kappa(ra, rb),
                agreement.cohen_kappa([_decision(x) for x in ra], [_decision(y) for y in rb]),
            )
        )
    for value, _label in ErrorClass.choices:
        category = f"wrong:{value}"
        used = sum(ratings.count(category) for ratings in per_item)
        if not used:
            continue
        binary = agreement.binary_for_category(per_item, category)
        counts = agreement.count_table(binary, [False, True])
        even_binary = agreement.binary_for_category(even, category)
        report.classes.append(
            ClassAgreement(
                value,
                used,
                agreement.krippendorff_alpha_nominal(counts),
                agreement.fleiss_kappa(agreement.count_table(even_binary, [False, True])) if even else None,
            )
        )
    report.disagreements = _disagreement_rows(table)
    return report


def _disagreement_rows(table) -> list[dict]:
    ids = disagreeing_queries(table=table)
    queries = Query.objects.in_bulk(ids)
    latest: dict[int, Adjudication] = {}
    for adjudication in Adjudication.objects.filter(query_id__in=ids).select_related("adjudicator"):
        latest.setdefault(adjudication.query_id, adjudication)  # ordered newest first
    return [
        {"query": queries[q], "ratings": sorted(table.ratings[q].items()), "adjudication": latest.get(q)}
        for q in ids
        if q in queries
    ]
