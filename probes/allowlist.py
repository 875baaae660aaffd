"""The functions model-written SQL may call: an allow-list per dialect, by family.

The guard admits a function call only if it is named here (issue 13): what an analytical
query uses — aggregates, window functions, arithmetic, string, date/time, conditional and
casts — and nothing that sleeps, locks, reads files, changes settings, touches sequences
or large objects, reaches the network or runs SQL held in a string. Anything not listed is
refused with its name; adding a function is a reviewed change to this module (and to the
family's test in `probes/tests/test_guard_allowlist.py`).

The lists are SQL names as an analyst writes them. sqlglot reads many of them into typed
nodes (`to_char(...)` becomes `TimeToStr`); `allowed_functions(dialect)` derives, once per
dialect, which sqlglot node types and which unknown ("anonymous") names the listed names
parse to, and the guard checks nodes against that. `SYNTAX_NODES` lists the typed nodes
that come from SQL syntax rather than a function name (CASE, CAST, `::`, `~`, `->`, AND).
"""

import functools
import inspect
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError

_COMMON_AGGREGATES = "avg count sum min max"
_COMMON_WINDOWS = "row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value"
_COMMON_MATH = (
    "abs ceil ceiling floor round trunc sign sqrt exp ln log log10 mod power pow pi degrees radians "
    "sin cos tan asin acos atan atan2 cot random"
)
_COMMON_STRING = "length lower upper ltrim rtrim trim replace substr substring concat concat_ws"
_COMMON_CONDITIONAL = "coalesce nullif"

FUNCTION_FAMILIES: dict[str, dict[str, str]] = {
    "postgres": {
        "aggregate": _COMMON_AGGREGATES + " array_agg string_agg bool_and bool_or every bit_and bit_or "
        "stddev stddev_pop stddev_samp variance var_pop var_samp corr covar_pop covar_samp "
        "regr_slope regr_intercept regr_r2 regr_count regr_avgx regr_avgy regr_sxx regr_syy regr_sxy "
        "percentile_cont percentile_disc mode json_agg jsonb_agg json_object_agg jsonb_object_agg grouping",
        "window": _COMMON_WINDOWS,
        "arithmetic": _COMMON_MATH + " cbrt div factorial width_bucket gcd lcm greatest least",
        "string": _COMMON_STRING + " ascii bit_length btrim char_length character_length chr format initcap "
        "left right lpad rpad md5 octet_length overlay position regexp_count regexp_instr regexp_like "
        "regexp_match regexp_matches regexp_replace regexp_split_to_array regexp_substr repeat reverse "
        "split_part starts_with strpos translate to_hex string_to_array array_to_string",
        "datetime": "age current_date current_time current_timestamp localtime localtimestamp now "
        "date_part date_trunc date_bin extract isfinite justify_days justify_hours justify_interval "
        "date make_date make_interval make_time make_timestamp make_timestamptz statement_timestamp "
        "transaction_timestamp clock_timestamp to_char to_date to_number to_timestamp timezone "
        "generate_series",
        "conditional": _COMMON_CONDITIONAL + " greatest least num_nulls num_nonnulls",
        "cast": "cast",
        "json_array": "json_array_length jsonb_array_length json_extract_path json_extract_path_text "
        "jsonb_extract_path jsonb_extract_path_text json_typeof jsonb_typeof to_json to_jsonb "
        "json_build_object jsonb_build_object json_build_array jsonb_build_array "
        "array_length array_position array_append cardinality unnest",
    },
    "sqlite": {
        "aggregate": _COMMON_AGGREGATES + " total group_concat string_agg",
        "window": _COMMON_WINDOWS,
        "arithmetic": _COMMON_MATH + " log2 max min",
        "string": _COMMON_STRING + " char hex unicode instr printf format quote glob like octet_length unhex",
        "datetime": "date time datetime julianday unixepoch strftime timediff current_date current_time "
        "current_timestamp",
        "conditional": _COMMON_CONDITIONAL + " ifnull iif likely unlikely",
        "cast": "cast typeof",
        "json_array": "json json_extract json_array_length json_type json_valid json_object json_array",
    },
    "mysql": {
        "aggregate": _COMMON_AGGREGATES + " group_concat bit_and bit_or bit_xor std stddev stddev_pop "
        "stddev_samp variance var_pop var_samp json_arrayagg json_objectagg",
        "window": _COMMON_WINDOWS,
        "arithmetic": _COMMON_MATH + " log2 div greatest least conv crc32 truncate",
        "string": _COMMON_STRING + " ascii bit_length char_length character_length char field find_in_set "
        "format hex instr lcase left locate lpad mid octet_length position regexp_instr regexp_like "
        "regexp_replace regexp_substr repeat reverse right rpad space strcmp substring_index ucase unhex md5",
        "datetime": "adddate addtime convert_tz curdate current_date current_time current_timestamp curtime "
        "date date_add date_format date_sub datediff day dayname dayofmonth dayofweek dayofyear extract "
        "from_days from_unixtime hour last_day localtime localtimestamp makedate maketime microsecond minute "
        "month monthname now period_add period_diff quarter sec_to_time second str_to_date subdate subtime "
        "time time_format time_to_sec timediff timestamp timestampadd timestampdiff to_days to_seconds "
        "unix_timestamp utc_date utc_time utc_timestamp week weekday weekofyear year yearweek",
        "conditional": _COMMON_CONDITIONAL + " if ifnull greatest least isnull",
        "cast": "cast convert",
        "json_array": "json_extract json_unquote json_length json_type json_valid json_object json_array "
        "json_contains json_keys",
    },
    "duckdb": {
        "aggregate": _COMMON_AGGREGATES + " string_agg list array_agg median mode quantile_cont quantile_disc "
        "stddev stddev_pop stddev_samp variance var_pop var_samp bool_and bool_or count_if arg_max arg_min "
        "approx_count_distinct",
        "window": _COMMON_WINDOWS,
        "arithmetic": _COMMON_MATH + " log2 greatest least",
        "string": _COMMON_STRING + " left right lpad rpad split_part strpos position regexp_matches regexp_replace "
        "regexp_extract starts_with ends_with contains reverse repeat initcap",
        "datetime": "current_date current_timestamp date_trunc date_part date_diff date_add datediff extract "
        "strftime strptime make_date year month day dayofweek last_day epoch to_timestamp now",
        "conditional": _COMMON_CONDITIONAL + " greatest least ifnull if",
        "cast": "cast try_cast typeof",
        "json_array": "list_value len array_length unnest json_extract json_extract_string",
    },
}
# A warehouse known only from a catalogue file runs nothing, so its list only has to admit what
# analysts write there: the common families and the usual spellings of each warehouse.
FILE_DIALECT_FAMILIES = {
    "aggregate": _COMMON_AGGREGATES + " array_agg listagg string_agg stddev variance median approx_count_distinct "
    "count_if any_value bool_and bool_or",
    "window": _COMMON_WINDOWS,
    "arithmetic": _COMMON_MATH + " div greatest least",
    "string": _COMMON_STRING + " left right lpad rpad split_part regexp_replace regexp_like regexp_substr "
    "position strpos charindex instr initcap reverse repeat starts_with ends_with contains",
    "datetime": "current_date current_time current_timestamp date date_trunc date_part extract dateadd datediff "
    "date_add date_sub date_diff timestampadd timestampdiff to_date to_timestamp to_char format_date "
    "last_day year month day",
    "conditional": _COMMON_CONDITIONAL + " ifnull nvl nvl2 iff if greatest least",
    "cast": "cast try_cast safe_cast",
    "json_array": "",
}
FILE_DIALECTS = ("snowflake", "bigquery", "redshift", "databricks", "trino", "tsql", "oracle", "clickhouse")

# Typed nodes sqlglot builds from SQL syntax, not from a function name, by family.
SYNTAX_NODES: dict[str, tuple[str, ...]] = {
    "conditional": ("Case", "If", "Coalesce", "Nullif", "Exists", "And", "Or", "Xor", "Greatest", "Least"),
    "cast": ("Cast", "TryCast", "Collate"),
    "datetime": ("CurrentDate", "CurrentTime", "CurrentTimestamp", "Localtime", "Localtimestamp", "Extract"),
    "string": ("Substring", "Trim", "StrPosition", "Overlay", "RegexpLike", "RegexpILike"),
    "arithmetic": ("Pow", "Sqrt", "Abs", "Cbrt"),
    "json_array": (
        "Array",
        "Unnest",  # `FROM unnest(...) AS s(x)`: a table function with a column list
        "ArrayContainsAll",
        "ArrayContainedBy",
        "ArrayOverlaps",
        "JSONExtract",
        "JSONExtractScalar",
        "JSONBExtract",
        "JSONBExtractScalar",
        "JSONBContains",
    ),
}

DIALECTS = (*FUNCTION_FAMILIES, *FILE_DIALECTS)
# Docket's dialect names → sqlglot's.
SQLGLOT_DIALECTS = {"sqlite": "sqlite", "postgres": "postgres", "postgresql": "postgres"}


def sqlglot_dialect(dialect: str) -> str:
    return SQLGLOT_DIALECTS.get((dialect or "sqlite").lower(), dialect)


@dataclass(frozen=True)
class AllowedFunctions:
    names: frozenset[str]  # every allowed SQL name, lower case
    node_types: frozenset[type]  # typed sqlglot nodes those names (and the syntax) parse to
    anonymous: frozenset[str]  # allowed names sqlglot reads as Anonymous, lower case


def families_of(dialect: str) -> dict[str, str]:
    """The families of a dialect Docket runs SQL on, or the shared list of a catalogue-file dialect."""
    return FUNCTION_FAMILIES.get(dialect) or FILE_DIALECT_FAMILIES


def family_names(dialect: str, family: str) -> frozenset[str]:
    return frozenset(families_of(dialect).get(family, "").split())


def _parsed_function_types(name: str, dialect: str) -> tuple[set[type], bool]:
    """Return the typed nodes a call of `name` parses to, and whether it parses as Anonymous."""
    builder = Dialect.get_or_raise(dialect).parser_class.FUNCTIONS.get(name.upper())
    if inspect.ismethod(builder) and inspect.isclass(builder.__self__) and issubclass(builder.__self__, exp.Func):
        return {builder.__self__}, False  # a plain `Class.from_arg_list`: no need to parse
    types: set[type] = set()
    anonymous = False
    for arguments in ("", "a", "a, b", "a, b, c", "a, INTERVAL 1 DAY"):
        try:
            tree = sqlglot.parse_one(f"SELECT {name}({arguments}) FROM t", read=dialect)
        except SqlglotError:
            continue
        except (AttributeError, IndexError, TypeError, ValueError):  # some builders (mysql date_add, bigquery
            continue  # regexp_extract) crash on an argument count they do not expect
        for node in tree.walk():
            if isinstance(node, exp.Anonymous):
                anonymous = anonymous or node.name.lower() == name
            elif isinstance(node, exp.Func):
                types.add(type(node))
    return types, anonymous


@functools.cache
def allowed_functions(dialect: str) -> AllowedFunctions:
    """Derive (once per dialect) the node types and anonymous names the allow-list admits."""
    names: set[str] = set()
    for family in families_of(dialect):
        names |= family_names(dialect, family)
    node_types = {getattr(exp, node) for nodes in SYNTAX_NODES.values() for node in nodes if hasattr(exp, node)}
    anonymous = set()
    for name in sorted(names):
        types, is_anonymous = _parsed_function_types(name, dialect)
        node_types |= types
        if is_anonymous:
            anonymous.add(name)
    return AllowedFunctions(frozenset(names), frozenset(node_types), frozenset(anonymous))
