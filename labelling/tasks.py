"""Background work of the labelling app: thin tasks calling one service each."""

from celery import shared_task

from labelling.services import query_fingerprint_fill as fill


@shared_task(name="labelling.query_fingerprint_fill", acks_late=True)
def query_fingerprint_fill(gold_set_id: int | None = None, batch: int = 500) -> int:
    """Fingerprint every query of the gold set still lacking one, a batch per transaction."""

    total = 0
    while filled := fill(gold_set_id=gold_set_id, limit=batch):
        total += filled
    return total
