from celery import shared_task

from config.models import WorkerHeartbeat


@shared_task(name="config.ping", acks_late=True)
def ping(token: str) -> str:
    """Write a heartbeat row so tests and operators can see a live worker."""

    WorkerHeartbeat.objects.update_or_create(token=token, defaults={})
    return token
