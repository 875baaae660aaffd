"""Writes of the labelling app: queries, labels, adjudications, gold sets and versions.

Every function here is keyword-only. Import and export of gold sets live in
`labelling.goldset_io` (`goldset_import`, `goldset_export`), which builds on these.
"""

import hashlib

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Max

from labelling.blind import label_given_blind
from labelling.bulk import insert_rows
from labelling.error_classes import UNCLASSIFIED, error_classes_join, error_classes_parse
from labelling.models import (
    Adjudication,
    GoldSet,
    GoldSetVersion,
    GoldSetVersionItem,
    Label,
    LabelDecision,
    LabelSource,
    Query,
    QueryOrigin,
    QuerySource,
    ResolutionPolicy,
)
from labelling.selectors import final_label_list
from labelling.taxonomy import goldset_taxonomy, taxonomy_current_version, taxonomy_index
from probes.fingerprint import sql_fingerprint

ITEM_BATCH_SIZE = 2000


def overlap_key_draw(*, external_id: str) -> float:
    """Return a stable draw in [0, 1) for an item: the same item is always (not) overlapped."""
    digest = hashlib.sha256(external_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def decision_validate(*, decision: str, error_class, gold_set: GoldSet | None = None, allow_unsure: bool = True) -> str:
    """Return the canonical classes text of a valid label; raise ValidationError naming what is wrong.

    `error_class` is one class, "a;b" or a list. The rule (a wrong label needs a class, others
    carry none) is the models' (`labelling.error_classes`); each class must be an active class
    of the gold set's taxonomy, or another name of one, or `unclassified`.
    """
    allowed = set(LabelDecision.values) if allow_unsure else {LabelDecision.CORRECT, LabelDecision.WRONG}
    if decision not in allowed:
        raise ValidationError({"decision": f"'{decision}' is not one of {', '.join(sorted(allowed))}."})
    try:
        classes = error_classes_parse(error_class)
    except ValueError as exc:
        raise ValidationError({"error_class": str(exc)}) from None
    Label(decision=decision, error_class=error_classes_join(classes)).clean()  # the label rule
    if not classes:
        return ""
    index = taxonomy_index(goldset_taxonomy(gold_set))
    resolved = []
    for name in classes:
        found = UNCLASSIFIED if name == UNCLASSIFIED else index.resolve(name)
        if found is None or (found != UNCLASSIFIED and found not in index.active):
            allowed_names = ", ".join(index.active)
            raise ValidationError(
                {"error_class": f"'{name}' is not a class of taxonomy '{index.name}' (allowed: {allowed_names})."}
            )
        resolved.append(found)
    return error_classes_join(resolved)


def goldset_get_or_create(*, name: str, overlap_share: float | None = None) -> GoldSet:
    """Return the gold set called `name`, creating it if needed."""
    defaults = {} if overlap_share is None else {"overlap_share": overlap_share}
    gold_set, _ = GoldSet.objects.get_or_create(name=name, defaults=defaults)
    return gold_set


@transaction.atomic
def goldset_set_overlap(*, gold_set: GoldSet, overlap_share: float) -> GoldSet:
    """Change the overlap share and re-draw which items want a second labeller."""
    gold_set.overlap_share = overlap_share
    gold_set.full_clean()
    gold_set.save(update_fields=["overlap_share"])
    queries = Query.objects.filter(gold_set=gold_set)
    queries.filter(overlap_key__lt=overlap_share).update(wants_second_label=True)
    queries.filter(overlap_key__gte=overlap_share).update(wants_second_label=False)
    return gold_set


def query_create(
    *,
    question: str,
    sql: str,
    external_id: str,
    dialect: str | None = None,
    warehouse=None,
    source: str = QuerySource.GOLD,
    gold_set: GoldSet | None = None,
    reference_sql: str = "",
    metadata: dict | None = None,
    origin: str = QueryOrigin.ORGANIC,
) -> Query:
    """Create a query with its normalised fingerprint and its overlap draw."""
    query = _query_unsaved(
        question=question,
        sql=sql,
        external_id=external_id,
        source=source,
        dialect=dialect,
        warehouse=warehouse,
        gold_set=gold_set,
        reference_sql=reference_sql,
        metadata=metadata,
        origin=origin,
    )
    query.full_clean(exclude=["warehouse", "gold_set"], validate_unique=False, validate_constraints=False)
    query.save()
    return query


@transaction.atomic
def label_create(
    *,
    query: Query,
    labeller,
    decision: str,
    error_class="",
    note: str = "",
    source: str = LabelSource.MANUAL,
) -> Label:
    """Record a label; it supersedes the labeller's current one, which stays as history.

    `error_class` is one class, "a;b" or a list, of the gold set's taxonomy.

    The label is blind unless Docket showed the labeller someone else's label of the query
    before (`labelling.blind`); agreement counts blind labels only.
    """
    error_class = decision_validate(decision=decision, error_class=error_class, gold_set=query.gold_set)
    previous = None
    if labeller is not None:
        previous = Label.objects.select_for_update().filter(query=query, labeller=labeller, is_current=True).first()
        if previous is not None:
            previous.is_current = False
            previous.save(update_fields=["is_current"])
    label = Label.objects.create(
        query=query,
        labeller=labeller,
        decision=decision,
        error_class=error_class,
        note=note,
        source=source,
        is_current=True,
        blind=label_given_blind(query=query, labeller=labeller),
    )
    if previous is None:
        Query.objects.filter(pk=query.pk).update(label_count=F("label_count") + 1)
    return label


@transaction.atomic
def label_undo(*, label: Label) -> Label | None:
    """Retract a current label; the labeller's previous label on that query becomes current again.

    The retracted label is kept as history (is_current=False). Return the label that is
    current afterwards, or None when the labeller had no earlier label there.
    """
    label = Label.objects.select_for_update().get(pk=label.pk)
    if not label.is_current:
        raise ValidationError("Only a current label can be undone.")
    label.is_current = False
    label.save(update_fields=["is_current"])
    earlier = (
        Label.objects.filter(query_id=label.query_id, labeller_id=label.labeller_id, created_at__lte=label.created_at)
        .exclude(pk=label.pk)
        .order_by("-created_at", "-id")
        .first()
    )
    if earlier is not None:
        earlier.is_current = True
        earlier.save(update_fields=["is_current"])
        return earlier
    Query.objects.filter(pk=label.query_id).update(label_count=F("label_count") - 1)
    return None


@transaction.atomic
def adjudication_create(*, query: Query, adjudicator, decision: str, error_class="", reason: str) -> Adjudication:
    """Resolve a query's final label, recording who decided and why (`error_class`: one, "a;b" or a list)."""
    error_class = decision_validate(
        decision=decision, error_class=error_class, gold_set=query.gold_set, allow_unsure=False
    )
    if not reason.strip():
        raise ValidationError({"reason": "Say why: an adjudication without a reason cannot be reviewed."})
    return Adjudication.objects.create(
        query=query, adjudicator=adjudicator, decision=decision, error_class=error_class, reason=reason.strip()
    )


@transaction.atomic
def goldset_publish(
    *, gold_set: GoldSet, user=None, note: str = "", resolve: str = ResolutionPolicy.MANUAL
) -> GoldSetVersion:
    """Freeze the gold set's final labels into a new immutable version under a resolution policy.

    `manual`: the latest adjudication, else the label every decisive current label agrees
    on (one label alone is final; `unsure` abstains). `majority`: the adjudication, else a
    strict majority of the item's labellers. `unanimous-only`: only items whose labellers
    agree. Items left out are listed on the version with the reason and counted in
    `unresolved_count`; the version records its policy and how many items each rule
    decided. Publishing never blocks on them.
    """
    if resolve not in ResolutionPolicy.values:
        raise ValidationError({"resolve": f"'{resolve}' is not one of {', '.join(ResolutionPolicy.values)}."})
    GoldSet.objects.select_for_update().filter(pk=gold_set.pk).first()
    last = GoldSetVersion.objects.filter(gold_set=gold_set).aggregate(n=Max("number"))["n"] or 0
    version = GoldSetVersion.objects.create(
        gold_set=gold_set,
        number=last + 1,
        published_by=user,
        note=note,
        taxonomy_version=taxonomy_current_version(goldset_taxonomy(gold_set)),
    )
    counts = {"adjudication": 0, "agreement": 0, "single": 0, "majority": 0, "left_out": 0}
    left_out: list[tuple[int, str]] = []
    batch: list[tuple] = []
    fields = ["version", "query", "decision", "error_class"]
    for final in final_label_list(gold_set=gold_set, policy=resolve):
        if final.decision is None:
            counts["left_out"] += 1
            left_out.append((final.query_id, final.left_out_reason))
            continue
        counts[final.how] = counts.get(final.how, 0) + 1
        batch.append((version.pk, final.query_id, final.decision, final.error_class))
        if len(batch) >= ITEM_BATCH_SIZE:
            insert_rows(GoldSetVersionItem, fields, batch)
            batch = []
    insert_rows(GoldSetVersionItem, fields, batch)
    external_ids = dict(
        Query.objects.filter(pk__in=[query_id for query_id, _ in left_out]).values_list("pk", "external_id")
    )
    listed = [{"id": external_ids[query_id], "reason": reason} for query_id, reason in left_out]
    GoldSetVersion.objects.filter(pk=version.pk, is_frozen=False).update(
        is_frozen=True, unresolved_count=len(left_out), resolution=resolve, resolution_counts=counts, left_out=listed
    )
    version.refresh_from_db()
    return version


def goldset_fitness_thresholds_set(
    *, gold_set: GoldSet, catch_lower: float, false_reject_upper: float, kappa_lower: float
) -> GoldSet:
    """Set the fitness thresholds its judges are held to (judges.fitness); ValidationError when out of range."""
    gold_set.fitness_gate_catch_lower = catch_lower
    gold_set.fitness_gate_false_reject_upper = false_reject_upper
    gold_set.fitness_monitor_kappa_lower = kappa_lower
    gold_set.full_clean()
    gold_set.save(
        update_fields=["fitness_gate_catch_lower", "fitness_gate_false_reject_upper", "fitness_monitor_kappa_lower"]
    )
    return gold_set


def query_fingerprint_fill(*, gold_set_id: int | None = None, limit: int = 500) -> int:
    """Fingerprint up to `limit` queries that have none yet; return how many were filled.

    Idempotent: it only touches rows whose fingerprint is still empty, and writing the
    same fingerprint twice is harmless.
    """
    queries = Query.objects.filter(fingerprint="")
    if gold_set_id is not None:
        queries = queries.filter(gold_set_id=gold_set_id)
    batch = list(queries.order_by("id").only("id", "sql", "dialect")[:limit])
    for query in batch:
        query.fingerprint = sql_fingerprint(query.sql, query.dialect)
    Query.objects.bulk_update(batch, ["fingerprint"])
    return len(batch)


def queries_create(*, queries: list[dict], source: str = QuerySource.GOLD, fingerprint: bool = True) -> list[Query]:
    """Create many queries with one INSERT, each as `query_create` would; return them with their ids.

    Each dict holds `query_create`'s arguments apart from `source` (question, sql,
    external_id, and optionally dialect, warehouse, gold_set, reference_sql, metadata).
    `fingerprint=False` leaves the fingerprint empty for a caller that fills it later, off
    its hot path: normalising SQL costs milliseconds a query, and triage's live ingestion
    leaves it to the pipeline's worker. Runs in the caller's transaction, if any.
    """
    built = [_query_unsaved(**fields, source=source, fingerprint=fingerprint) for fields in queries]
    for query in built:
        query.full_clean(exclude=["warehouse", "gold_set"], validate_unique=False, validate_constraints=False)
    return Query.objects.bulk_create(built)


def _query_unsaved(
    *,
    question: str,
    sql: str,
    external_id: str,
    source: str,
    dialect: str | None = None,
    warehouse=None,
    gold_set: GoldSet | None = None,
    reference_sql: str = "",
    metadata: dict | None = None,
    origin: str = QueryOrigin.ORGANIC,
    fingerprint: bool = True,
) -> Query:
    """An unsaved query with its overlap draw (and fingerprint unless told not to)."""
    dialect = dialect or (warehouse.dialect if warehouse else "sqlite")
    key = overlap_key_draw(external_id=external_id)
    return Query(
        question=question,
        sql=sql,
        dialect=dialect,
        warehouse=warehouse,
        source=source,
        gold_set=gold_set,
        external_id=external_id,
        fingerprint=sql_fingerprint(sql, dialect) if fingerprint else "",
        reference_sql=reference_sql or "",
        metadata=metadata or {},
        origin=origin,
        overlap_key=key,
        wants_second_label=bool(gold_set and key < gold_set.overlap_share),
    )
