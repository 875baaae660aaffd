"""Webhooks: registering one, its signing secret, and the signature of a body.

Docket's rule is that secrets come from the environment, never from the database. A
webhook's signing secret is a credential shared with its receiver, so Docket stores only
what it needs to recompute it: a random salt. The secret is HMAC-SHA256 of the salt under
`ALERT_WEBHOOK_KEY` (or `SECRET_KEY` when that is unset), both from the environment; the
database alone cannot sign, and `add_webhook` shows the secret once.
"""

import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from triage.alert_models import Webhook

SIGNATURE_HEADER = "X-Docket-Signature"


def webhook_secret(webhook: Webhook) -> str:
    """Return the webhook's signing secret (64 hex digits), derived from the environment's key."""
    key = (settings.ALERT_WEBHOOK_KEY or settings.SECRET_KEY).encode()
    return hmac.new(key, f"docket.webhook:{webhook.secret_salt}".encode(), hashlib.sha256).hexdigest()


def body_signature(*, secret: str, body: bytes) -> str:
    """Return the `X-Docket-Signature` value: `sha256=` and the hex HMAC-SHA256 of the raw body."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def webhook_url_problem(url: str) -> str:
    """Say why Docket will not post to this address ("" when it will; loopback addresses are allowed)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return "a webhook URL starts with http:// or https://"
    if not parts.hostname:
        return "a webhook URL names a host"
    if parts.username or parts.password:
        return "a webhook URL carries no user name or password (they would be stored in the database)"
    return ""


@transaction.atomic
def webhook_create(*, url: str, kind: str, note: str = "") -> tuple[Webhook, str]:
    """Register a webhook and return it with its secret (shown once; the database keeps only the salt)."""
    if problem := webhook_url_problem(url):
        raise ValidationError({"url": problem})
    webhook = Webhook(url=url, kind=kind, note=note, secret_salt=secrets.token_hex(16))
    webhook.full_clean()
    webhook.save()
    return webhook, webhook_secret(webhook)
