"""The analyst queue: claim an item (a lease), give it back, resolve it as a label, reopen it."""

from datetime import timedelta

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from config.roles import OVERRIDE_TRIAGE
from labelling.models import LabelSource
from labelling.services import label_create, label_undo
from triage.models import Resolution, ResolutionEvent, TriageItem, TriagePolicy, TriageStatus
from triage.policy import policy_current

# How many of the best claimable items one claim tries, in order, before saying the queue
# is empty: each lost race (another analyst took the row first) moves on to the next one.
CLAIM_CANDIDATES = 50
DEFAULT_CLAIM_TIMEOUT = timedelta(minutes=15)

# The queue's one order, for the claim and the page alike, and how the page says it: each
# field with the words that explain it, so the sentence cannot drift from the order.
QUEUE_ORDER = ("-probe_confirmed", "-judges_agreeing", "created_at")
QUEUE_ORDER_WORDS = {
    "-probe_confirmed": "items a probe confirmed first",
    "-judges_agreeing": "then those more judges flagged",
    "created_at": "then the oldest",
}


def queue_order_sentence() -> str:
    """Say, in one line, how the queue is ordered (the order `n` claims in)."""
    return "Ordered: " + ", ".join(QUEUE_ORDER_WORDS[field] for field in QUEUE_ORDER) + "."


RESOLUTION_TO_LABEL = {
    Resolution.CONFIRMED_WRONG: "wrong",
    Resolution.FALSE_ALARM: "correct",
    Resolution.UNCLEAR: "unsure",
}


def claimable_q(now=None) -> Q:
    """Items an analyst may claim: open ones and claims that have expired."""
    now = now or timezone.now()
    return Q(status=TriageStatus.OPEN) | Q(status=TriageStatus.CLAIMED, claim_expires_at__lt=now)


def claim_timeout(*, policy: TriagePolicy | None) -> timedelta:
    return timedelta(minutes=policy.claim_timeout_minutes) if policy else DEFAULT_CLAIM_TIMEOUT


def triage_item_claim_next(*, analyst, queryset=None) -> TriageItem | None:
    """Claim the most useful claimable item for an analyst; two analysts never get the same.

    An analyst who still holds an unexpired claim gets that item back first. Otherwise the
    best candidates are tried in order, each with one conditional UPDATE that succeeds only
    while the row is still claimable: of two analysts racing for a row, the database lets
    exactly one update win (PostgreSQL re-checks the condition after the winner commits;
    SQLite has one writer at a time), and the loser moves on to the next candidate.

    The lease lasts the claim timeout of the policy in force now, not of the policy that
    flagged the item: a claim is granted now, and an admin who lengthens the timeout
    means it for every claim from then on, old items included.
    """
    now = timezone.now()
    held = TriageItem.objects.filter(status=TriageStatus.CLAIMED, assignee=analyst, claim_expires_at__gte=now).first()
    if held:
        return held
    expires = now + claim_timeout(policy=policy_current())
    base = (queryset if queryset is not None else TriageItem.objects.all()).filter(claimable_q(now))
    base = base.order_by(*QUEUE_ORDER)
    for candidate_id in base.values_list("pk", flat=True)[:CLAIM_CANDIDATES]:
        won = (
            TriageItem.objects.filter(pk=candidate_id)
            .filter(claimable_q(now))
            .update(status=TriageStatus.CLAIMED, assignee=analyst, claimed_at=now, claim_expires_at=expires)
        )
        if won:
            return TriageItem.objects.get(pk=candidate_id)
    return None


def triage_item_release(*, item: TriageItem, analyst) -> None:
    """Give the analyst's claimed item back to the queue, or say why it cannot be given back.

    Only the claim's holder gives it back: another analyst's claim (or an item nobody holds)
    raises ValidationError naming who holds it and until when, never a silent no-op.
    """
    released = TriageItem.objects.filter(pk=item.pk, status=TriageStatus.CLAIMED, assignee=analyst).update(
        status=TriageStatus.OPEN, assignee=None, claimed_at=None, claim_expires_at=None
    )
    if not released:
        raise ValidationError(release_refusal(item=TriageItem.objects.select_related("assignee").get(pk=item.pk)))


def release_refusal(*, item: TriageItem, now=None) -> str:
    """Say why an analyst who does not hold an item's claim cannot give it back."""
    now = now or timezone.now()
    if item.status == TriageStatus.RESOLVED:
        return f"Item {item.pk} is already resolved: there is no claim to give back."
    if item.status == TriageStatus.CLAIMED and item.claim_expires_at and item.claim_expires_at >= now:
        until = timezone.localtime(item.claim_expires_at).strftime("%H:%M")
        return (
            f"Item {item.pk} is claimed by {item.assignee} until {until}: only they can give it back."
            " It returns to the queue by itself when the claim expires."
        )
    return f"Item {item.pk} is not claimed by anyone: it is already in the queue."


@transaction.atomic
def triage_item_resolve(*, item_id: int, analyst, resolution: str, error_class: str = "", note: str = ""):
    """Record an analyst's decision on an item they hold, as a `triage` label on its query."""
    item = TriageItem.objects.select_for_update().select_related("query").get(pk=item_id)
    now = timezone.now()
    holds_claim = item.status == TriageStatus.CLAIMED and item.assignee_id == analyst.pk
    if not holds_claim and not (analyst.has_perm(OVERRIDE_TRIAGE) and item.status != TriageStatus.RESOLVED):
        raise PermissionDenied("Claim the item before deciding it (your claim may have expired).")
    if resolution not in Resolution.values:
        raise ValidationError({"resolution": f"Unknown resolution {resolution!r}."})
    if resolution != Resolution.CONFIRMED_WRONG:
        error_class = ""
    # One implementation of label history and of the label rule (a wrong label needs a
    # class of the taxonomy): the labelling service checks, supersedes and counts.
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
    if not admin.has_perm(OVERRIDE_TRIAGE):
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
    resolution_clear(item=item)
    item.assignee = None
    item.claimed_at = None
    item.claim_expires_at = None
    item.save()
    return item


def resolution_clear(*, item: TriageItem) -> None:
    """Forget an item's resolution (reopen, undo); the caller sets its status and saves it."""
    item.resolution = ""
    item.resolution_error_class = ""
    item.resolution_note = ""
    item.resolved_by = None
    item.resolved_at = None
    item.label = None
