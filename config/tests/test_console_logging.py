"""The console handler `make run` prints through: refusals without tracebacks, no secrets."""

import copy
import logging
import logging.config

from django.conf import settings


def test_the_console_drops_a_refusals_traceback_and_redacts_a_key(capsys, monkeypatch):
    monkeypatch.setattr(settings, "ANTHROPIC_API_KEY", "sk-ant-console-secret-0123")
    logging.config.dictConfig(copy.deepcopy(settings.LOGGING))
    logger = logging.getLogger("django.request")
    try:
        raise PermissionError("This page needs the role analyst.")
    except PermissionError:
        logger.warning("Forbidden (Permission denied): /triage/", exc_info=True, extra={"status_code": 403})
    logger.warning("calling with sk-ant-console-secret-0123")
    err = capsys.readouterr().err
    with capsys.disabled():  # leave the console handler on the real stderr for later tests
        logging.config.dictConfig(copy.deepcopy(settings.LOGGING))
    assert "Forbidden (Permission denied): /triage/" in err
    assert "Traceback" not in err
    assert "sk-ant-console-secret-0123" not in err and "[redacted]" in err


def test_a_refused_request_prints_one_line_not_two(capsys):
    logging.config.dictConfig(copy.deepcopy(settings.LOGGING))
    # What Django and runserver log for one refused GET (django/core/handlers and servers/basehttp).
    logging.getLogger("django.request").warning("Forbidden (Permission denied): /audit/", extra={"status_code": 403})
    logging.getLogger("django.server").warning('"GET /audit/ HTTP/1.1" 403 1234', extra={"status_code": 403})
    logging.getLogger("django.server").error('"GET /boom/ HTTP/1.1" 500 99', extra={"status_code": 500})
    err = capsys.readouterr().err
    with capsys.disabled():
        logging.config.dictConfig(copy.deepcopy(settings.LOGGING))
    assert err.count("/audit/") == 1 and "Forbidden (Permission denied): /audit/" in err
    assert '"GET /boom/ HTTP/1.1" 500' in err  # a server error keeps runserver's line
