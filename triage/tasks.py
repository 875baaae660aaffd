"""Thin, idempotent Celery tasks of the triage app."""

from celery import shared_task


@shared_task(name="triage.process_live_query", acks_late=True)
def process_live_query(live_id: int) -> str | None:
    """Run the pipeline for one live query (a redelivery finds it done and exits)."""
    from triage.models import LiveQuery
    from triage.pipeline import process_live_query as run

    if not LiveQuery.objects.filter(pk=live_id).exists():
        return None
    return run(live_id=live_id)


@shared_task(name="triage.process_live_queries", acks_late=True)
def process_live_queries(live_ids: list[int]) -> int:
    """Fan a web process's batch out into one pipeline task per query, so workers share it."""
    for live_id in live_ids:
        process_live_query.apply_async(args=[live_id])
    return len(live_ids)


@shared_task(name="triage.requeue_pending", acks_late=True)
def requeue_pending() -> int:
    """Re-publish live queries left pending too long (e.g. the broker was down at ingest)."""
    from triage.services import live_queries_requeue_stale

    return live_queries_requeue_stale()


@shared_task(name="triage.monitor_judges", acks_late=True)
def monitor_judges() -> int:
    """Re-measure live judges against fresh labels; raise alerts; store the estimates."""
    from triage.monitoring import monitor_live_judges

    return len(monitor_live_judges())
