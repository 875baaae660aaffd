"""Store recorded generation attempts: those triage's ingestion hands over, and an imported JSONL file.

Triage validates the attempts posted with each live query (`triage/attempts.py`) and calls
`request_attempts_store`, which hands them to the store registered there: this module's
`request_attempts_bulk_store`, registered by `loops/apps.py` at start-up. It runs in the
caller's thread and transaction, so the attempts are stored with their queries or not at all.
"""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.db import transaction

from loops.models import RequestAttempt
from triage import attempt_format
from triage.attempts import AttemptInSerializer, numbered
from triage.models import LiveQuery


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


def request_attempts_bulk_store(batches: list[tuple[int, list[dict]]]) -> int:
    """Store each (live query id, its numbered attempts); a re-post adds nothing twice. Return the rows offered."""
    objects = [row for live_query_id, attempts in batches for row in request_attempt_rows(live_query_id, attempts)]
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
    batches = []
    for request_id, attempts in by_request.items():
        try:
            batches.append((lives[request_id], numbered(attempts)))
        except ValidationError as error:
            raise ValidationError(f"request {request_id!r}: {error.messages[0]}") from None
    return {"requests": len(by_request), "attempts": request_attempts_bulk_store(batches)}
