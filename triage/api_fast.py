"""The ingestion API's common case without the framework: valid queries from a good token.

`POST /api/v1/queries` lands here first. A post this module can answer on its own — a bearer
token with the ingest scope, a JSON object or a list of at most MAX_BATCH objects, each row
passing `triage/ingest_rows.py` `row_clean` (the serializer's rules, nothing it would change)
and naming a known warehouse — is stored by `live_queries_ingest` (one statement for the whole
post on PostgreSQL), its attempts by `request_attempts_store`, and answered exactly as
`triage/api.py` `QueryIngestView` answers it. Anything else (a refusal, an error to explain,
a body past FAST_BODY_BYTES) goes to that view unchanged, which owns every error message.
Skipped on the common case: DRF's request and response wrapping, content negotiation and a
serializer per row, most of a post's CPU (README, "Ingestion speed").
"""

import json

from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt

from probes.selectors import warehouse_map_by_name
from triage.api import MAX_BATCH, QueryIngestView, ingest_answers
from triage.attempts import request_attempts_store
from triage.ingest import live_queries_ingest
from triage.ingest_rows import row_clean
from triage.tokens import api_token_authenticate

# Larger bodies go to the full view, which reads them in a stream, without Django's in-memory cap.
FAST_BODY_BYTES = 1024 * 1024
full_view = QueryIngestView.as_view()
# DRF's JSON: compact, UTF-8 as it is.
JSON_PARAMS = {"separators": (",", ":"), "ensure_ascii": False}


def _body_limit() -> int:
    limit = min(FAST_BODY_BYTES, settings.TRIAGE_API_MAX_BODY_BYTES)
    django_cap = settings.DATA_UPLOAD_MAX_MEMORY_SIZE  # reading past it raises; the full view streams instead
    return limit if django_cap is None else min(limit, django_cap)


def _token(request):
    parts = request.META.get("HTTP_AUTHORIZATION", "").split()
    if len(parts) != 2 or parts[0].lower() not in ("bearer", "token") or not parts[1].isascii():
        return None
    token = api_token_authenticate(plaintext=parts[1])
    return token if token is not None and token.has_scope(QueryIngestView.required_scope) else None


def _clean_rows(request) -> tuple[list[dict], dict, bool] | None:
    """Return (clean rows, their warehouses, whether one object was posted), or None for the full view."""
    try:
        payload = json.loads(request.body)
    except (ValueError, RecursionError):  # not JSON, or nested past what the decoder follows
        return None
    single = type(payload) is dict
    rows = [payload] if single else payload
    if type(rows) is not list or not 0 < len(rows) <= MAX_BATCH:
        return None
    clean = [row_clean(row) for row in rows]
    if None in clean:
        return None
    warehouses = warehouse_map_by_name(names={row["warehouse"] for row in clean})
    if any(row["warehouse"] not in warehouses for row in clean):
        return None
    return clean, warehouses, single


@csrf_exempt
def query_ingest(request):
    """Store valid queries from a good token here; hand every other request to `QueryIngestView`."""
    raw_length = request.META.get("CONTENT_LENGTH") or ""
    if (
        request.method != "POST"
        or request.content_type != "application/json"
        or not raw_length.isascii()
        or not raw_length.isdigit()
        or int(raw_length) > _body_limit()
    ):
        return full_view(request)
    token = _token(request)
    checked = _clean_rows(request) if token is not None else None
    if checked is None:
        return full_view(request)  # reads the same body again: Django keeps it
    clean, warehouses, single = checked
    ingested = live_queries_ingest(rows=clean, token=token, warehouses=warehouses)
    request_attempts_store(rows=clean, ingested=ingested)
    accepted = ingest_answers(request, ingested)
    if single:
        status = 202 if accepted[0]["created"] else 200
        return JsonResponse(accepted[0], status=status, json_dumps_params=JSON_PARAMS)
    return JsonResponse(accepted, status=202, safe=False, json_dumps_params=JSON_PARAMS)


# The schema generator documents the view a route names; this route's contract is QueryIngestView's.
query_ingest.cls = full_view.cls
query_ingest.initkwargs = full_view.initkwargs
