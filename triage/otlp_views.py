"""`POST /v1/traces`: OTLP/HTTP trace export, authenticated with the ingestion API's tokens.

The view does HTTP only: the token and its `ingest` scope (the API's own authentication and
permission classes), the body's size, encoding and compression, then one service call
(`triage.otlp_ingest.otlp_export_ingest`). Every answer is in the request's encoding: an
`ExportTraceServiceResponse`, or a `google.rpc.Status` for an error.
"""

import logging

from django.conf import settings
from django.db import InterfaceError, OperationalError
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.renderers import JSONRenderer
from rest_framework.views import APIView

from triage.api import ApiTokenAuthentication, HasScope, TokenClient, content_length
from triage.otlp_codec import (
    JSON,
    OtlpRequestError,
    decompressed,
    export_decode,
    export_response,
    request_encoding,
    status_response,
)
from triage.otlp_ingest import otlp_export_ingest
from triage.tokens import api_token_authenticate

logger = logging.getLogger(__name__)
# An exporter retries a 503 (never a 500) after this many seconds: a database that went away
# for a moment loses no span.
UNAVAILABLE_RETRY_AFTER_S = 5


class OtlpTokenAuthentication(ApiTokenAuthentication):
    """The API's `Authorization: Bearer <token>`, or the same token in an `x-docket-token` header.

    The header form is easier to give an exporter (`OTEL_EXPORTER_OTLP_HEADERS=x-docket-token=...`
    needs no encoded space).
    """

    def authenticate(self, request):
        found = super().authenticate(request)
        plaintext = request.META.get("HTTP_X_DOCKET_TOKEN")
        if found is not None or plaintext is None:
            return found
        token = api_token_authenticate(plaintext=plaintext.strip())
        if token is None:
            raise AuthenticationFailed("Invalid or revoked token.")
        return TokenClient(token), token


def _encoding_of(request) -> str:
    """The encoding to answer in: the request's, or JSON when it has none this endpoint reads."""
    try:
        return request_encoding(request.content_type)
    except OtlpRequestError:
        return JSON


@extend_schema(exclude=True)  # OTLP's own specification describes this endpoint, not the API's schema
class OtlpTracesView(APIView):
    authentication_classes = [OtlpTokenAuthentication]
    permission_classes = [HasScope]
    parser_classes = []  # the body is read as bytes: protobuf or OTLP/JSON, perhaps compressed
    required_scope = "ingest"

    def perform_content_negotiation(self, request, force=False):
        # Every answer is written in the request's own encoding, whatever Accept says.
        return JSONRenderer(), JSON

    def post(self, request):
        encoding = request_encoding(request.content_type)
        limit = settings.TRIAGE_API_MAX_BODY_BYTES
        length = content_length(request)
        if length is None:
            raise OtlpRequestError(400, "Content-Length must be a whole number of bytes.")
        if length > limit:
            raise OtlpRequestError(413, f"Body of {length} bytes exceeds {limit}.")
        body = request.stream.read(limit + 1) if request.stream is not None else b""
        body = decompressed(body, request.META.get("HTTP_CONTENT_ENCODING", ""), limit)
        export = export_decode(body, encoding)
        try:
            result = otlp_export_ingest(export=export, token=request.auth)
        except (OperationalError, InterfaceError) as error:
            logger.warning("otlp: the database failed during an export (%s); answering 503", error)
            raise OtlpRequestError(503, "The database is unavailable; retry.", UNAVAILABLE_RETRY_AFTER_S) from error
        return export_response(rejected=result.rejected, message=result.message(), encoding=encoding)

    def handle_exception(self, exc):
        """Answer every refusal (401, 403, 400, 413, 415...) as a google.rpc.Status, keeping its headers."""
        response = super().handle_exception(exc)
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else response.data
        answer = status_response(status=response.status_code, message=str(detail), encoding=_encoding_of(self.request))
        for header in ("WWW-Authenticate", "Retry-After", "Allow"):
            if header in response:
                answer[header] = response[header]
        if getattr(exc, "retry_after", None):
            answer["Retry-After"] = str(exc.retry_after)
        return answer
