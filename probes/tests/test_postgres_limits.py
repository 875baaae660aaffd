"""The cost settings a PostgreSQL reader role must carry, read the way PostgreSQL reads them."""

import pytest

from probes.postgres_limits import parse_setting, role_setting_findings, role_values, session_options


@pytest.mark.parametrize(
    ("raw", "kind", "expected"),
    [
        ("4MB", "memory", 4096),
        ("4096", "memory", 4096),
        ("256MB", "memory", 262_144),
        ("1GB", "memory", 1_048_576),
        ("-1", "memory", -1),
        ("30s", "time", 30_000),
        ("1min", "time", 60_000),
        ("500", "time", 500),
        ("1", "number", 1.0),
        ("off", "off", 0),
        ("on", "off", 1),
        ("lots", "memory", None),
    ],
)
def test_a_setting_is_read_in_its_base_unit(raw, kind, expected):
    assert parse_setting(raw, kind) == expected


def test_the_values_docket_gives_a_reader_pass_its_own_check():
    assert role_setting_findings(dict(role_values())) == []


def test_each_missing_or_larger_setting_is_named():
    values = dict(role_values()) | {"work_mem": "64MB", "temp_file_limit": "-1", "jit": "on"}
    del values["statement_timeout"]
    findings = role_setting_findings(values)
    assert findings[0].startswith("has no statement_timeout of its own")
    assert "has temp_file_limit = -1, more than WAREHOUSE_PG_TEMP_FILE_LIMIT_KB allows" in findings
    assert "has work_mem = 64MB, more than WAREHOUSE_PG_WORK_MEM_KB allows" in findings
    assert "has jit = on; set jit = off" in findings


def test_every_session_turns_jit_and_parallel_workers_off():
    options = session_options()
    assert "-c jit=off" in options and "-c max_parallel_workers_per_gather=0" in options
