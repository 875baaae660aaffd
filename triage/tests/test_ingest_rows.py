"""The plain-Python row check agrees with QueryInSerializer: whatever it keeps, the serializer keeps the same."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from triage.api import QueryInSerializer
from triage.ingest_rows import MAX_JSON_DEPTH, is_unstorable, json_depth, row_clean

# Texts the serializer treats specially: padding, blanks, NUL, a lone surrogate, long ones.
TEXTS = st.one_of(
    st.text(min_size=0, max_size=12),
    st.sampled_from(["", " ", " padded ", "x\n", "\x00", "a\ud800b", "é ✓", "shop", "a" * 201]),
    st.integers(-3, 3),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.sampled_from(["\x00", "\udfff"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=8,
)
ATTEMPTS = st.lists(
    st.fixed_dictionaries(
        {"tier": st.sampled_from(["cheap", "big", "not a slug"])},
        optional={"failure_class": st.sampled_from(["", None, "syntax", "unknown_object", "nonsense"])},
    ),
    max_size=3,
)
ROWS = st.fixed_dictionaries(
    {},
    optional={
        "external_id": TEXTS,
        "question": TEXTS,
        "sql": TEXTS,
        "warehouse": st.one_of(TEXTS, st.sampled_from(["shop", "demo-1", "a" * 64, "a" * 65])),
        "dialect": st.one_of(st.sampled_from(["sqlite", "postgres", "oracle", ""]), TEXTS),
        "metadata": st.one_of(st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=3), JSON_VALUES),
        "attempts": st.one_of(ATTEMPTS, st.none(), st.text(max_size=3)),
        "unknown": st.just("field"),
    },
)
PLAIN = {"external_id": "q-1", "question": "How many?", "sql": "SELECT 1", "warehouse": "shop"}


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(row=st.one_of(ROWS, ROWS.map(lambda extra: PLAIN | extra), st.just(PLAIN)))
def test_a_row_the_check_keeps_is_kept_the_same_by_the_serializer(row):
    checked = row_clean(row)
    if checked is None:
        return  # the serializer decides and explains
    assert checked == validated(row)


def validated(row: dict) -> dict:
    serializer = QueryInSerializer(data=row)
    assert serializer.is_valid(), serializer.errors
    return dict(serializer.validated_data)


@pytest.mark.parametrize(
    "change",
    [
        {},
        {"dialect": "postgres"},
        {"metadata": {"generator": "bench", "n": [1, {"k": None}]}},
        {"attempts": [{"tier": "cheap", "failure_class": "syntax"}, {"tier": "cheap"}]},
    ],
)
def test_the_common_rows_are_decided_without_the_serializer(change):
    checked = row_clean(PLAIN | change)
    assert checked is not None and checked == validated(PLAIN | change)


def test_only_nul_and_lone_surrogates_are_unstorable():
    assert is_unstorable("a\x00") and is_unstorable("\ud83d") and is_unstorable("x\udc00")
    assert not is_unstorable("emoji 😀 and é") and not is_unstorable("")


def test_metadata_past_the_depth_limit_goes_to_the_serializer():
    deep: dict = {}
    node = deep
    for _ in range(MAX_JSON_DEPTH):
        node["k"] = {}
        node = node["k"]
    assert json_depth(deep) == MAX_JSON_DEPTH + 1
    assert row_clean(PLAIN | {"metadata": deep}) is None
    assert not QueryInSerializer(data=PLAIN | {"metadata": deep}).is_valid()
