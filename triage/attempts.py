"""Recorded generation attempts of live requests: their validation, and the hand-over to the loop lab's store.

A client may send, with each live query, the attempts its generation loop made: tier,
failure class (seed 001; none when the attempt passed), tokens or cost, latency. The
ingestion API validates them here and hands them to the store the loop lab registered
(`loops/attempts.py`, which keeps them as `loops.models.RequestAttempt` rows and reads them
back as replay records; triage does not import loops).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

from django.core.exceptions import ImproperlyConfigured, ValidationError
from rest_framework import serializers

from triage import attempt_format

MAX_ATTEMPTS_PER_REQUEST = 50


class AttemptInSerializer(serializers.Serializer):
    """One attempt of a live request, as the ingestion API takes it."""

    tier = serializers.SlugField(max_length=32)
    attempt = serializers.IntegerField(min_value=1, max_value=1000, required=False)
    failure_class = serializers.CharField(max_length=16, allow_null=True, allow_blank=True, required=False)
    tokens = serializers.IntegerField(min_value=0, max_value=2**31 - 1, required=False, allow_null=True)
    cost_usd = serializers.DecimalField(
        max_digits=12, decimal_places=8, min_value=Decimal(0), required=False, allow_null=True
    )
    latency_ms = serializers.FloatField(min_value=0, max_value=86_400_000, required=False, allow_null=True)

    def validate_failure_class(self, value):
        try:
            return attempt_format.normalise_failure_class(value, where="failure_class") or ""
        except attempt_format.ReplayInputError as error:
            raise serializers.ValidationError(str(error)) from None


class AttemptListField(serializers.ListField):
    """A request's attempts in the order they were made (at most MAX_ATTEMPTS_PER_REQUEST)."""

    def __init__(self, **kwargs):
        super().__init__(child=AttemptInSerializer(), max_length=MAX_ATTEMPTS_PER_REQUEST, required=False, **kwargs)

    def to_internal_value(self, data):
        attempts = super().to_internal_value(data)
        try:
            return numbered(attempts)
        except ValidationError as error:
            raise serializers.ValidationError(error.messages) from None


def numbered(attempts: list[dict]) -> list[dict]:
    """Fill each attempt's number within its tier (in order) and refuse a number used twice."""
    counters: dict[str, int] = {}
    seen = set()
    result = []
    for entry in attempts:
        entry = dict(entry)
        counters[entry["tier"]] = counters.get(entry["tier"], 0) + 1
        entry.setdefault("attempt", counters[entry["tier"]])
        key = (entry["tier"], entry["attempt"])
        if key in seen:
            raise ValidationError(f"attempt {entry['attempt']} of tier {entry['tier']!r} is recorded twice")
        seen.add(key)
        result.append(entry)
    return result


# The store the loop lab registers at start-up (`loops/apps.py`): triage validates attempts,
# the app above it keeps them. Triage cannot import loops, so it calls what was registered.
_attempts_store: Callable[[list[tuple[int, list[dict]]]], int] | None = None


def request_attempts_store_register(store: Callable[[list[tuple[int, list[dict]]]], int]) -> None:
    """Name the function that stores [(live query id, numbered attempts)] (the last registration wins)."""
    global _attempts_store
    _attempts_store = store


def request_attempts_store(*, rows: list[dict], ingested) -> int:
    """Store the attempts posted with ingested queries (idempotent: a re-post adds nothing twice).

    `rows` are the validated API rows, `ingested` the ingest service's result in the same
    order. The registered store runs here, in the caller's thread and transaction, and a
    missing one fails loudly rather than drop the attempts. Returns how many attempt rows
    were offered to the database.
    """
    batches = [
        (entry.live.pk, row["attempts"]) for row, entry in zip(rows, ingested, strict=True) if row.get("attempts")
    ]
    if not batches:
        return 0
    if _attempts_store is None:
        raise ImproperlyConfigured("no store for recorded attempts is registered: is `loops` in INSTALLED_APPS?")
    return _attempts_store(batches)
