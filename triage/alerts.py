"""Raising, acknowledging and resolving alerts, and queueing their deliveries.

A cause (`cause_key`) raises one alert and it is sent once. While that alert is unresolved the
same cause raises and sends nothing (`triage_alert_one_unresolved_per_cause`): acknowledging
says someone is on it (the alert stays listed, and quiet); resolving it (the check that no
longer finds its cause does, or an admin) lets the cause raise a new alert when it comes
back. A cause that is an event rather than a state (a run that failed) is raised once ever
(`once=True`), since resolving it does not undo the event. Each raised alert gets one
`AlertDelivery` per active webhook and per chosen e-mail recipient, sent by the task
`triage.deliver_alert` after the commit (triage/alert_delivery.py does the sending).
"""

import logging
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerOperationalError

from triage.alert_models import Alert, AlertDelivery, AlertRecipient, Webhook
from triage.alert_tasks import deliver_alert

logger = logging.getLogger("triage.alerts")
# Longer than a delivery's whole retry schedule (backoff capped at a minute, five retries).
STALE_DELIVERY = timedelta(minutes=15)


def _deliveries_create(alert: Alert) -> list[int]:
    """Log one pending delivery per active webhook and per recipient with an address."""
    rows = [
        AlertDelivery(alert=alert, channel=hook.kind, webhook=hook, destination=hook.url)
        for hook in Webhook.objects.filter(is_active=True)
    ]
    rows += [
        AlertDelivery(alert=alert, channel=AlertDelivery.Channel.EMAIL, email=email, destination=email)
        for email in AlertRecipient.objects.exclude(user__email="").values_list("user__email", flat=True).distinct()
    ]
    return [row.pk for row in AlertDelivery.objects.bulk_create(rows)]


def deliveries_enqueue(delivery_ids: list[int]) -> None:
    """Send each delivery's task; with the broker down, the sweeper (`deliveries_requeue_stale`) sends it later."""
    try:
        for delivery_id in delivery_ids:
            deliver_alert.delay(delivery_id)
    except BrokerOperationalError:
        logger.exception("triage: the broker is down; the alert's deliveries wait for the sweeper")


def deliveries_requeue_stale() -> int:
    """Send again the pending deliveries nobody has tried for a while (the broker was down, a worker died)."""
    stale = timezone.now() - STALE_DELIVERY
    ids = list(
        AlertDelivery.objects.filter(status=AlertDelivery.Status.PENDING)
        .filter(Q(last_tried_at__lt=stale) | Q(last_tried_at__isnull=True, created_at__lt=stale))
        .values_list("pk", flat=True)[:500]
    )
    deliveries_enqueue(ids)
    return len(ids)


def alert_raise(
    *, kind: str, cause_key: str, message: str, details: dict, judge_version=None, once: bool = False
) -> Alert | None:
    """Raise an alert for a cause unless one is unresolved for it (or, with `once`, ever raised).

    Return the new alert, or None when nothing was raised.
    """
    earlier = Alert.objects.filter(cause_key=cause_key)
    if (earlier if once else earlier.filter(resolved_at__isnull=True)).exists():
        return None
    try:
        with transaction.atomic():
            alert = Alert.objects.create(
                kind=kind, cause_key=cause_key, judge_version=judge_version, message=message, details=details
            )
            delivery_ids = _deliveries_create(alert)
    except IntegrityError:
        return None  # another check raised the same cause a moment ago
    logger.warning("triage alert %s (%s): %s", kind, cause_key, message)
    transaction.on_commit(lambda: deliveries_enqueue(delivery_ids))
    return alert


def alerts_resolve(*, cause_prefix: str, keep: set[str] = frozenset()) -> int:
    """Resolve the unresolved alerts whose cause starts with `cause_prefix`, except the causes in `keep`."""
    unresolved = Alert.objects.filter(resolved_at__isnull=True, cause_key__startswith=cause_prefix)
    return unresolved.exclude(cause_key__in=keep).update(resolved_at=timezone.now())


def alert_acknowledge(*, alert_id: int, user) -> None:
    """Mark an alert acknowledged (once: acknowledging it again changes nothing)."""
    Alert.objects.filter(pk=alert_id, acknowledged_at__isnull=True).update(
        acknowledged_at=timezone.now(), acknowledged_by=user
    )


def alert_resolve(*, alert_id: int) -> None:
    """Mark an alert resolved by hand (a person fixed the cause before the next check saw it)."""
    Alert.objects.filter(pk=alert_id, resolved_at__isnull=True).update(resolved_at=timezone.now())
