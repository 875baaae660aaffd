"""API tokens of the ingestion API: issue, revoke, authenticate (with a per-process cache)."""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from config.audit_log import audit_record_change
from triage.models import TOKEN_SCOPES, ApiToken, validate_scopes

__all__ = ["TOKEN_SCOPES", "api_token_authenticate", "api_token_issue", "api_token_revoke", "hash_token"]
TOKEN_PREFIX = "dkt"


def hash_token(plaintext: str) -> str:
    """Hash a token for storage; tokens are long random strings, so SHA-256 suffices."""
    return hashlib.sha256(plaintext.encode()).hexdigest()


@transaction.atomic
def api_token_issue(*, client: str, scopes: list[str], name: str = "", created_by=None) -> tuple[ApiToken, str]:
    """Create a token for a client and return it with its plaintext (shown only once)."""
    try:
        validate_scopes(scopes)
    except ValidationError as exc:
        raise ValidationError({"scopes": exc.messages}) from exc
    prefix = secrets.token_hex(4)
    plaintext = f"{TOKEN_PREFIX}_{prefix}_{secrets.token_urlsafe(32)}"
    token = ApiToken(
        client=client,
        name=name,
        prefix=prefix,
        token_hash=hash_token(plaintext),
        scopes=sorted(set(scopes)),
        created_by=created_by,
    )
    token.full_clean()
    token.save()
    return token, plaintext


def api_token_revoke(*, token: ApiToken) -> None:
    """Revoke a token: refused at once by this process, by every other within the cache time."""
    now = timezone.now()
    if ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now):
        audit_record_change(token, {"revoked_at": [None, now]})  # an update sends no signal
    cache.delete(_token_cache_key(token.token_hash))


def _token_cache_key(token_hash: str) -> str:
    return f"triage:api-token:{token_hash}"


def api_token_authenticate(*, plaintext: str) -> ApiToken | None:
    """Return the active token a plaintext names, or None; record its use.

    Each web process remembers a token for TRIAGE_API_TOKEN_CACHE_SECONDS, so the ingestion
    API does not read the token table on every one of hundreds of posts a second; the price
    is that a revocation reaches the other processes within that many seconds.
    """
    if not plaintext.isascii():
        return None  # every issued token is ASCII; anything else (lone surrogates too) names none
    token_hash = hash_token(plaintext)
    key = _token_cache_key(token_hash)
    token = cache.get(key)
    if token is None:
        token = ApiToken.objects.filter(token_hash=token_hash).first()
        if token is None:
            return None
        cache.set(key, token, settings.TRIAGE_API_TOKEN_CACHE_SECONDS)
    if not token.is_active:
        return None
    if api_token_touch(token=token):
        cache.set(key, token, settings.TRIAGE_API_TOKEN_CACHE_SECONDS)
    return token


def api_token_touch(*, token: ApiToken) -> bool:
    """Record use at most once a minute, so authentication does not write on every request."""
    now = timezone.now()
    if token.last_used_at and token.last_used_at > now - timedelta(minutes=1):
        return False
    ApiToken.objects.filter(pk=token.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - timedelta(minutes=1))
    ).update(last_used_at=now)
    token.last_used_at = now
    return True
