"""Logging filters for a console a person reads."""

import logging


class NoClientErrorTracebacks(logging.Filter):
    """Keep the line of a 4xx response but drop its traceback.

    Django logs a refused request (PermissionDenied → 403, Http404) with the exception
    attached; the traceback says nothing the status line does not, and a page that checks
    permissions would print one per refusal. Server errors (5xx) keep theirs.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if status is not None and 400 <= status < 500 and record.exc_info:
            record.exc_info = None
            record.exc_text = None
        return True


class OneLinePerRefusal(logging.Filter):
    """Drop runserver's own line for a 4xx response: `django.request` has already said it.

    Without this, every refused request printed two WARNING lines on the `make run` console
    ("Forbidden (Permission denied): /x" and '"GET /x HTTP/1.1" 403'). Other responses keep
    runserver's line (at LOG_LEVEL=INFO), and so do server errors.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        return not (isinstance(status, int) and 400 <= status < 500)
