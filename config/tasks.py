from celery import shared_task


@shared_task(name="config.ping", acks_late=True)
def ping(token: str) -> str:
    """Write a heartbeat row so tests and operators can see a live worker."""
    from config.models import WorkerHeartbeat

    WorkerHeartbeat.objects.update_or_create(token=token, defaults={})
    return token
