"""Recorded generation attempts of live requests: validation, storage, import, and replay input.

A client may send, with each live query, the attempts its generation loop made: tier,
failure class (seed 001; none when the attempt passed), tokens or cost, latency. The
ingestion API and the loop lab's `import_attempts` store them as `RequestAttempt` rows; the
loop lab (`loops/`, which triage does not import) reads them back as replay records.
"""

from __future__ import annotations

import json
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework import serializers

from triage import attempt_format
from triage.models import LiveQuery, RequestAttempt

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


def request_attempt_rows(live_query_id: int, attempts: list[dict]) -> list[RequestAttempt]:
    return [
        RequestAttempt(
            live_query_id=live_query_id,
            position=position,
            tier=entry["tier"],
            attempt=entry["attempt"],
            failure_class=entry.get("failure_class") or "",
            tokens=entry.get("tokens"),
            cost_usd=entry.get("cost_usd"),
            latency_ms=entry.get("latency_ms"),
        )
        for position, entry in enumerate(attempts, start=1)
    ]


def request_attempts_store(*, rows: list[dict], ingested) -> int:
    """Store the attempts posted with ingested queries (idempotent: a re-post adds nothing twice).

    `rows` are the validated API rows, `ingested` the ingest service's result in the same
    order. Returns how many attempt rows were offered to the database.
    """
    objects = []
    for row, entry in zip(rows, ingested, strict=True):
        if row.get("attempts"):
            objects += request_attempt_rows(entry.live.pk, row["attempts"])
    if objects:
        RequestAttempt.objects.bulk_create(objects, ignore_conflicts=True)
    return len(objects)


@transaction.atomic
def request_attempts_import(*, lines) -> dict:
    """Import a JSONL attempts file onto stored live queries (request_id = the query's external id).

    Every line is validated and every request id resolved before anything is stored; a bad
    line or an unknown request raises ValidationError and stores nothing. Re-importing the
    same file adds nothing. Returns {"requests": n, "attempts": m}.
    """
    by_request: dict[str, list[dict]] = {}
    for number, row in attempt_format.numbered_json_lines(lines, ValidationError):
        if not isinstance(row, dict):
            raise ValidationError(f"line {number}: expected a JSON object")
        request_id = row.get("request_id")
        if not isinstance(request_id, str | int) or isinstance(request_id, bool) or request_id == "":
            raise ValidationError(f"line {number}: request_id must be a non-empty string")
        serializer = AttemptInSerializer(data={k: v for k, v in row.items() if k != "request_id"})
        if not serializer.is_valid():
            raise ValidationError(f"line {number}: {json.dumps(serializer.errors)}")
        by_request.setdefault(str(request_id), []).append(dict(serializer.validated_data))
    lives = dict(
        LiveQuery.objects.filter(query__external_id__in=list(by_request)).values_list("query__external_id", "pk")
    )
    unknown = sorted(set(by_request) - set(lives))
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:10])
        raise ValidationError(f"{len(unknown)} request id(s) match no live query: {shown}; nothing was imported")
    objects = []
    for request_id, attempts in by_request.items():
        try:
            objects += request_attempt_rows(lives[request_id], numbered(attempts))
        except ValidationError as error:
            raise ValidationError(f"request {request_id!r}: {error.messages[0]}") from None
    RequestAttempt.objects.bulk_create(objects, ignore_conflicts=True)
    return {"requests": len(by_request), "attempts": len(objects)}
