"""Secrets, defence in depth: never in a repr, redacted in stored prefixes, key files 0600 from
the first byte, and a redaction filter that reads its secrets once and again when they change."""

import io
import json
import logging
import os
import stat

import pytest

from config import private_files
from config.local_state import local_state_prepare
from config.management.commands.seed_demo import demo_password
from judges.backends.vendors import Endpoint, anthropic_endpoint
from judges.models import PromptPrefix
from judges.services import judge_live_query
from judges.tests.factories import simulated_version
from judges.vendor_access import SECRETS, RedactSecretsFilter
from labelling.models import Query
from probes.defog import SqliteLoad
from probes.warehouses import write_secrets_file

FAKE_KEY = "sk-ant-api03-not-a-real-key-but-long-enough-0123456789"
WAREHOUSE_DSN = "postgresql://reader:pass-for-the-warehouse-77@10.0.0.9:5432/shop"


@pytest.fixture
def creation_modes(monkeypatch):
    """Record the mode of every file os.open creates, at creation, before a byte is written."""
    modes = {}
    real_open = os.open

    def open_and_note(path, flags, mode=0o777, *args, **kwargs):
        descriptor = real_open(path, flags, mode, *args, **kwargs)
        if flags & os.O_CREAT:
            modes[str(path)] = stat.S_IMODE(os.fstat(descriptor).st_mode)
        return descriptor

    monkeypatch.setattr(private_files.os, "open", open_and_note)
    return modes


@pytest.fixture
def permissive_umask():
    previous = os.umask(0)  # the worst case: nothing masked
    yield
    os.umask(previous)


def assert_private(path, creation_modes):
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert creation_modes, "the file was created through os.open with its mode"
    assert all(mode & 0o077 == 0 for mode in creation_modes.values()), creation_modes
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")], "no partial file is left"


def test_the_secret_key_file_is_private_from_its_first_byte(tmp_path, monkeypatch, permissive_umask, creation_modes):
    monkeypatch.setenv("DOCKET_VAR_DIR", str(tmp_path))
    monkeypatch.delenv("SECRET_KEY", raising=False)
    local_state_prepare()
    key_file = tmp_path / "secret_key"
    assert len(key_file.read_text()) >= 50
    assert_private(key_file, creation_modes)
    first = key_file.read_text()
    local_state_prepare()
    assert key_file.read_text() == first, "an existing key is never replaced"


def test_the_warehouses_file_is_private_from_its_first_byte(tmp_path, permissive_umask, creation_modes):
    path = tmp_path / "warehouses.json"
    write_secrets_file(path, {"shop": WAREHOUSE_DSN})
    assert json.loads(path.read_text()) == {"shop": WAREHOUSE_DSN}
    assert_private(path, creation_modes)


def test_the_demo_password_file_is_private_from_its_first_byte(
    tmp_path, settings, monkeypatch, permissive_umask, creation_modes
):
    monkeypatch.delenv("DOCKET_DEMO_PASSWORD", raising=False)
    settings.VAR_DIR = tmp_path
    password = demo_password()
    assert password == (tmp_path / "demo_password").read_text()
    assert_private(tmp_path / "demo_password", creation_modes)


def test_a_vendor_endpoint_never_shows_its_key_in_a_repr(settings):
    settings.ANTHROPIC_API_KEY = FAKE_KEY
    endpoint = anthropic_endpoint({})
    assert endpoint.api_key == FAKE_KEY
    assert FAKE_KEY not in repr(endpoint) and FAKE_KEY not in str(endpoint)
    assert "api_key" not in repr(Endpoint("https://api.example", FAKE_KEY, False))
    assert WAREHOUSE_DSN not in repr(SqliteLoad(WAREHOUSE_DSN, 1, []))


@pytest.mark.django_db
def test_a_stored_request_prefix_is_redacted(vendor_simulator, monkeypatch, settings):
    monkeypatch.setenv("WAREHOUSE_SHOP_URL", WAREHOUSE_DSN)
    version = simulated_version(name="leaky-template")
    version.prompt_template = f"Judge the SQL. (Someone pasted {WAREHOUSE_DSN} here by mistake.)"
    version.save()
    query = Query.objects.create(question="How many?", sql="SELECT COUNT(*) FROM orders", external_id="p-1")
    verdict = judge_live_query(judge_version=version, query=query)
    assert verdict.decision in ("accept", "reject"), verdict.reason
    body = json.dumps(PromptPrefix.objects.get(pk=verdict.prompt_prefix_id).body)
    assert WAREHOUSE_DSN not in body and "pass-for-the-warehouse-77" not in body
    assert "[redacted]" in body


def console_handler_with_redaction() -> logging.Handler:
    handler = logging.StreamHandler(io.StringIO())
    handler.addFilter(RedactSecretsFilter())
    return handler


def emit(handler: logging.Handler, text: str) -> str:
    handler.stream.seek(0)
    handler.stream.truncate()
    handler.handle(logging.LogRecord("t", logging.WARNING, __file__, 1, "%s", (text,), None))
    return handler.stream.getvalue()


def test_the_redaction_filter_reads_its_secrets_once_and_again_when_they_change(monkeypatch, settings, tmp_path):
    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    monkeypatch.setenv("WAREHOUSE_SHOP_URL", WAREHOUSE_DSN)
    handler = console_handler_with_redaction()
    assert WAREHOUSE_DSN not in emit(handler, f"connect to {WAREHOUSE_DSN}")
    reads = SECRETS.reads
    for number in range(200):
        assert "[redacted]" in emit(handler, f"line {number}: {WAREHOUSE_DSN}")
    assert SECRETS.reads == reads, "200 log lines, no change: the secrets were not read again"

    other_key = "sk-proj-a-second-key-set-while-running-42"
    monkeypatch.setenv("OPENAI_API_KEY", other_key)
    assert other_key not in emit(handler, f"key {other_key}")
    assert SECRETS.reads == reads + 1, "the environment changed: read once more"

    file_dsn = "postgresql://filer:file-only-password-99@db.internal:5432/ops"
    write_secrets_file(settings.WAREHOUSES_FILE, {"ops": file_dsn})
    line = emit(handler, f"dsn {file_dsn}")
    assert file_dsn not in line and "file-only-password-99" not in line
    assert SECRETS.reads == reads + 2, "the warehouses file changed: read once more"
    emit(handler, "nothing secret")
    assert SECRETS.reads == reads + 2
