"""The analyst's short undo of a decision they just made (like the labelling queue's `z`).

One keystroke resolves an item and opens the next, so a slip must be cheap to take back:
for UNDO_WINDOW after resolving, the analyst who resolved an item may put it back in their
own hands. Its label becomes history (the labelling service's `label_undo`), a `reopened`
event records who undid it, and the item they were moved on to goes back to the queue.
After the window only an admin can reopen (`triage_item_reopen`).
"""

from datetime import timedelta

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from labelling.services import label_undo
from triage.models import ResolutionEvent, TriageItem, TriageStatus
from triage.policy import policy_current
from triage.queue import claim_timeout, resolution_clear

UNDO_WINDOW = timedelta(minutes=2)


def undo_deadline(item: TriageItem):
    """When the resolver's undo of this item stops being offered."""
    return item.resolved_at + UNDO_WINDOW if item.resolved_at else None


@transaction.atomic
def triage_item_undo_resolve(*, item_id: int, analyst) -> TriageItem:
    """Take back the analyst's own recent decision; the item is theirs to decide again."""
    item = TriageItem.objects.select_for_update(of=("self",)).select_related("label", "policy").get(pk=item_id)
    if item.status != TriageStatus.RESOLVED:
        raise ValidationError("This item is not resolved: there is nothing to undo.")
    if item.resolved_by_id != analyst.pk:
        raise PermissionDenied("Only the analyst who resolved an item can undo it; an admin can reopen it.")
    now = timezone.now()
    if now > undo_deadline(item):
        raise ValidationError("The undo window has passed; an admin can reopen the item.")
    if item.label_id and item.label.is_current:
        label_undo(label=item.label)
    ResolutionEvent.objects.create(
        item=item, actor=analyst, action=ResolutionEvent.Action.REOPENED, resolution=item.resolution, note="undone"
    )
    # Hand back the item the decision moved the analyst on to, so theirs is the undone one.
    TriageItem.objects.filter(status=TriageStatus.CLAIMED, assignee=analyst).exclude(pk=item.pk).update(
        status=TriageStatus.OPEN, assignee=None, claimed_at=None, claim_expires_at=None
    )
    item.status = TriageStatus.CLAIMED
    item.assignee = analyst
    item.claimed_at = now
    # The same lease rule as every claim (triage.queue): the policy in force now.
    item.claim_expires_at = now + claim_timeout(policy=policy_current())
    resolution_clear(item=item)
    item.time_spent_s = None
    item.save()
    return item
