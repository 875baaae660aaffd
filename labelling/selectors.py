"""Reads of the labelling app: final labels, agreement data, version diffs, browsing a version."""

import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db.models import Exists, Max, Min, OuterRef, Q

from config.keyset import keyset_chunks
from labelling.filters import VersionItemFilter
from labelling.models import (
    UNCLASSIFIED,
    Adjudication,
    GoldSet,
    GoldSetVersion,
    GoldSetVersionItem,
    Label,
    LabelDecision,
    Query,
    ResolutionPolicy,
)

IMPORT_RATER = "(import)"


# --- Final labels ------------------------------------------------------------------------


@dataclass(frozen=True)
class FinalLabel:
    """The final label of one query, or why it has none (decision None)."""

    query_id: int
    decision: str | None
    error_class: str = ""
    how: str = "single"  # adjudication | agreement | single | majority | unresolved | tie | unsure | adjudicated
    disagreeing: int = 0

    @property
    def left_out_reason(self) -> str:
        return LEFT_OUT_REASONS.get(self.how, self.how)


LEFT_OUT_REASONS = {
    "unresolved": "unresolved disagreement",
    "tie": "unresolved tie",
    "unsure": "all labels unsure",
    "adjudicated": "disagreement (adjudicated, but the policy takes unanimous items only)",
}


def _resolve(query_id: int, ratings: list[tuple[str, str]]) -> FinalLabel:
    decisive = {(d, e) for d, e in ratings if d != LabelDecision.UNSURE}
    if len(decisive) == 1:
        decision, error_class = decisive.pop()
        how = "single" if len(ratings) == 1 else "agreement"
        return FinalLabel(query_id, decision, error_class, how)
    if not decisive:
        return FinalLabel(query_id, None, "", "unsure", disagreeing=1)
    return FinalLabel(query_id, None, "", "unresolved", disagreeing=1)


def _resolve_by_majority(query_id: int, ratings: list[tuple[str, str]]) -> FinalLabel:
    """Take the decision more than half of the item's labellers gave (unsure votes count against).

    The error class of a majority "wrong" is the class more than half of its wrong votes
    gave, else `unclassified`. No strict majority (a tie, or too many unsure) leaves the
    item out.
    """
    unanimous = _resolve(query_id, ratings)
    if unanimous.decision is not None or unanimous.how == "unsure":
        return unanimous
    decisions = Counter(d for d, _ in ratings)
    decision, votes = decisions.most_common(1)[0]
    if decision == LabelDecision.UNSURE or votes * 2 <= len(ratings):
        return FinalLabel(query_id, None, "", "tie", disagreeing=1)
    error_class = ""
    if decision == LabelDecision.WRONG:
        classes = Counter(e for d, e in ratings if d == LabelDecision.WRONG)
        top, top_votes = classes.most_common(1)[0]
        error_class = top if top_votes * 2 > votes else UNCLASSIFIED
    return FinalLabel(query_id, decision, error_class, "majority")


def final_label_list(*, gold_set: GoldSet, policy: str = ResolutionPolicy.MANUAL) -> Iterator[FinalLabel]:
    """Yield the final label of every labelled or adjudicated query in the gold set under `policy`.

    manual: the latest adjudication, else the label every decisive labeller agrees on.
    majority: the adjudication, else a strict majority of labellers. unanimous-only:
    items whose labellers all agree; adjudications are not used.
    """
    adjudicated: dict[int, tuple[str, str]] = {}
    if policy != ResolutionPolicy.UNANIMOUS_ONLY:
        for query_id, decision, error_class in (
            Adjudication.objects.filter(query__gold_set=gold_set)
            .order_by("query_id", "-created_at", "-id")
            .values_list("query_id", "decision", "error_class")
        ):
            adjudicated.setdefault(query_id, (decision, error_class))
    resolve = _resolve_by_majority if policy == ResolutionPolicy.MAJORITY else _resolve
    rows = (
        Label.objects.filter(query__gold_set=gold_set, is_current=True)
        .order_by("query_id")
        .values_list("query_id", "decision", "error_class")
        .iterator(chunk_size=5000)
    )
    for query_id, group in itertools.groupby(rows, key=lambda row: row[0]):
        if query_id in adjudicated:
            decision, error_class = adjudicated.pop(query_id)
            yield FinalLabel(query_id, decision, error_class, "adjudication")
            continue
        yield resolve(query_id, [(d, e) for _, d, e in group])
    for query_id, (decision, error_class) in adjudicated.items():
        yield FinalLabel(query_id, decision, error_class, "adjudication")


# --- Agreement --------------------------------------------------------------------------


def _rating_category(decision: str, error_class: str) -> str:
    return f"wrong:{error_class}" if decision == LabelDecision.WRONG else decision


@dataclass
class RatingTable:
    """Current ratings of a gold set: {query_id: {rater: category}} for items with 2+ raters."""

    ratings: dict[int, dict[str, str]] = field(default_factory=dict)
    raters: list[str] = field(default_factory=list)
    # Current labels of multiply-labelled items left out because they were not given blind.
    not_blind: int = 0


def rating_table_get(
    *, gold_set: GoldSet, version: GoldSetVersion | None = None, blind_only: bool = True
) -> RatingTable:
    """Load every multiply-rated item's current labels; an import without labeller is one rater.

    With `version`, only the items of that version and the items it left out count. Agreement
    rests on labels given blind (`labelling.blind`): by default a label given after its
    labeller was shown the others is left out and counted in `not_blind`.
    """
    labels = Label.objects.filter(query__gold_set=gold_set, is_current=True, query__label_count__gte=2)
    if version is not None:
        # A subquery, not a list of ids: a version of 70,000 items would pass PostgreSQL's 65,535 parameters.
        items = GoldSetVersionItem.objects.filter(version=version).values("query_id")
        left_out = [entry["id"] for entry in version.left_out or []]
        labels = labels.filter(Q(query_id__in=items) | Q(query__external_id__in=left_out))
    by_query: dict[int, dict[str, str]] = {}
    not_blind = 0
    rows = labels.values_list("query_id", "labeller__username", "decision", "error_class", "blind")
    for query_id, username, decision, error_class, blind in rows.iterator(chunk_size=5000):
        if blind_only and not blind:
            not_blind += 1
            continue
        by_query.setdefault(query_id, {})[username or IMPORT_RATER] = _rating_category(decision, error_class)
    ratings = {q: r for q, r in by_query.items() if len(r) >= 2}
    raters = sorted({rater for r in ratings.values() for rater in r})
    return RatingTable(ratings=ratings, raters=raters, not_blind=not_blind)


def disagreement_list(*, table: RatingTable) -> list[int]:
    return sorted(q for q, r in table.ratings.items() if len(set(r.values())) > 1)


# --- Versions ----------------------------------------------------------------------------


@dataclass
class VersionDiff:
    added: list[dict]
    removed: list[dict]
    changed: list[dict]
    unchanged: int


def version_diff(*, old: GoldSetVersion, new: GoldSetVersion) -> VersionDiff:
    """Compare two versions item by item (by query): what was added, removed or relabelled."""

    def load(version):
        return {
            row["query_id"]: row
            for row in GoldSetVersionItem.objects.filter(version=version).values(
                "query_id", "query__external_id", "query__question", "decision", "error_class"
            )
        }

    before, after = load(old), load(new)
    added = [after[q] for q in sorted(after.keys() - before.keys())]
    removed = [before[q] for q in sorted(before.keys() - after.keys())]
    changed, unchanged = [], 0
    for q in sorted(before.keys() & after.keys()):
        a, b = before[q], after[q]
        if (a["decision"], a["error_class"]) == (b["decision"], b["error_class"]):
            unchanged += 1
        else:
            changed.append({**b, "old_decision": a["decision"], "old_error_class": a["error_class"]})
    return VersionDiff(added=added, removed=removed, changed=changed, unchanged=unchanged)


# --- Browsing a version ------------------------------------------------------------------


def version_item_filter(*, version: GoldSetVersion, params, labellers=(), sees_all: bool = True) -> VersionItemFilter:
    """The version page's filters read from request parameters, over the version's items (`labelling/filters.py`)."""
    items = GoldSetVersionItem.objects.filter(version=version).select_related("query")
    return VersionItemFilter(params or None, queryset=items, labellers=labellers, sees_all=sees_all)


def version_item_list(*, filters: VersionItemFilter):
    """Return the version's items the filters keep, with their query, in item order."""
    # The queries fetched by id for the items read (a page, a chunk), not joined: the join
    # merged along every query of the table to reach this version's first (issue 33).
    return filters.qs.select_related(None).prefetch_related("query").order_by("query_id")


def version_metadata_keys(*, version: GoldSetVersion, sample: int = 2000) -> list[str]:
    """Return the metadata keys of a version's items (read from its first `sample` items)."""
    keys: set[str] = set()
    # The sample's first and last query first, then a join within them on both sides: joined
    # unbounded, the planner merged along every query of the table to reach this version's first.
    ids = GoldSetVersionItem.objects.filter(version=version).order_by("query_id").values_list("query_id", flat=True)
    sampled = list(ids[:sample])
    if not sampled:
        return []
    low, high = sampled[0], sampled[-1]
    rows = Query.objects.filter(
        id__gte=low, id__lte=high, version_items__version=version, version_items__query__gte=low,
        version_items__query__lte=high,
    ).order_by()  # fmt: skip
    for metadata in rows.values_list("metadata", flat=True):
        if isinstance(metadata, dict):
            keys.update(key for key in metadata if key != "mutation")
    return sorted(keys)


def item_details_get(*, query_ids: list[int]) -> dict[int, dict]:
    """Return {query id: {"labels": [...], "adjudications": [...]}}: every label, history included."""
    details = {query_id: {"labels": [], "adjudications": []} for query_id in query_ids}
    for label in (
        Label.objects.filter(query_id__in=query_ids).select_related("labeller").order_by("query_id", "created_at", "id")
    ):
        details[label.query_id]["labels"].append(label)
    for adjudication in (
        Adjudication.objects.filter(query_id__in=query_ids)
        .select_related("adjudicator")
        .order_by("query_id", "created_at", "id")
    ):
        details[adjudication.query_id]["adjudications"].append(adjudication)
    return details


def own_labels_get(*, user, query_ids: list[int]) -> dict[int, Label]:
    """Return {query id: the user's current label} among the items."""
    labels = Label.objects.filter(labeller=user, is_current=True, query_id__in=query_ids)
    return {label.query_id: label for label in labels}


def version_item_record_list(*, filters: VersionItemFilter, chunk: int = 1000) -> Iterator[dict]:
    """Yield the filtered items with every label and adjudication, as plain dicts (for export)."""
    items = version_item_list(filters=filters)
    # Keyset pages by query id (config/keyset.py), not OFFSET: each page starts where the last ended.
    for page in keyset_chunks(items, ("query_id",), chunk=chunk):
        details = item_details_get(query_ids=[item.query_id for item in page])
        for item in page:
            detail = details[item.query_id]
            yield {
                "id": item.query.external_id,
                "question": item.query.question,
                "sql": item.query.sql,
                "label": item.decision,
                "error_class": item.error_class or None,
                "labels": [
                    {
                        "labeller": label.labeller.username if label.labeller else IMPORT_RATER,
                        "label": label.decision,
                        "error_class": label.error_class or None,
                        "source": label.source,
                        "current": label.is_current,
                        "at": label.created_at.isoformat(),
                    }
                    for label in detail["labels"]
                ],
                "adjudications": [
                    {
                        "adjudicator": adjudication.adjudicator.username,
                        "label": adjudication.decision,
                        "error_class": adjudication.error_class or None,
                        "reason": adjudication.reason,
                        "at": adjudication.created_at.isoformat(),
                    }
                    for adjudication in detail["adjudications"]
                ],
            }


def version_labeller_names(*, version) -> list[str]:
    """Who holds a current label on an item of the version (the browse page's labeller choice)."""
    # A first-label lookup per labeller (the label index by labeller answers each at once),
    # not one join over every label of the version: the planner hashed all the version's
    # items for that, a cost that grew with them (issue 33, bench_growth's version page).
    bounds = GoldSetVersionItem.objects.filter(version=version).aggregate(low=Min("query_id"), high=Max("query_id"))
    if bounds["low"] is None:
        return []
    # Both sides bounded by the version's first and last query, and walked in query order: else
    # the lookup scanned the labeller's labels, or the items, of every other gold set first.
    within = {"query__gte": bounds["low"], "query__lte": bounds["high"]}
    in_version = GoldSetVersionItem.objects.filter(version=version, query=OuterRef("query_id"), **within)
    holds = Label.objects.filter(Exists(in_version), is_current=True, **within).order_by("query_id")
    labellers = get_user_model().objects.filter(Exists(Label.objects.filter(labeller=OuterRef("pk"))))
    return [
        username
        for pk, username in labellers.order_by("username").values_list("pk", "username")
        if holds.filter(labeller_id=pk).values_list("query_id", flat=True).first() is not None
    ]
