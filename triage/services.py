"""Writes of the triage app: tokens, policy versions, ingestion, enqueueing, the queue.

Every function here is keyword-only and either atomic or deliberately outside a
transaction (publishing to the broker must happen after commit, never inside it).
"""

import functools
import hashlib
import itertools
import logging
import random
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DEFAULT_DB_ALIAS, IntegrityError, OperationalError, connection, connections, transaction
from django.db.models import F, Max, Q
from django.utils import timezone

from config.roles import ADMIN, has_role
from triage.models import (
    ApiToken,
    IngestStatus,
    LiveQuery,
    Resolution,
    ResolutionEvent,
    TriageItem,
    TriagePolicy,
    TriageStatus,
)
from triage.publishing import live_queries_publish_soon

logger = logging.getLogger(__name__)

TOKEN_SCOPES = ("ingest", "read")
# A post racing another for the same external ids retries this often (each retry finds
# more of them stored); a post PostgreSQL picks as a deadlock victim, this often.
INGEST_RACE_RETRIES = 3
INGEST_DEADLOCK_RETRIES = 5
TOKEN_PREFIX = "dkt"


# --- API tokens ---------------------------------------------------------------------------


def hash_token(plaintext: str) -> str:
    """Hash a token for storage; tokens are long random strings, so SHA-256 suffices."""
    return hashlib.sha256(plaintext.encode()).hexdigest()


@transaction.atomic
def api_token_issue(*, client: str, scopes: list[str], name: str = "", created_by=None) -> tuple[ApiToken, str]:
    """Create a token for a client and return it with its plaintext (shown only once)."""
    unknown = sorted(set(scopes) - set(TOKEN_SCOPES))
    if unknown or not scopes:
        raise ValidationError({"scopes": f"Scopes must be a non-empty subset of {list(TOKEN_SCOPES)}; got {scopes}."})
    prefix = secrets.token_hex(4)
    plaintext = f"{TOKEN_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}"
    token = ApiToken(
        client=client,
        name=name,
        prefix=prefix,
        token_hash=hash_token(plaintext),
        scopes=sorted(set(scopes)),
        created_by=created_by,
    )
    token.full_clean()
    token.save()
    return token, plaintext


def api_token_revoke(*, token: ApiToken) -> None:
    """Revoke a token: refused at once by this process, by every other within the cache time."""
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    cache.delete(_token_cache_key(token.token_hash))


def _token_cache_key(token_hash: str) -> str:
    return f"triage:api-token:{token_hash}"


def api_token_authenticate(*, plaintext: str) -> ApiToken | None:
    """Return the active token a plaintext names, or None; record its use.

    Each web process remembers a token for TRIAGE_API_TOKEN_CACHE_SECONDS, so the ingestion
    API does not read the token table on every one of hundreds of posts a second; the price
    is that a revocation reaches the other processes within that many seconds.
    """
    token_hash = hash_token(plaintext)
    key = _token_cache_key(token_hash)
    token = cache.get(key)
    if token is None:
        token = ApiToken.objects.filter(token_hash=token_hash).first()
        if token is None:
            return None
        cache.set(key, token, settings.TRIAGE_API_TOKEN_CACHE_SECONDS)
    if not token.is_active:
        return None
    if api_token_touch(token=token):
        cache.set(key, token, settings.TRIAGE_API_TOKEN_CACHE_SECONDS)
    return token


def api_token_touch(*, token: ApiToken) -> bool:
    """Record use at most once a minute, so authentication does not write on every request."""
    now = timezone.now()
    if token.last_used_at and token.last_used_at > now - timedelta(minutes=1):
        return False
    ApiToken.objects.filter(pk=token.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - timedelta(minutes=1))
    ).update(last_used_at=now)
    token.last_used_at = now
    return True


# --- Policy -----------------------------------------------------------------------------

POLICY_FIELDS = (
    "flag_rule",
    "k",
    "run_verifier",
    "flag_on_verifier_failure",
    "run_fanout_detector",
    "audit_share",
    "sla_minutes",
    "claim_timeout_minutes",
)


def current_policy() -> TriagePolicy | None:
    return TriagePolicy.objects.order_by("-version").first()


@transaction.atomic
def policy_publish(*, changes: dict, judge_versions=None, created_by=None, note: str = "") -> TriagePolicy:
    """Publish a new policy version: the current one with `changes` applied."""
    base = current_policy()
    values = {field: getattr(base, field) for field in POLICY_FIELDS} if base else {}
    values.update(changes)
    number = (TriagePolicy.objects.aggregate(m=Max("version"))["m"] or 0) + 1
    policy = TriagePolicy(version=number, created_by=created_by, note=note, **values)
    policy.full_clean()
    policy.save()
    if judge_versions is None and base is not None:
        judge_versions = list(base.judge_versions.all())
    policy.judge_versions.set(judge_versions or [])
    return policy


# --- Ingestion -------------------------------------------------------------------------


@dataclass(frozen=True)
class IngestedQuery:
    live: LiveQuery
    created: bool


def _new_rows(rows: list[dict], token: ApiToken | None, warehouses: dict) -> tuple[list, list[LiveQuery]]:
    """Unsaved queries and their live rows, the live ones marked as sent to the broker now."""
    from labelling.models import Query, QuerySource

    queries = [
        Query(
            question=row["question"],
            sql=row["sql"],
            dialect=row.get("dialect") or warehouses[row["warehouse"]].dialect,
            warehouse=warehouses[row["warehouse"]],
            source=QuerySource.LIVE,
            external_id=row["external_id"],
            metadata=row.get("metadata") or {},
        )
        for row in rows
    ]
    client = token.client if token else ""
    # enqueued_at records the publish attempt made right after commit; a failed publish
    # clears it, and the sweeper re-sends anything still pending after a while either way.
    now = timezone.now()
    lives = [
        LiveQuery(
            query=q, external_id=q.external_id, api_token=token, client=client, enqueued_at=now, enqueue_attempts=1
        )
        for q in queries
    ]
    return queries, lives


def _inserted_fields(model) -> list:
    """The fields an INSERT of `model` names: all but an auto-created primary key."""
    return [f for f in model._meta.concrete_fields if not (f.primary_key and f.auto_created)]


def _insert_values(obj, fields, db) -> list:
    """The values the ORM itself would insert for `obj` (defaults, auto_now_add, JSON adaptation)."""
    return [f.get_db_prep_save(f.pre_save(obj, add=True), db) for f in fields]


@functools.lru_cache(maxsize=64)
def _insert_statement(row_count: int) -> str:
    """One statement inserting `row_count` queries and a live row for each, returning their ids.

    Every live row of one request carries the same values apart from its query id and
    external id, which come from the rows the first INSERT returns. The live rows are
    inserted in external-id order (byte order, as Python sorts): two posts of the same ids
    then wait for each other on the unique index instead of deadlocking.
    """
    from labelling.models import Query

    quote = connection.ops.quote_name
    query_columns = [quote(f.column) for f in _inserted_fields(Query)]
    live_fields = _inserted_fields(LiveQuery)
    live_columns = [quote(f.column) for f in live_fields]
    per_row = {"query": "new_queries.id", "external_id": "new_queries.external_id"}
    live_selected = [per_row.get(f.name, "%s") for f in live_fields]
    placeholders = "(" + ", ".join(["%s"] * len(query_columns)) + ")"
    return (
        f"WITH new_queries AS (INSERT INTO {Query._meta.db_table} ({', '.join(query_columns)})"
        f" VALUES {', '.join([placeholders] * row_count)} RETURNING id, external_id),"
        f" new_lives AS (INSERT INTO {LiveQuery._meta.db_table} ({', '.join(live_columns)})"
        f' SELECT {", ".join(live_selected)} FROM new_queries ORDER BY new_queries.external_id COLLATE "C")'
        " SELECT id, external_id FROM new_queries"
    )


def _insert_new_in_one_statement(rows: list[dict], token: ApiToken | None, warehouses: dict) -> list[LiveQuery]:
    """Insert queries and their live rows with one PostgreSQL statement, atomic on its own.

    The hot path of the ingestion API: one round trip instead of BEGIN, two INSERTs and
    COMMIT, and no ORM compilation (about a third of a post's CPU). Columns and values come
    from the models' own fields, so the statement follows the models as they change.
    """
    from labelling.models import Query

    db = connections[DEFAULT_DB_ALIAS]
    queries, lives = _new_rows(rows, token, warehouses)
    query_fields = _inserted_fields(Query)
    values = [value for query in queries for value in _insert_values(query, query_fields, db)]
    shared_fields = [f for f in _inserted_fields(LiveQuery) if f.name not in ("query", "external_id")]
    values += _insert_values(lives[0], shared_fields, db)
    with db.cursor() as cursor:
        cursor.execute(_insert_statement(len(queries)), values)
        ids = {external_id: pk for pk, external_id in cursor.fetchall()}
    for query, live in zip(queries, lives, strict=True):
        query.pk = ids[query.external_id]
        live.query = query
        for obj in (query, live):
            obj._state.adding, obj._state.db = False, db.alias
    return lives


def _insert_new(rows: list[dict], token: ApiToken | None, warehouses: dict) -> list[LiveQuery]:
    """Insert fresh rows as queries and their live rows, marked as sent to the broker now."""
    from labelling.models import Query, QuerySource

    if not rows:
        return []
    queries, lives = _new_rows(rows, token, warehouses)
    queries = Query.objects.bulk_create(queries)
    if queries[0].pk is None:  # backends that do not return ids from bulk inserts
        ids = dict(
            Query.objects.filter(
                source=QuerySource.LIVE, live=None, external_id__in=[r["external_id"] for r in rows]
            ).values_list("external_id", "pk")
        )
        for query in queries:
            query.pk = ids[query.external_id]
    for query, live in zip(queries, lives, strict=True):
        live.query = query  # the id it was saved under
    LiveQuery.objects.bulk_create(lives)
    return lives


def _ingest_all_new(rows: list[dict], token: ApiToken | None, warehouses: dict) -> dict[str, LiveQuery] | None:
    """Insert rows assuming none was posted before; None if one was (the careful path decides).

    Nearly every post is new, so this saves the look-up the careful path starts with; the
    unique constraint on (client, external id), not this function, guarantees no duplicate.
    """
    try:
        if connection.vendor == "postgresql" and not connection.in_atomic_block:
            lives = _insert_new_in_one_statement(rows, token, warehouses)
            live_queries_publish_soon([live.pk for live in lives])
        else:
            with transaction.atomic():
                lives = _insert_new(rows, token, warehouses)
                transaction.on_commit(lambda ids=[live.pk for live in lives]: live_queries_publish_soon(ids))
    except IntegrityError:
        return None
    return {live.external_id: live for live in lives}


def _ingest_careful(rows: list[dict], token: ApiToken | None, warehouses: dict) -> tuple[dict, set]:
    """Find the client's stored rows and insert the rest; return (live by external id, new ids)."""
    client = token.client if token else ""
    for attempt in itertools.count():
        try:
            with transaction.atomic():
                stored = LiveQuery.objects.select_related("query").filter(
                    client=client, external_id__in=[row["external_id"] for row in rows]
                )
                by_external = {live.external_id: live for live in stored}
                new_lives = _insert_new([r for r in rows if r["external_id"] not in by_external], token, warehouses)
                by_external.update({live.external_id: live for live in new_lives})
                fresh_ids = [live.pk for live in new_lives]
                if fresh_ids:
                    transaction.on_commit(lambda ids=fresh_ids: live_queries_publish_soon(ids))
            return by_external, {live.external_id for live in new_lives}
        except IntegrityError:
            # A concurrent post of the same external id won the race; the retry finds it.
            if attempt == INGEST_RACE_RETRIES:
                raise


def _is_deadlock(exc: OperationalError) -> bool:
    """Say whether PostgreSQL chose this transaction as a deadlock victim (or could not serialise it)."""
    return getattr(exc.__cause__, "sqlstate", None) in ("40P01", "40001")


def live_queries_ingest(*, rows: list[dict], token: ApiToken | None = None, warehouses=None) -> list[IngestedQuery]:
    """Store validated rows as live queries, idempotently on (client, external_id); enqueue after commit.

    Re-posting an external id returns the stored query, never a second one; so does a
    repeat inside one list (only its first occurrence reports `created`). Another client's
    query with the same external id is not this client's: it gets its own. Rows are
    inserted in external-id order and a deadlock is retried, so concurrent posts of the
    same ids in any order all succeed. Rows must already be validated (warehouse names
    exist; pass the Warehouse rows by name if the caller has them). Publishing to the
    broker happens after the commit; if it fails, the rows stay `pending` for the sweeper.
    """
    from probes.models import Warehouse

    if warehouses is None:
        warehouses = {w.name: w for w in Warehouse.objects.filter(name__in={r["warehouse"] for r in rows})}
    first_of = {}
    for row in rows:
        first_of.setdefault(row["external_id"], row)  # a repeat inside the list is the same query
    ordered = [first_of[external_id] for external_id in sorted(first_of)]
    for attempt in range(INGEST_DEADLOCK_RETRIES + 1):
        try:
            by_external = _ingest_all_new(ordered, token, warehouses)
            fresh = set(by_external or ())
            if by_external is None:
                by_external, fresh = _ingest_careful(ordered, token, warehouses)
            break
        except OperationalError as exc:
            if not _is_deadlock(exc) or attempt == INGEST_DEADLOCK_RETRIES:
                raise
            logger.warning("triage: ingestion lost a deadlock (attempt %d); retrying", attempt + 1)
            time.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
    ingested = []
    for row in rows:
        external_id = row["external_id"]
        ingested.append(IngestedQuery(live=by_external[external_id], created=external_id in fresh))
        fresh.discard(external_id)  # reported once; a repeat later in the list says created=False
    return ingested


def live_queries_enqueue(*, ids: list[int]) -> int:
    """Publish the pipeline's work for the given live queries; return how many were published.

    One message whatever the number of ids (a message costs the same for one id as for
    hundreds); a worker fans a batch out into one task per query. Must run outside any
    transaction (after commit). A broker that is down leaves the queries `pending` with no
    publish time: the error is logged, nothing is raised to the client, and the sweeper
    sends them later.
    """
    from triage.tasks import process_live_queries, process_live_query

    if not ids:
        return 0
    task, args = (process_live_query, [ids[0]]) if len(ids) == 1 else (process_live_queries, [list(ids)])
    try:
        task.apply_async(
            args=args,
            retry=True,
            retry_policy={"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2},
        )
    except Exception:  # noqa: BLE001 - any publish failure means "broker unavailable"
        LiveQuery.objects.filter(pk__in=ids).update(enqueued_at=None)
        logger.exception("triage: could not publish the pipeline's work; %d live queries stay pending", len(ids))
        return 0
    return len(ids)


def live_queries_requeue_stale(*, older_than: timedelta = timedelta(minutes=2), limit: int = 1000) -> int:
    """Re-publish live queries pending (or stuck processing) for longer than `older_than`."""
    cutoff = timezone.now() - older_than
    stale = (
        LiveQuery.objects.filter(
            Q(status=IngestStatus.PENDING, created_at__lt=cutoff)
            & (Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=cutoff))
        )
        | LiveQuery.objects.filter(
            status=IngestStatus.PROCESSING,
            started_at__lt=timezone.now() - timedelta(seconds=settings.TRIAGE_PROCESSING_TIMEOUT_S),
        )
    ).order_by("created_at")
    ids = list(stale.values_list("pk", flat=True)[:limit])
    if not ids:
        return 0
    LiveQuery.objects.filter(pk__in=ids).update(enqueued_at=timezone.now(), enqueue_attempts=F("enqueue_attempts") + 1)
    published = live_queries_enqueue(ids=ids)
    logger.info("triage: re-enqueued %d of %d stale live queries", published, len(ids))
    return published


# --- The analyst queue -------------------------------------------------------------------


def claimable_q(now=None) -> Q:
    """Items an analyst may claim: open ones and claims that have expired."""
    now = now or timezone.now()
    return Q(status=TriageStatus.OPEN) | Q(status=TriageStatus.CLAIMED, claim_expires_at__lt=now)


def _claim_timeout(policy: TriagePolicy | None) -> timedelta:
    return timedelta(minutes=policy.claim_timeout_minutes if policy else 15)


def triage_item_claim_next(*, analyst, queryset=None) -> TriageItem | None:
    """Claim the most useful claimable item for an analyst; two analysts never get the same.

    An analyst who still holds an unexpired claim gets that item back first. On
    PostgreSQL the candidate row is locked with FOR UPDATE SKIP LOCKED; elsewhere a
    conditional update decides who wins each row.
    """
    now = timezone.now()
    held = TriageItem.objects.filter(status=TriageStatus.CLAIMED, assignee=analyst, claim_expires_at__gte=now).first()
    if held:
        return held
    base = (queryset if queryset is not None else TriageItem.objects.all()).filter(claimable_q(now))
    base = base.order_by("-probe_confirmed", "-judges_agreeing", "created_at")
    if connection.vendor == "postgresql":
        with transaction.atomic():
            item = base.select_for_update(skip_locked=True, of=("self",)).first()
            if item is None:
                return None
            _mark_claimed(item, analyst, now)
            return item
    for candidate_id in base.values_list("pk", flat=True)[:50]:
        expires = now + _claim_timeout(current_policy())
        won = (
            TriageItem.objects.filter(pk=candidate_id)
            .filter(claimable_q(now))
            .update(status=TriageStatus.CLAIMED, assignee=analyst, claimed_at=now, claim_expires_at=expires)
        )
        if won:
            return TriageItem.objects.get(pk=candidate_id)
    return None


def _mark_claimed(item: TriageItem, analyst, now) -> None:
    item.status = TriageStatus.CLAIMED
    item.assignee = analyst
    item.claimed_at = now
    item.claim_expires_at = now + _claim_timeout(item.policy)
    item.save(update_fields=["status", "assignee", "claimed_at", "claim_expires_at"])


def triage_item_release(*, item: TriageItem, analyst) -> None:
    """Give a claimed item back to the queue."""
    TriageItem.objects.filter(pk=item.pk, status=TriageStatus.CLAIMED, assignee=analyst).update(
        status=TriageStatus.OPEN, assignee=None, claimed_at=None, claim_expires_at=None
    )


RESOLUTION_TO_LABEL = {
    Resolution.CONFIRMED_WRONG: "wrong",
    Resolution.FALSE_ALARM: "correct",
    Resolution.UNCLEAR: "unsure",
}


@transaction.atomic
def triage_item_resolve(*, item_id: int, analyst, resolution: str, error_class: str = "", note: str = ""):
    """Record an analyst's decision on an item they hold, as a `triage` label on its query."""
    from labelling.models import ErrorClass, LabelSource
    from labelling.services import label_create

    item = TriageItem.objects.select_for_update().select_related("query").get(pk=item_id)
    now = timezone.now()
    holds_claim = item.status == TriageStatus.CLAIMED and item.assignee_id == analyst.pk
    if not holds_claim and not (has_role(analyst, ADMIN) and item.status != TriageStatus.RESOLVED):
        raise PermissionDenied("Claim the item before deciding it (your claim may have expired).")
    if resolution not in Resolution.values:
        raise ValidationError({"resolution": f"Unknown resolution {resolution!r}."})
    if resolution == Resolution.CONFIRMED_WRONG:
        if error_class not in ErrorClass.values:
            raise ValidationError({"error_class": "Confirmed wrong needs an error class."})
    else:
        error_class = ""
    # One implementation of label history: the labelling service supersedes and counts.
    label = label_create(
        query=item.query,
        labeller=analyst,
        decision=RESOLUTION_TO_LABEL[resolution],
        error_class=error_class,
        note=note,
        source=LabelSource.TRIAGE,
    )
    started = item.claimed_at or item.created_at
    item.status = TriageStatus.RESOLVED
    item.resolution = resolution
    item.resolution_error_class = error_class
    item.resolution_note = note
    item.resolved_by = analyst
    item.resolved_at = now
    item.label = label
    item.time_spent_s = (now - started).total_seconds()
    item.claim_expires_at = None
    item.save()
    ResolutionEvent.objects.create(
        item=item,
        actor=analyst,
        action=ResolutionEvent.Action.RESOLVED,
        resolution=resolution,
        error_class=error_class,
        note=note,
        label=label,
    )
    return label


@transaction.atomic
def triage_item_reopen(*, item_id: int, admin, note: str = "") -> TriageItem:
    """Reverse a resolution (admin only): its label becomes history, the item returns to the queue."""
    from labelling.services import label_undo

    if not has_role(admin, ADMIN):
        raise PermissionDenied("Only an admin can reopen a resolved item.")
    item = TriageItem.objects.select_for_update().get(pk=item_id)
    if item.status != TriageStatus.RESOLVED:
        raise ValidationError("Only a resolved item can be reopened.")
    if item.label_id and item.label.is_current:
        label_undo(label=item.label)
    ResolutionEvent.objects.create(
        item=item, actor=admin, action=ResolutionEvent.Action.REOPENED, resolution=item.resolution, note=note
    )
    item.status = TriageStatus.OPEN
    item.resolution = ""
    item.resolution_error_class = ""
    item.resolution_note = ""
    item.resolved_by = None
    item.resolved_at = None
    item.label = None
    item.assignee = None
    item.claimed_at = None
    item.claim_expires_at = None
    item.save()
    return item


def alert_acknowledge(*, alert_id: int, user) -> None:
    from triage.models import Alert

    Alert.objects.filter(pk=alert_id, acknowledged_at__isnull=True).update(
        acknowledged_at=timezone.now(), acknowledged_by=user
    )
