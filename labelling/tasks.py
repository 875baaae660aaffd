"""Background work of the labelling app: thin tasks calling one service each.

Routed to the `labelling` queue (CELERY_TASK_ROUTES); retried only on transient errors.
Each is idempotent when retried or redelivered: the fingerprint fill does only what is
missing, an audit is stored once per task, a mutation proposed before is not added again.
"""

from celery import shared_task

from config.task_retry import RETRY_ON_TRANSIENT
from labelling import audit, mutations, services
from labelling.models import GoldSet, GoldSetVersion


@shared_task(name="labelling.query_fingerprint_fill", **RETRY_ON_TRANSIENT)
def query_fingerprint_fill(gold_set_id: int | None = None, batch: int = 500) -> int:
    """Fingerprint every query of the gold set still lacking one, a batch per transaction."""
    total = 0
    while filled := services.query_fingerprint_fill(gold_set_id=gold_set_id, limit=batch):
        total += filled
    return total


@shared_task(bind=True, name="labelling.goldset_audit_run", **RETRY_ON_TRANSIENT)
def goldset_audit_run(self, version_id: int, audit_id: int | None = None) -> int | None:
    """Audit one published version and store the findings once (a redelivery or retry finds them).

    With `audit_id` (an audit asked for in the browser), the audit's own row records its
    progress and then its findings (`labelling.audit.goldset_audit_tracked`).
    """
    if audit_id is not None:
        audit.goldset_audit_tracked(audit_id=audit_id)
        return audit_id
    version = GoldSetVersion.objects.filter(pk=version_id).first()
    return None if version is None else audit.goldset_audit_run(version=version, request_id=self.request.id).pk


@shared_task(name="labelling.mutations_seed", **RETRY_ON_TRANSIENT)
def mutations_seed(gold_set_id: int, per_item: int, classes: list[str] | None = None) -> int:
    """Seed mutated proposals of one gold set (idempotent: a variant proposed before is not added again)."""
    gold_set = GoldSet.objects.filter(pk=gold_set_id).first()
    if gold_set is None:
        return 0
    return len(mutations.mutations_seed(gold_set=gold_set, per_item=per_item, classes=classes).kept)
