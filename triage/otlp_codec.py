"""OTLP/HTTP encodings: read an export request (protobuf or JSON, gzip or deflate) and write the answer.

Per the OTLP/HTTP specification: the answer is in the request's encoding; an export answers
`ExportTraceServiceResponse`, with `partial_success` when spans were rejected (or there is a
warning), and an error answers `google.rpc.Status`. OTLP/JSON differs from protobuf's JSON
mapping in one way that matters here: trace and span ids are hex, not base64.
"""

import base64
import json
import re
import zlib

from django.http import HttpResponse
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from rest_framework.exceptions import APIException

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
HEX_ID = re.compile(r"(?:[0-9a-fA-F]{16}){1,2}")
ID_FIELDS = ("traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id")
# The gRPC code an OTLP error body carries for each HTTP status this endpoint answers with.
GRPC_CODES = {
    400: code_pb2.INVALID_ARGUMENT,
    401: code_pb2.UNAUTHENTICATED,
    403: code_pb2.PERMISSION_DENIED,
    405: code_pb2.UNIMPLEMENTED,
    413: code_pb2.RESOURCE_EXHAUSTED,
    415: code_pb2.INVALID_ARGUMENT,
    429: code_pb2.RESOURCE_EXHAUSTED,
    503: code_pb2.UNAVAILABLE,
}


class OtlpRequestError(APIException):
    """A request the endpoint refuses with `status_code` (400, 413, 415); the message says why."""

    def __init__(self, status_code: int, message: str, retry_after: int | None = None):
        self.status_code = status_code
        self.retry_after = retry_after
        super().__init__(message)


def request_encoding(content_type: str) -> str:
    """Return PROTOBUF or JSON for the request's Content-Type; refuse any other with 415."""
    media_type = (content_type or "").partition(";")[0].strip().lower()
    if media_type == "application/protobuf":
        return PROTOBUF  # the IANA name some exporters send for the same encoding
    if media_type not in (PROTOBUF, JSON):
        raise OtlpRequestError(415, f"Send {PROTOBUF} or {JSON}, not {media_type or 'no Content-Type'}.")
    return media_type


def decompressed(body: bytes, content_encoding: str, limit: int) -> bytes:
    """Undo gzip or deflate, refusing (413) a body that expands past `limit` bytes."""
    coding = (content_encoding or "identity").strip().lower()
    if coding == "identity":
        return body
    if coding not in ("gzip", "deflate"):
        raise OtlpRequestError(415, f"Content-Encoding {coding!r} is not supported; use gzip, deflate or none.")
    decoder = zlib.decompressobj(wbits=47)  # 32 + 15: a gzip or a zlib header, either
    try:
        data = decoder.decompress(body, limit + 1)
    except zlib.error as error:
        raise OtlpRequestError(400, f"The {coding} body could not be decompressed: {error}.") from None
    if len(data) > limit:
        raise OtlpRequestError(413, f"The decompressed body exceeds {limit} bytes.")
    if not decoder.eof:
        raise OtlpRequestError(400, f"The {coding} body is truncated.")
    return data


def _hex_ids_to_base64(item: dict) -> None:
    """Rewrite an OTLP/JSON span's (or link's) hex ids as the base64 protobuf's JSON parser reads."""
    for name in ID_FIELDS:
        value = item.get(name)
        if isinstance(value, str) and HEX_ID.fullmatch(value):
            item[name] = base64.b64encode(bytes.fromhex(value)).decode()


def _json_export(data) -> ExportTraceServiceRequest:
    for resource_spans in data.get("resourceSpans") or data.get("resource_spans") or []:
        for scope_spans in resource_spans.get("scopeSpans") or resource_spans.get("scope_spans") or []:
            for span in scope_spans.get("spans") or []:
                _hex_ids_to_base64(span)
                for link in span.get("links") or []:
                    _hex_ids_to_base64(link)
    return json_format.ParseDict(data, ExportTraceServiceRequest(), ignore_unknown_fields=True)


def export_decode(body: bytes, encoding: str) -> ExportTraceServiceRequest:
    """Decode an export request; a body that is not one is a 400."""
    try:
        if encoding == PROTOBUF:
            return ExportTraceServiceRequest.FromString(body)
        data = json.loads(body)
        if not isinstance(data, dict):
            raise ValueError("the body is not a JSON object")
        return _json_export(data)
    except (DecodeError, json_format.ParseError, ValueError, TypeError, AttributeError, RecursionError) as error:
        raise OtlpRequestError(400, f"Not an OTLP ExportTraceServiceRequest: {error}") from None


def export_response(*, rejected: int, message: str, encoding: str) -> HttpResponse:
    """Answer an export: partial success when spans were rejected or `message` warns, else empty."""
    if encoding == PROTOBUF:
        answer = ExportTraceServiceResponse()
        if rejected or message:
            answer.partial_success.rejected_spans = rejected
            answer.partial_success.error_message = message
        return HttpResponse(answer.SerializeToString(), content_type=PROTOBUF)
    body = {"partialSuccess": {"rejectedSpans": rejected, "errorMessage": message}} if rejected or message else {}
    return HttpResponse(json.dumps(body), content_type=JSON)


def status_response(*, status: int, message: str, encoding: str) -> HttpResponse:
    """Answer an error as a google.rpc.Status in the request's encoding (JSON if it had none we read)."""
    answer = status_pb2.Status(code=GRPC_CODES.get(status, code_pb2.INTERNAL), message=message)
    if encoding == PROTOBUF:
        return HttpResponse(answer.SerializeToString(), status=status, content_type=PROTOBUF)
    return HttpResponse(json_format.MessageToJson(answer), status=status, content_type=JSON)
