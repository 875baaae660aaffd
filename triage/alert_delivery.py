"""Sending one alert delivery: the JSON and Slack payloads, the signed POST, the e-mail.

`delivery_attempt` makes one try and records it in the delivery log. A connection error, a
timeout, a 429 or a 5xx raises `DeliveryRetry` (the task retries it with backoff); any other
answer is final: 2xx is sent, another 4xx is failed (retrying would get the same refusal).
"""

import json
import logging
import smtplib
import urllib.error
import urllib.request

from django.conf import settings
from django.core.mail import send_mail
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from triage.alert_models import Alert, AlertDelivery
from triage.webhooks import SIGNATURE_HEADER, body_signature, webhook_secret

logger = logging.getLogger("triage.alerts")
WEBHOOK_TIMEOUT_S = 10


class DeliveryRetry(Exception):
    """A try that may succeed later: the receiver was unreachable, busy or failing."""


def alerts_page_url() -> str:
    return settings.ALERT_SITE_URL.rstrip("/") + reverse("triage:alerts")


def alert_payload(alert: Alert) -> dict:
    """Return the generic JSON payload of an alert (README: "Alerts and webhooks")."""
    return {
        "type": "docket.alert",
        "id": alert.pk,
        "kind": alert.kind,
        "title": alert.get_kind_display(),
        "cause": alert.cause_key,
        "message": alert.message,
        "judge_version": str(alert.judge_version) if alert.judge_version_id else None,
        "details": alert.details,
        "created_at": alert.created_at.isoformat(),
        "url": alerts_page_url(),
    }


def slack_payload(alert: Alert) -> dict:
    """Return a Slack incoming-webhook payload: `text` (the notification) plus blocks."""
    title = f"Docket alert: {alert.get_kind_display()}"
    return {
        "text": f"{title}: {alert.message}",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": title[:150]}},
            {"type": "section", "text": {"type": "mrkdwn", "text": alert.message[:3000]}},
            {
                "type": "context",
                "elements": [
                    {"type": "mrkdwn", "text": f"cause `{alert.cause_key}` · <{alerts_page_url()}|open alerts>"}
                ],
            },
        ],
    }


def payload_body(delivery: AlertDelivery) -> bytes:
    """Return the raw body a webhook delivery posts (the bytes the signature covers)."""
    build = slack_payload if delivery.channel == AlertDelivery.Channel.SLACK else alert_payload
    return json.dumps(build(delivery.alert), separators=(",", ":"), sort_keys=True).encode()


def webhook_post(delivery: AlertDelivery) -> int:
    """POST the signed payload to the delivery's webhook; return the HTTP status."""
    body = payload_body(delivery)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Docket-Alerts/1",
        SIGNATURE_HEADER: body_signature(secret=webhook_secret(delivery.webhook), body=body),
        "X-Docket-Delivery": str(delivery.pk),
    }
    request = urllib.request.Request(delivery.webhook.url, data=body, headers=headers, method="POST")
    try:
        # The address is one an admin registered (http or https only, triage/webhooks.py).
        with urllib.request.urlopen(request, timeout=WEBHOOK_TIMEOUT_S) as response:  # noqa: S310
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (OSError, ValueError) as exc:  # URLError, refused, timed out, bad address
        raise DeliveryRetry(f"{type(exc).__name__}: {exc}") from exc


def email_send(delivery: AlertDelivery) -> None:
    alert = delivery.alert
    body = f"{alert.message}\n\nCause: {alert.cause_key}\nOpen alerts: {alerts_page_url()}\n"
    try:
        send_mail(f"[Docket] {alert.get_kind_display()}", body, settings.ALERT_EMAIL_FROM, [delivery.email])
    except (smtplib.SMTPException, OSError) as exc:
        raise DeliveryRetry(f"{type(exc).__name__}: {exc}") from exc


def _record(delivery_id: int, **fields) -> None:
    AlertDelivery.objects.filter(pk=delivery_id, status=AlertDelivery.Status.PENDING).update(**fields)


def delivery_attempt(*, delivery_id: int) -> str | None:
    """Try one delivery once and log it; return its status (None for a missing or finished one).

    Raises DeliveryRetry after logging a try that may succeed later.
    """
    delivery = (
        AlertDelivery.objects.select_related("alert__judge_version__judge", "webhook")
        .filter(pk=delivery_id, status=AlertDelivery.Status.PENDING)
        .first()
    )
    if delivery is None:
        return None
    now = timezone.now()
    if delivery.channel != AlertDelivery.Channel.EMAIL and delivery.webhook is None:
        _record(
            delivery_id, status=AlertDelivery.Status.FAILED, last_error="the webhook was deleted", last_tried_at=now
        )
        return AlertDelivery.Status.FAILED
    _record(delivery_id, attempts=F("attempts") + 1, last_tried_at=now)
    try:
        if delivery.channel == AlertDelivery.Channel.EMAIL:
            email_send(delivery)
            status_code = None
        else:
            status_code = webhook_post(delivery)
            if status_code == 429 or status_code >= 500:
                raise DeliveryRetry(f"HTTP {status_code}")
    except DeliveryRetry as exc:
        _record(delivery_id, last_error=str(exc)[:2000])
        raise
    if status_code is not None and not 200 <= status_code < 300:
        _record(
            delivery_id,
            status=AlertDelivery.Status.FAILED,
            response_status=status_code,
            last_error=f"HTTP {status_code}",
        )
        return AlertDelivery.Status.FAILED
    _record(
        delivery_id,
        status=AlertDelivery.Status.SENT,
        response_status=status_code,
        sent_at=timezone.now(),
        last_error="",
    )
    return AlertDelivery.Status.SENT


def delivery_give_up(*, delivery_id: int) -> None:
    """Mark a delivery failed after its last retry (its last error stays in the log)."""
    _record(delivery_id, status=AlertDelivery.Status.FAILED)
    logger.error("triage: alert delivery %s failed after its retries", delivery_id)
