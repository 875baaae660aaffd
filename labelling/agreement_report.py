"""Agreement figures of a gold set: load ratings (ORM), then compute (pure numpy functions).

`agreement_report` returns one dict, the contract of `agreement_report --format json`, of
the agreement page and of its CSV/JSON downloads, so all of them show the same numbers:

- `pairs`: Cohen's kappa of every labeller pair on the items both rated
  (`{"a", "b", "n", "cohen_kappa", "cohen_kappa_with_class"}`);
- `fleiss_kappa` (over the items with the most common number of raters) and
  `krippendorff_alpha` (every item rated twice or more), on the decision
  (correct / wrong / unsure), plus `*_with_class` on decision and error class;
- `by_error_class`: {class: the same figures for "is this class" yes/no, with `support`
  (ratings of that class)}; `unclassified` wrong ratings are left out and counted in
  `unclassified_left_out`;
- `confusion`: for every pair, the labeller × labeller table of decisions.

A figure resting on fewer than LOW_SUPPORT ratings (items, for a pair) is marked `low_support`.

Every figure rests on labels given blind (`labelling.blind`): `blind_labels` is how many
ratings were counted, `not_blind_excluded` how many current labels were left out because
their labeller had been shown the others first. `disagreement_rows`, which is for
adjudication, lists every current label, blind or not.
"""

import itertools
import math
from collections import Counter

from labelling import agreement
from labelling.error_classes import error_classes_split
from labelling.models import UNCLASSIFIED, Adjudication, GoldSet, GoldSetVersion, Query
from labelling.selectors import disagreement_list, rating_table_get

LOW_SUPPORT = 20
DECISIONS = ["correct", "wrong", "unsure"]


def _classes(category: str) -> list[str]:
    """The classes a rating category names ("wrong:a;b" → [a, b]; `unclassified` is none)."""
    if not category.startswith("wrong:"):
        return []
    return [name for name in error_classes_split(category.split(":", 1)[1]) if name != UNCLASSIFIED]


def _decision(category: str) -> str:
    return category.split(":", 1)[0]


def _number(value) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else round(float(value), 6)


def _fleiss(per_item: list[list], categories: list) -> tuple[float | None, int, int]:
    """Return Fleiss' kappa over the items with the most common number of raters, the items and the raters."""
    if not per_item:
        return None, 0, 0
    raters = Counter(len(r) for r in per_item).most_common(1)[0][0]
    even = [r for r in per_item if len(r) == raters]
    return _number(agreement.fleiss_kappa(agreement.count_table(even, categories))), len(even), raters


def _alpha(per_item: list[list], categories: list) -> float | None:
    return _number(agreement.krippendorff_alpha_nominal(agreement.count_table(per_item, categories)))


def agreement_report(*, gold_set: GoldSet, version: GoldSetVersion | None = None) -> dict:
    """Compute every agreement figure of a gold set (or of one version's items) as a dict."""
    table = rating_table_get(gold_set=gold_set, version=version)
    per_item = [list(r.values()) for r in table.ratings.values()]
    decisions = [[_decision(c) for c in ratings] for ratings in per_item]
    categories = sorted({c for ratings in per_item for c in ratings})
    decision_categories = [d for d in DECISIONS if any(d in r for r in decisions)]
    ratings = sum(len(r) for r in per_item)
    fleiss, fleiss_items, fleiss_raters = _fleiss(decisions, decision_categories)
    fleiss_with_class, _, _ = _fleiss(per_item, categories)
    report = {
        "gold_set": gold_set.name,
        "version": version.number if version else None,
        "items": len(per_item),
        "ratings": ratings,
        "blind_only": True,
        "blind_labels": ratings,
        "not_blind_excluded": table.not_blind,
        "raters": table.raters,
        "low_support_below": LOW_SUPPORT,
        "krippendorff_alpha": _alpha(decisions, decision_categories) if per_item else None,
        "krippendorff_alpha_with_class": _alpha(per_item, categories) if per_item else None,
        "fleiss_kappa": fleiss,
        "fleiss_kappa_with_class": fleiss_with_class,
        "fleiss_items": fleiss_items,
        "fleiss_raters": fleiss_raters,
        "low_support": ratings < LOW_SUPPORT,
        "pairs": [],
        "confusion": [],
        "by_error_class": {},
        "unclassified_left_out": sum(r.count(f"wrong:{UNCLASSIFIED}") for r in per_item),
        "disagreements": len(disagreement_list(table=table)),
    }
    for a, b in itertools.combinations(table.raters, 2):
        both = [(r[a], r[b]) for r in table.ratings.values() if a in r and b in r]
        if not both:
            continue
        ra, rb = [x for x, _ in both], [y for _, y in both]
        da, db = [_decision(x) for x in ra], [_decision(y) for y in rb]
        report["pairs"].append(
            {
                "a": a,
                "b": b,
                "n": len(both),
                "cohen_kappa": _number(agreement.cohen_kappa(da, db)),
                "cohen_kappa_with_class": _number(agreement.cohen_kappa(ra, rb)),
                "low_support": len(both) < LOW_SUPPORT,
            }
        )
        pair_categories = [d for d in DECISIONS if d in da or d in db]
        counts = Counter(zip(da, db, strict=True))
        report["confusion"].append(
            {
                "a": a,
                "b": b,
                "labels": pair_categories,
                "matrix": [[counts[(x, y)] for y in pair_categories] for x in pair_categories],
            }
        )
    # Per class of the gold set's labels (its taxonomy's, several per label allowed): "does the
    # rating name this class", so a label with two classes agrees on each of them.
    for value in sorted({name for r in per_item for c in r for name in _classes(c)}):
        support = sum(value in _classes(c) for r in per_item for c in r)
        binary = [[value in _classes(c) for c in ratings] for ratings in per_item]
        class_fleiss, _, _ = _fleiss(binary, [False, True])
        pairs = []
        for a, b in itertools.combinations(table.raters, 2):
            both = [
                (value in _classes(r[a]), value in _classes(r[b])) for r in table.ratings.values() if a in r and b in r
            ]
            if both:
                kappa = agreement.cohen_kappa([x for x, _ in both], [y for _, y in both], [False, True])
                pairs.append({"a": a, "b": b, "n": len(both), "cohen_kappa": _number(kappa)})
        report["by_error_class"][value] = {
            "support": support,
            "krippendorff_alpha": _alpha(binary, [False, True]),
            "fleiss_kappa": class_fleiss,
            "pairs": pairs,
            "low_support": support < LOW_SUPPORT,
        }
    return report


def agreement_rows(report: dict) -> tuple[list[str], list[list]]:
    """Flatten a report into one row per figure (for CSV): figure, a, b, error class, n, value."""
    header = ["figure", "a", "b", "error_class", "n", "value"]
    rows = [
        ["blind_labels", "", "", "", report["blind_labels"], report["blind_labels"]],
        ["not_blind_excluded", "", "", "", report["not_blind_excluded"], report["not_blind_excluded"]],
        ["krippendorff_alpha", "", "", "", report["ratings"], report["krippendorff_alpha"]],
        ["krippendorff_alpha_with_class", "", "", "", report["ratings"], report["krippendorff_alpha_with_class"]],
        ["fleiss_kappa", "", "", "", report["fleiss_items"] * report["fleiss_raters"], report["fleiss_kappa"]],
        [
            "fleiss_kappa_with_class",
            "",
            "",
            "",
            report["fleiss_items"] * report["fleiss_raters"],
            report["fleiss_kappa_with_class"],
        ],
    ]
    for pair in report["pairs"]:
        rows.append(["cohen_kappa", pair["a"], pair["b"], "", pair["n"], pair["cohen_kappa"]])
        rows.append(["cohen_kappa_with_class", pair["a"], pair["b"], "", pair["n"], pair["cohen_kappa_with_class"]])
    for klass, entry in report["by_error_class"].items():
        rows.append(["krippendorff_alpha", "", "", klass, entry["support"], entry["krippendorff_alpha"]])
        rows.append(["fleiss_kappa", "", "", klass, entry["support"], entry["fleiss_kappa"]])
        for pair in entry["pairs"]:
            rows.append(["cohen_kappa", pair["a"], pair["b"], klass, pair["n"], pair["cohen_kappa"]])
    for confusion in report["confusion"]:
        for x, row in zip(confusion["labels"], confusion["matrix"], strict=True):
            for y, count in zip(confusion["labels"], row, strict=True):
                rows.append([f"confusion:{x}/{y}", confusion["a"], confusion["b"], "", count, count])
    return header, rows


def disagreement_rows(*, gold_set: GoldSet, version: GoldSetVersion | None = None) -> list[dict]:
    """Return the items whose labellers disagree (every current label, blind or not), with their latest adjudication."""
    table = rating_table_get(gold_set=gold_set, version=version, blind_only=False)
    ids = disagreement_list(table=table)
    queries = Query.objects.in_bulk(ids)
    latest: dict[int, Adjudication] = {}
    for adjudication in Adjudication.objects.filter(query_id__in=ids).select_related("adjudicator"):
        latest.setdefault(adjudication.query_id, adjudication)  # ordered newest first
    return [
        {"query": queries[q], "ratings": sorted(table.ratings[q].items()), "adjudication": latest.get(q)}
        for q in ids
        if q in queries
    ]
