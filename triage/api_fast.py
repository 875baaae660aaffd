"""The ingestion API's common case without the framework: one plain, valid query from a good token.

`POST /api/v1/queries` lands here first. A post this module can answer on its own — a bearer
token with the ingest scope, a small JSON object with the API's fields, each a plain value
within the serializer's limits, a known warehouse, no attempts — is stored by
`live_queries_ingest` and answered exactly as `triage/api.py` `QueryIngestView` answers it.
Anything else (a list, a refusal, an error to explain, attempts to store) goes to that view
unchanged, which owns every error message. Skipped on the common case: DRF's request and
response wrapping, content negotiation and the serializer, about half the post's CPU
(README, "Ingestion speed").
"""

import json
import re

from django.conf import settings
from django.http import JsonResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt

from probes.selectors import warehouse_map_by_name
from triage.api import MAX_JSON_DEPTH, QueryIngestView, _is_unstorable, _unstorable_text_at, json_depth
from triage.ingest import live_queries_ingest
from triage.tokens import api_token_authenticate

# Larger bodies go to the full view, which reads them in a stream, without Django's in-memory cap.
FAST_BODY_BYTES = 64 * 1024
TEXT_LIMITS = {"external_id": 200, "question": 20_000, "sql": 200_000}
SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")
DIALECTS = {"sqlite", "postgres"}
KNOWN_FIELDS = {*TEXT_LIMITS, "warehouse", "dialect", "metadata"}
full_view = QueryIngestView.as_view()


def _plain_text(value, limit: int) -> bool:
    """Say whether the serializer would keep this text as it is (a trimmed, non-empty, storable str)."""
    return isinstance(value, str) and 0 < len(value) <= limit and value == value.strip() and not _is_unstorable(value)


def _clean_row(payload) -> dict | None:
    """Return the row as the serializer would validate it, or None when only the serializer may judge it."""
    if not isinstance(payload, dict) or not payload.keys() <= KNOWN_FIELDS:
        return None
    if not all(_plain_text(payload.get(name), limit) for name, limit in TEXT_LIMITS.items()):
        return None
    warehouse, dialect, metadata = payload.get("warehouse"), payload.get("dialect"), payload.get("metadata", {})
    if not isinstance(warehouse, str) or not SLUG.fullmatch(warehouse):
        return None
    if "dialect" in payload and dialect not in DIALECTS:
        return None
    if not isinstance(metadata, dict) or json_depth(metadata) > MAX_JSON_DEPTH or _unstorable_text_at(metadata, "m"):
        return None
    row = {name: payload[name] for name in TEXT_LIMITS} | {"warehouse": warehouse, "metadata": metadata}
    return row | ({"dialect": dialect} if "dialect" in payload else {})


def _token(request):
    parts = request.headers.get("Authorization", "").split()
    if len(parts) != 2 or parts[0].lower() not in ("bearer", "token") or not parts[1].isascii():
        return None
    token = api_token_authenticate(plaintext=parts[1])
    return token if token is not None and token.has_scope(QueryIngestView.required_scope) else None


@csrf_exempt
def query_ingest(request):
    """Store one plain query from a good token here; hand every other request to `QueryIngestView`."""
    raw_length = request.META.get("CONTENT_LENGTH") or ""
    if (
        request.method != "POST"
        or request.content_type != "application/json"
        or not raw_length.isascii()
        or not raw_length.isdigit()
        or int(raw_length) > min(FAST_BODY_BYTES, settings.TRIAGE_API_MAX_BODY_BYTES)
    ):
        return full_view(request)
    token = _token(request)
    if token is None:
        return full_view(request)
    try:
        row = _clean_row(json.loads(request.body))
    except ValueError:  # not JSON, or nested past what the decoder follows: the full view explains
        row = None
    except RecursionError:
        row = None
    warehouses = warehouse_map_by_name(names=[row["warehouse"]]) if row else {}
    if row is None or row["warehouse"] not in warehouses:
        return full_view(request)  # reads the same body again: Django keeps it
    [entry] = live_queries_ingest(rows=[row], token=token, warehouses=warehouses)
    live = entry.live
    body = {
        "id": live.pk,
        "external_id": live.external_id,
        "status": live.status,
        "created": entry.created,
        "status_url": f"{request.build_absolute_uri(reverse('triage_api:query-ingest'))}/{live.pk}",
    }
    # DRF's JSON: compact, UTF-8 as it is.
    params = {"separators": (",", ":"), "ensure_ascii": False}
    return JsonResponse(body, status=202 if entry.created else 200, json_dumps_params=params)


# The schema generator documents the view a route names; this route's contract is QueryIngestView's.
query_ingest.cls = full_view.cls
query_ingest.initkwargs = full_view.initkwargs
