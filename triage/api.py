"""The ingestion REST API: token authentication, scopes, serializers and the two endpoints."""

import copy
import functools
import io
import threading

from django.conf import settings
from django.db.models import Prefetch
from django.shortcuts import render
from django.urls import get_script_prefix, get_urlconf, reverse
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.utils import OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, NotFound, ParseError
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from judges.models import Verdict
from probes.selectors import warehouse_map_by_name
from triage.api_try import try_query_warehouses
from triage.attempts import AttemptListField, request_attempts_store
from triage.ingest import live_queries_ingest
from triage.ingest_rows import MAX_JSON_DEPTH, json_depth, row_clean, unstorable_text_at
from triage.models import ApiToken, LiveQuery
from triage.tokens import api_token_authenticate

MAX_BATCH = 500
MAX_ID = 2**63 - 1  # the largest big-integer primary key


class BoundedJSONParser(JSONParser):
    """JSON nested deeper than the decoder can follow is a 400 with a message, never a crash.

    Shallower nesting can only sit in `metadata` (every other field is a string), which
    the serializer holds to MAX_JSON_DEPTH.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        body = stream.read()
        try:
            return super().parse(io.BytesIO(body), media_type, parser_context)
        except RecursionError:
            pass
        # The decoder recurses once per level, and this request's own call stack (every
        # middleware adds to it) counts against the same limit: a thread of its own decodes
        # with the whole budget, so how deep a body may nest does not depend on the stack.
        decoded = {}

        def decode():
            try:
                decoded["value"] = JSONParser.parse(self, io.BytesIO(body), media_type, parser_context)
            except (RecursionError, ParseError) as exc:
                decoded["error"] = exc

        thread = threading.Thread(target=decode, name="json-decode")
        thread.start()
        thread.join()
        if "value" in decoded:
            return decoded["value"]
        if isinstance(decoded.get("error"), ParseError):
            raise decoded["error"]
        raise ParseError(f"JSON nested too deeply to read; metadata may nest at most {MAX_JSON_DEPTH} levels.")


def content_length(request) -> int | None:
    """Return the request's Content-Length (0 when absent), or None when it is not a byte count."""
    raw = request.META.get("CONTENT_LENGTH") or "0"
    return int(raw) if raw.isascii() and raw.isdigit() else None


class TokenClient:
    """The API caller: a client holding a token, not a person with a session."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, token: ApiToken):
        self.token = token
        self.client = token.client

    def __str__(self):
        return f"api client {self.client}"


class ApiTokenAuthentication(BaseAuthentication):
    """`Authorization: Bearer <token>` against the hashed tokens; revoked tokens fail."""

    keyword = "Bearer"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts:
            return None
        if not all(part.isascii() for part in parts):
            # Tokens are ASCII; bytes that are not (latin-1 from a proxy, say) can name none.
            raise AuthenticationFailed("Authorization header must be ASCII: 'Bearer <token>'.")
        if parts[0].decode().lower() not in ("bearer", "token"):
            return None
        if len(parts) != 2:
            raise AuthenticationFailed("Authorization header must be 'Bearer <token>'.")
        token = api_token_authenticate(plaintext=parts[1].decode())
        if token is None:
            raise AuthenticationFailed("Invalid or revoked token.")
        return TokenClient(token), token

    def authenticate_header(self, request):
        return self.keyword


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = ApiTokenAuthentication
    name = "ApiToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "An API token issued by an admin."}


class HasScope(BasePermission):
    """Admit a token holding the view's `required_scope`."""

    message = "This token lacks the scope this endpoint needs."

    def has_permission(self, request, view):
        token = request.auth if isinstance(request.auth, ApiToken) else None
        return token is not None and token.has_scope(view.required_scope)


class QueryInSerializer(serializers.Serializer):
    external_id = serializers.CharField(max_length=200)
    question = serializers.CharField(max_length=20_000)
    sql = serializers.CharField(max_length=200_000)
    warehouse = serializers.SlugField(max_length=64)
    dialect = serializers.ChoiceField(choices=["sqlite", "postgres"], required=False)
    metadata = serializers.DictField(required=False, default=dict)
    attempts = AttemptListField()  # optional: the generation attempts behind this SQL (the loop lab)

    def get_fields(self):
        # DRF deep-copies the declared fields for every serializer, and the ingestion API
        # makes one per posted query: a tenth of a post's CPU. A shallow copy suffices, as
        # binding sets attributes on the copy and nothing changes a field's validators.
        return {name: copy.copy(field) for name, field in self._declared_fields.items()}

    def validate_metadata(self, value):
        """Refuse nesting past MAX_JSON_DEPTH, and text a database cannot store (NUL, lone surrogates)."""
        if json_depth(value) > MAX_JSON_DEPTH:
            raise serializers.ValidationError(f"metadata nests more than {MAX_JSON_DEPTH} levels deep.")
        bad = unstorable_text_at(value, "metadata")
        if bad:
            raise serializers.ValidationError(f"{bad} holds a NUL or lone surrogate character, which cannot be stored.")
        return value


class AcceptedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()
    status = serializers.CharField()
    created = serializers.BooleanField(help_text="False when this external_id was already stored.")
    status_url = serializers.URLField()


class QueryStatusSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    external_id = serializers.CharField()
    status = serializers.CharField()
    created_at = serializers.DateTimeField()
    policy_version = serializers.IntegerField(allow_null=True)
    verifier = serializers.DictField()
    verdicts = serializers.ListField(child=serializers.DictField())
    probes = serializers.ListField(child=serializers.DictField())
    triage = serializers.DictField(allow_null=True)
    audited = serializers.BooleanField()


def query_row_validate(row: dict) -> tuple[dict | None, dict | None]:
    """Return (the clean row, None) or (None, the serializer's field errors) for one posted row.

    The plain-Python check decides the common row (`triage/ingest_rows.py`); the serializer
    judges only the rows it cannot, and writes every error message.
    """
    checked = row_clean(row)
    if checked is not None:
        return checked, None
    serializer = QueryInSerializer(data=row)
    if serializer.is_valid():
        return dict(serializer.validated_data), None
    return None, serializer.errors


def _field_errors(rows) -> tuple[list[dict], dict, dict]:
    """Validate each row; return the clean rows, errors keyed by row index, and the warehouses."""
    clean, errors = [], {}
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            errors[str(index)] = {"non_field_errors": ["Each item must be a JSON object."]}
            continue
        checked, row_errors = query_row_validate(row)
        if row_errors:
            errors[str(index)] = row_errors
        else:
            clean.append(checked)
    known = warehouse_map_by_name(names=(r["warehouse"] for r in clean))
    for index, row in enumerate(rows):
        if isinstance(row, dict) and str(index) not in errors and row.get("warehouse") not in known:
            errors[str(index)] = {"warehouse": [f"Unknown warehouse {row.get('warehouse')!r}."]}
    return clean, errors, known


@functools.cache
def _collection_path(script_prefix: str, urlconf) -> str:
    """The ingestion endpoint's path: reversed once per mount point and URLconf, not once per post."""
    return reverse("triage_api:query-ingest")


def ingest_answers(request, ingested) -> list[dict]:
    """Describe each ingested query as `AcceptedSerializer` does, in the order posted."""
    # One URL built per post, not per query: a status URL is the collection's plus "/<id>".
    status_base = request.build_absolute_uri(_collection_path(get_script_prefix(), get_urlconf()))
    return [
        {
            "id": entry.live.pk,
            "external_id": entry.live.external_id,
            "status": entry.live.status,
            "created": entry.created,
            "status_url": f"{status_base}/{entry.live.pk}",
        }
        for entry in ingested
    ]


def one_or_many(name, serializer_class):
    """Document a body that is one object or a list of them, as the ingest endpoint takes and gives."""
    return PolymorphicProxySerializer(
        component_name=name,
        serializers=[serializer_class, serializer_class(many=True)],
        resource_type_field_name=None,
        many=False,
    )


# Every token-guarded endpoint can refuse the caller; the schema says so.
AUTH_RESPONSES = {
    401: OpenApiResponse(description="Missing, invalid or revoked token."),
    403: OpenApiResponse(description="The token lacks the scope this endpoint needs."),
}


class QueryIngestView(APIView):
    authentication_classes = [ApiTokenAuthentication]
    permission_classes = [HasScope]
    # The API speaks JSON only: a form-encoded body cannot carry a list of queries.
    parser_classes = [BoundedJSONParser]
    required_scope = "ingest"

    @extend_schema(
        request=one_or_many("QueryInOneOrMany", QueryInSerializer),
        responses={
            202: OpenApiResponse(
                one_or_many("AcceptedOneOrMany", AcceptedSerializer),
                description="Stored and queued for judging (at least one query was new).",
            ),
            200: OpenApiResponse(
                AcceptedSerializer, description="Already stored: every external_id was seen before (idempotent)."
            ),
            400: OpenApiResponse(description="Field errors, keyed by item index for a list."),
            413: OpenApiResponse(description="Body too large."),
            **AUTH_RESPONSES,
        },
        description=f"Submit one live query (an object) or up to {MAX_BATCH} (a list). Idempotent on external_id.",
    )
    def post(self, request):
        length = content_length(request)
        if length is None:
            return Response({"detail": "Content-Length must be a whole number of bytes."}, status=400)
        if length > settings.TRIAGE_API_MAX_BODY_BYTES:
            return Response(
                {"detail": f"Body of {length} bytes exceeds {settings.TRIAGE_API_MAX_BODY_BYTES}."},
                status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            )
        payload = request.data
        single = isinstance(payload, dict)
        rows = [payload] if single else payload
        if not isinstance(rows, list) or not rows:
            return Response({"detail": "Send a JSON object or a non-empty list of objects."}, status=400)
        if len(rows) > MAX_BATCH:
            return Response({"detail": f"At most {MAX_BATCH} queries per request; got {len(rows)}."}, status=400)
        clean, errors, warehouses = _field_errors(rows)
        if errors:
            body = errors["0"] if single else {"items": errors}
            return Response({"detail": "Validation failed; nothing was stored.", "errors": body}, status=400)
        ingested = live_queries_ingest(rows=clean, token=request.auth, warehouses=warehouses)
        request_attempts_store(rows=clean, ingested=ingested)
        accepted = ingest_answers(request, ingested)
        if single:
            return Response(accepted[0], status=202 if accepted[0]["created"] else 200)
        return Response(accepted, status=202)


def live_query_status(live: LiveQuery) -> dict:
    """Describe a live query for its client: status, verdicts, probes and resolution."""
    item = getattr(live.query, "triage_item", None)
    triage = None
    if item is not None:
        triage = {
            "status": item.status,
            "resolution": item.resolution or None,
            "error_class": item.resolution_error_class or None,
            "resolved_at": item.resolved_at,
            "flagged_because": item.flagged_because,
        }
    return {
        "id": live.pk,
        "external_id": live.query.external_id,
        "status": live.status,
        "created_at": live.created_at,
        "policy_version": live.policy.version if live.policy else None,
        "verifier": live.verifier_result,
        "verdicts": [
            {
                "judge": str(v.judge_version),
                "judge_version_id": v.judge_version_id,
                "decision": v.decision,
                "reason": v.reason,
                "error_class_guess": v.error_class_guess,
                "model_reported": v.model_reported,
            }
            for v in live.query.verdicts.all()
            if v.run_id is None
        ],
        "probes": [
            {
                "source": p.source,
                "outcome": p.probe_run.outcome,
                "message": p.probe_run.message,
                "probe_sql": p.probe_run.probe_sql,
                "figures": p.probe_run.figures,
            }
            for p in live.probes.all()
        ],
        "triage": triage,
        "audited": live.audit_query_id is not None,
    }


class QueryStatusView(APIView):
    authentication_classes = [ApiTokenAuthentication]
    permission_classes = [HasScope]
    required_scope = "read"

    @extend_schema(
        responses={200: QueryStatusSerializer, 404: OpenApiResponse(description="Unknown id."), **AUTH_RESPONSES}
    )
    def get(self, request, pk: int):
        if not 0 < pk <= MAX_ID:
            # The URL takes any digits; an id no database column can hold names no query.
            raise NotFound("No such query for this client.")
        live = (
            LiveQuery.objects.select_related("query__triage_item", "policy")
            .prefetch_related(
                Prefetch("query__verdicts", queryset=Verdict.objects.select_related("judge_version__judge")),
                "probes__probe_run",
            )
            .filter(pk=pk, client=request.auth.client)
            .first()
        )
        if live is None:
            # Another client's query is as invisible as a missing one.
            raise NotFound("No such query for this client.")
        return Response(live_query_status(live))


def api_docs(request):
    """Render the OpenAPI schema as a plain page; no CDN, no JavaScript."""
    schema = SchemaGenerator(patterns=None).get_schema(request=None, public=True)
    operations = [
        {"path": path, "method": method.upper(), **op}
        for path, methods in schema.get("paths", {}).items()
        for method, op in methods.items()
    ]
    context = {
        "schema": schema,
        "operations": operations,
        "ingest_url": request.build_absolute_uri(reverse("triage_api:query-ingest")),
        **(try_query_warehouses() if request.user.is_authenticated else {}),
    }
    return render(request, "triage/api_docs.html", context)
