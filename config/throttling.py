"""The client address login throttling counts failures against (django-axes' AXES_CLIENT_IP_CALLABLE)."""

from django.conf import settings


def client_ip(request) -> str:
    """Return the address the request came from, through TRUSTED_PROXY_COUNT proxies.

    With no proxy (the default) that is REMOTE_ADDR. Behind N proxies, each appends the
    address it received from to X-Forwarded-For, so the client is the N-th entry from the
    right; entries further left are whatever the client sent and are never trusted.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    count = settings.TRUSTED_PROXY_COUNT
    if count <= 0:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if len(forwarded) < count:
        return forwarded[0] if forwarded else remote
    return forwarded[-count]
