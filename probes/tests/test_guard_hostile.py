"""The hostile corpus against the guard alone: every text it must refuse, it refuses, naming why."""

import re

import pytest

from probes.guard import parse_sql
from probes.tests.hostile.corpus import CORPUS, FAMILIES, HostileSQL

MUST_REFUSE = [(entry, dialect) for entry in CORPUS if entry.guard_must_refuse for dialect in entry.dialects]
# Words a refusal may use to name what it refused, beyond a name taken from the text.
CONSTRUCTS = re.compile(
    r"U&|UESCAPE|quoted function name|backslash|escape string|dollar-quoted|nested block comment|"
    r"control character|UTF-8|"
    r"empty SQL text|unparseable|exactly one statement|only a query|is not allowed in a read-only probe|"
    r"WAREHOUSE_MAX_\w+"
)


def test_the_corpus_has_at_least_150_texts_in_every_family():
    assert len(CORPUS) >= 150
    assert len({entry.name for entry in CORPUS}) == len(CORPUS)
    assert {entry.family for entry in CORPUS} == set(FAMILIES)
    for entry in CORPUS:
        assert isinstance(entry, HostileSQL)
        assert entry.dialects and set(entry.dialects) <= {"sqlite", "postgres"}, entry.name


def test_the_corpus_carries_the_attacks_the_issue_names():
    texts = "\n".join(entry.sql for entry in CORPUS)
    for attack in (
        'U&"pg_terminate\\005fbackend"(pid)',
        "U&\"set\\005fconfig\"('role', 'none', true)",
        "pg_read_file",
        "pg_ls_dir",
        "lo_export",
        "lo_import",
        "pg_stat_reset",
        "pg_advisory_lock",
        "set_config",
        "ts_stat",
        "ts_rewrite",
        "query_to_xml",
        "dblink",
        "COPY",
        "randomblob",
        "zeroblob",
        "printf",
        "replace(",
        "pg_sleep",
        "generate_series",
    ):
        assert attack in texts, attack
    names = {entry.name for entry in CORPUS}
    assert {"cte-chain-900", "cte-chain-1500", "recursive-doubling-no-limit", "cross-join-rows"} <= names


@pytest.mark.parametrize(("entry", "dialect"), MUST_REFUSE, ids=lambda v: getattr(v, "name", v))
def test_the_guard_refuses_every_hostile_text_naming_why(entry, dialect):
    verdict = parse_sql(entry.sql, dialect).verdict
    assert not verdict.allowed, f"{entry.name} passed the guard on {dialect}"
    reason = verdict.reason
    if verdict.kind == "function":
        named = re.search(r"function ([\w.]+)\(\)|function name \"(\w+)\"", reason)
        assert named, reason
        name = (named.group(1) or named.group(2)).rsplit(".", 1)[-1]
        assert name in entry.sql.lower(), reason
    elif verdict.kind == "catalogue":
        relation = re.search(r"\(([\w.]+)\)", reason).group(1).split(".")[-1]
        assert relation.lower() in entry.sql.lower(), reason
    else:
        assert CONSTRUCTS.search(reason), reason
    if entry.family == "planning_bomb":
        assert "WAREHOUSE_MAX_" in reason, reason


@pytest.mark.parametrize(
    ("name", "dialect", "expected"),
    [
        ("u-amp-terminate-backend", "postgres", "U&"),
        ("u-amp-set-config-role", "postgres", "U&"),
        ("uescape-identifier", "postgres", "U&"),
        ("dollar-quoted", "postgres", "dollar-quoted"),
        ("nested-comment", "sqlite", "nested block comment"),
        ("nul-byte", "sqlite", "U+0000 (NUL)"),
        ("bidi-override", "postgres", "U+202E"),
        ("escape-string-quote", "postgres", "E'...' escape string"),
        ("terminate-backend", "postgres", "function pg_terminate_backend()"),
        ("quoted-function-name", "postgres", 'quoted function name "pg_terminate_backend"'),
        ("schema-qualified-sleep", "postgres", "schema-qualified function pg_catalog.pg_sleep()"),
        ("ts-stat", "postgres", "function ts_stat()"),
        ("ts-rewrite", "postgres", "function ts_rewrite()"),
        ("stat-activity", "postgres", "system catalogue (pg_stat_activity)"),
        ("qualified-class", "postgres", "system catalogue (pg_catalog.pg_class)"),
        ("sqlite-master", "sqlite", "system catalogue (sqlite_master)"),
        ("cte-chain-120", "postgres", "WAREHOUSE_MAX_SQL_CTES"),
        ("cte-chain-900", "postgres", "WAREHOUSE_MAX_SQL_NODES"),
        ("cte-chain-1500", "postgres", "WAREHOUSE_MAX_SQL_BYTES"),
        ("plus-chain-200kb", "postgres", "WAREHOUSE_MAX_SQL_BYTES"),
        ("joins-120", "sqlite", "WAREHOUSE_MAX_SQL_JOINS"),
        ("in-list-20000", "postgres", "WAREHOUSE_MAX_SQL_BYTES"),
        ("union-3000", "postgres", "WAREHOUSE_MAX_SQL_NODES"),
        ("nested-subqueries-300", "postgres", "WAREHOUSE_MAX_SQL_DEPTH"),
        ("recursive-forever", "sqlite", "WAREHOUSE_MAX_RECURSIVE_ROWS"),
        ("randomblob", "sqlite", "function randomblob()"),
        ("for-update", "postgres", "FOR UPDATE/SHARE"),
        ("delete-in-cte", "postgres", "DELETE is not allowed"),
        ("two-selects", "sqlite", "exactly one statement is allowed; found 2"),
    ],
)
def test_the_reason_names_the_construct(name, dialect, expected):
    entry = next(entry for entry in CORPUS if entry.name == name)
    assert expected in parse_sql(entry.sql, dialect).verdict.reason


BENIGN = [(entry, dialect) for entry in CORPUS if entry.must_run for dialect in entry.dialects]


@pytest.mark.parametrize(("entry", "dialect"), BENIGN, ids=lambda v: getattr(v, "name", v))
def test_benign_analytics_of_the_hostile_families_passes_the_guard(entry, dialect):
    verdict = parse_sql(entry.sql, dialect).verdict
    assert verdict.allowed, f"{entry.name} refused on {dialect}: {verdict.reason}"


@pytest.mark.parametrize(
    ("sql", "dialect", "expected"),
    [
        # An aggregate's value reaches a pattern function through a CTE column or a column list.
        (
            "WITH t AS (SELECT string_agg(status, '') AS s FROM orders) SELECT strpos(s, 'x') FROM t",
            "postgres",
            "strpos()/position()/instr() over the result of an aggregate",
        ),
        (
            "SELECT x.big LIKE '%a%' FROM (SELECT array_to_string(array_agg(status), '') FROM orders) AS x(big)",
            "postgres",
            "LIKE over the result of an aggregate",
        ),
        ("SELECT repeat('ab', order_id) FROM orders", "postgres", "repeat() needs a literal count"),
        ("SELECT lpad(status, order_id * 1000) FROM orders", "postgres", "lpad()/rpad() needs a literal length"),
        ("SELECT format(status, 1) FROM orders", "postgres", "format() needs a literal format string"),
        ("SELECT printf('%.*c', order_id, 'x') FROM orders", "sqlite", "printf() with a * width needs literal"),
        ("SELECT 'orders'::regclass", "postgres", "object-identifier type (regclass)"),
        ("SELECT o FROM orders o", "postgres", "whole-row reference to a table (o)"),
        ("SELECT o.row_to_json FROM orders o", "postgres", "(o.row_to_json) as row_to_json(o)"),
        ('SELECT "upper"/* hidden */(status) FROM orders', "postgres", 'quoted function name "upper"'),
        (
            "SELECT count(*) FROM orders GROUP BY CUBE (order_id, customer_id, status, total, order_date, 1, 2)",
            "postgres",
            "128 grouping sets",
        ),
        (
            "WITH RECURSIVE r(s) AS (SELECT 'x' UNION ALL SELECT replace(s, 'x', 'xx') FROM r) SELECT s FROM r",
            "postgres",
            "recursive CTE r grows s with replace()",
        ),
    ],
)
def test_what_grows_or_reaches_beyond_the_grant_is_refused_naming_why(sql, dialect, expected):
    verdict = parse_sql(sql, dialect).verdict
    assert not verdict.allowed and expected in verdict.reason, verdict.reason


def test_least_bounds_a_width_the_data_decides():
    assert parse_sql("SELECT repeat('#', least(order_id, 40)) FROM orders", "postgres").verdict.allowed
    refused = parse_sql("SELECT repeat('#', least(order_id, 40000)) FROM orders", "postgres").verdict
    assert "WAREHOUSE_MAX_SQL_WIDTH" in refused.reason
