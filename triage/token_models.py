"""API tokens: a per-client credential whose scopes say what it may do.

Defined beside `triage/tokens.py` (issuing, checking); `triage/models.py` imports the model so
Django loads it as the triage app's.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

# What a token may be allowed to do; a token holds at least one, and nothing else.
TOKEN_SCOPES = ("ingest", "read")


def validate_scopes(value) -> None:
    """Refuse scopes that are not a non-empty list of known scope names (no scope is not every scope)."""
    if not isinstance(value, list) or not value or not all(isinstance(scope, str) for scope in value):
        raise ValidationError(
            f"Scopes must be a non-empty list of scope names from {list(TOKEN_SCOPES)}; got {value!r}."
        )
    unknown = sorted(set(value) - set(TOKEN_SCOPES))
    if unknown:
        raise ValidationError(f"Unknown scopes {unknown}: choose from {list(TOKEN_SCOPES)}.")


class ApiToken(models.Model):
    """A per-client API credential. Only a hash is stored; the token is shown once."""

    client = models.SlugField(max_length=64, help_text="Who uses it; a client reads only what it ingested.")
    name = models.CharField(max_length=100, blank=True)
    # Public part shown in lists so an admin can tell tokens apart without the secret.
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    scopes = models.JSONField(default=list, validators=[validate_scopes], help_text='e.g. ["ingest", "read"]')
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["client", "-created_at"]

    def __str__(self):
        state = "revoked" if self.revoked_at else "active"
        return f"{self.client} {self.prefix}… ({state})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def has_scope(self, scope: str) -> bool:
        """Say whether the token may do `scope`: only a scope it lists (none listed is none allowed)."""
        return isinstance(self.scopes, list) and scope in self.scopes
