"""Reads of the labeller's queue: the next item, what waits for them, history, disagreements, the SQL's columns."""

from django.db.models import Q
from sqlglot import exp

from config.roles import MANAGE_GOLDSETS, users_holding
from labelling.models import Adjudication, GoldSet, Label, Query, QuerySource
from labelling.queue_orders import queue_order_first, queue_order_get
from probes.guard import parse_sql
from probes.models import Catalogue


def queue_item_get_next(
    *, user, gold_set: GoldSet | None, after_id: int | None = None, order: str | None = None
) -> Query | None:
    """Return the next query this user should label, or None when there is nothing left.

    Audit samples come first (they are live traffic waiting for ground truth), then the
    gold set's items wanting a first label or, for the overlap share, a second one. Never
    an item the user has labelled before, even if that label was later superseded.
    With `after_id` (skipping an item), prefer items after it and wrap around. `order`
    names a registered queue order (`labelling.queue_orders`), e.g. "informative".
    """
    ranked = queue_order_get(name=order)
    for candidates in _waiting(gold_set=gold_set):
        if ranked is not None:
            found = queue_order_first(
                order=ranked, user=user, candidates=candidates, gold_set=gold_set, after_id=after_id
            )
            if found is not None:
                return found
            continue
        if after_id is not None:
            found = _first_not_labelled_by(user, candidates.filter(id__gt=after_id))
            if found is not None:
                return found
        found = _first_not_labelled_by(user, candidates)
        if found is not None:
            return found
    return None


def _waiting(*, gold_set: GoldSet | None):
    """Yield the querysets of queries still wanting labels: audit samples, then the gold set's."""
    yield Query.objects.filter(label_count=0, source=QuerySource.AUDIT)
    if gold_set is not None:
        yield Query.objects.filter(gold_set=gold_set).filter(
            Q(label_count=0) | Q(label_count=1, wants_second_label=True)
        )


def _first_not_labelled_by(user, candidates, chunk: int = 64) -> Query | None:
    """Walk candidates in id order, a chunk at a time, to the first one the user never labelled.

    Two small indexed reads per chunk (candidate ids from the partial queue index, then
    the user's labels among them) instead of one anti-join: PostgreSQL otherwise tends to
    merge-join against every label of the gold set, ~150 ms at 200,000 labels.
    """
    last_id = 0
    while True:
        ids = list(candidates.filter(id__gt=last_id).order_by("id").values_list("id", flat=True)[:chunk])
        if not ids:
            return None
        mine = set(Label.objects.filter(labeller=user, query_id__in=ids).order_by().values_list("query_id", flat=True))
        for query_id in ids:
            if query_id not in mine:
                return Query.objects.select_related("warehouse").get(pk=query_id)
        last_id, chunk = ids[-1], min(chunk * 4, 4096)


def _my_current_labels(*, user, gold_set: GoldSet | None):
    scope = Q(query__source=QuerySource.AUDIT)
    if gold_set is not None:
        scope |= Q(query__gold_set=gold_set)
    return Label.objects.filter(scope, labeller=user, is_current=True)


def queue_label_get_current(*, user, query: Query) -> Label | None:
    return Label.objects.filter(query=query, labeller=user, is_current=True).first()


def queue_item_get_previous(*, user, gold_set: GoldSet | None, query: Query | None) -> Query | None:
    """Return the item the user labelled just before `query` (or their latest, if `query` is new)."""
    labels = _my_current_labels(user=user, gold_set=gold_set)
    mine = queue_label_get_current(user=user, query=query) if query else None
    if mine is not None:
        labels = labels.filter(Q(created_at__lt=mine.created_at) | Q(created_at=mine.created_at, id__lt=mine.id))
    label = labels.exclude(query=query).order_by("-created_at", "-id").select_related("query").first()
    return label.query if label else None


def queue_item_get_following(*, user, gold_set: GoldSet | None, query: Query, order: str | None = None) -> Query | None:
    """Return the item after `query` in the user's history, else the next unlabelled one."""
    mine = queue_label_get_current(user=user, query=query)
    if mine is not None:
        later = (
            _my_current_labels(user=user, gold_set=gold_set)
            .filter(Q(created_at__gt=mine.created_at) | Q(created_at=mine.created_at, id__gt=mine.id))
            .exclude(query=query)
            .order_by("created_at", "id")
            .select_related("query")
            .first()
        )
        if later is not None:
            return later.query
        return queue_item_get_next(user=user, gold_set=gold_set, order=order)
    return queue_item_get_next(user=user, gold_set=gold_set, after_id=query.pk, order=order)


def queue_label_get_last(*, user, gold_set: GoldSet | None) -> Label | None:
    """Return the user's most recent current manual label in this queue (what undo retracts)."""
    return (
        _my_current_labels(user=user, gold_set=gold_set)
        .filter(source="manual")
        .order_by("-created_at", "-id")
        .select_related("query")
        .first()
    )


# The queue's counts stop here and the page says "1000+": counting every item and label of
# a 100,000-item set on each "next item" made the page grow with the set (issue 33).
COUNT_CAP = 1000


def _count_capped(queryset) -> int:
    """Count the rows, but no further than COUNT_CAP + 1 (shown as "1000+" by the `capped` filter)."""
    return queryset.order_by()[: COUNT_CAP + 1].count()


def queue_waiting_for(*, user, gold_set: GoldSet | None) -> dict:
    """Count the items this user's queue will still give them: audit samples, and the gold set's.

    The queue's own definition (`queue_item_get_next`): the items still wanting a label
    (`_waiting`) that this user never labelled. So it reaches 0 exactly when the queue says
    "Nothing left for you"; an item waiting only for *another* labeller's second label is not
    counted. Each count stops past COUNT_CAP. `for_others` (the set's items still waiting, but
    for someone else's second label) is counted only when nothing waits for the user, the only
    time the queue shows it.
    """
    audit_waiting, *set_waiting = _waiting(gold_set=gold_set)
    audit = _count_labelled_by(user, audit_waiting, labelled=False)
    in_set = _count_labelled_by(user, set_waiting[0], labelled=False) if set_waiting else 0
    total = min(audit + in_set, COUNT_CAP + 1)
    for_others = _count_labelled_by(user, set_waiting[0], labelled=True) if set_waiting and not total else 0
    return {"audit": audit, "gold_set": in_set, "total": total, "for_others": for_others}


def _count_labelled_by(user, candidates, *, labelled: bool) -> int:
    """Count the candidates the user has labelled (or never labelled), stopping past COUNT_CAP.

    Walked as `_first_not_labelled_by` walks: candidate ids a chunk at a time from the partial
    queue index, then the user's labels among them. One anti-join instead was merged against
    every label of the table, ~20 ms at 200,000 labels.
    """
    found, last_id = 0, 0
    while found <= COUNT_CAP:
        ids = list(candidates.filter(id__gt=last_id).order_by("id").values_list("id", flat=True)[: COUNT_CAP + 1])
        mine = set(Label.objects.filter(labeller=user, query_id__in=ids).order_by().values_list("query_id", flat=True))
        found += len(mine) if labelled else len(ids) - len(mine)
        if len(ids) <= COUNT_CAP:
            break
        last_id = ids[-1]
    return min(found, COUNT_CAP + 1)


def queue_progress_get(*, user, gold_set: GoldSet) -> dict:
    """Say where this user stands in a gold set's queue: what still needs their label, of how many (each capped)."""
    total = _count_capped(Query.objects.filter(gold_set=gold_set))
    mine = _count_capped(Label.objects.filter(query__gold_set=gold_set, labeller=user, is_current=True))
    return {"total": total, "mine": mine, "for_you": queue_waiting_for(user=user, gold_set=gold_set)}


def disagreement_get(*, query: Query, mine: Label | None, others: list[Label] | None) -> dict | None:
    """Say whether the labeller's label disagrees with the others they see, and who settles it.

    None when there is nothing to settle. Else the other labellers who differ, the latest
    adjudication if there is one, and the users who may adjudicate (for "awaiting an adjudicator").
    """
    if mine is None or not others:
        return None
    differing = [label for label in others if (label.decision, label.error_class) != (mine.decision, mine.error_class)]
    if not differing:
        return None
    adjudication = (
        Adjudication.objects.filter(query=query).select_related("adjudicator").order_by("-created_at", "-id").first()
    )
    return {
        "with": [label.labeller.username if label.labeller else "(import)" for label in differing],
        "adjudication": adjudication,
        "adjudicators": users_holding(MANAGE_GOLDSETS),
    }


# --- What the SQL touches ---------------------------------------------------------------


def sql_tables_list(*, sql: str, dialect: str = "sqlite") -> list[str]:
    """Return the base tables a SQL text reads (CTE names excluded), in order of appearance.

    The tree is the guard's shared parse, which bounds size and nesting: a text nested too
    deeply for the parser (a RecursionError) or too large reads as no tables, and
    `sql_unreadable_reason` says why.
    """
    tree = parse_sql(sql, dialect).tree
    if tree is None:
        return []
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    names: list[str] = []
    for table in tree.find_all(exp.Table):
        name = table.name
        if name and name.lower() not in ctes and name not in names:
            names.append(name)
    return names


def sql_unreadable_reason(*, sql: str, dialect: str = "sqlite") -> str:
    """Return why the SQL cannot be read as one statement (nested too deeply, too large, not SQL), or ""."""
    parsed = parse_sql(sql, dialect)
    if parsed.tree is not None:
        return ""
    return parsed.syntax_error or parsed.verdict.reason or "not one SQL statement"


def query_columns_get(*, query: Query) -> dict[str, list[dict]] | None:
    """Return {table: [{name, type, nullable}]} for the tables the query touches.

    None when the query has no warehouse or the warehouse has no catalogue yet. A
    table the catalogue does not know maps to [] (itself a hint: unknown object).
    """
    if query.warehouse_id is None:
        return None
    catalogue = Catalogue.objects.filter(warehouse_id=query.warehouse_id).order_by("-version").first()
    if catalogue is None:
        return None
    known = {name.lower(): spec for name, spec in (catalogue.snapshot or {}).get("tables", {}).items()}
    return {
        name: list((known.get(name.lower()) or {}).get("columns", []))
        for name in sql_tables_list(sql=query.sql, dialect=query.dialect)
    }
