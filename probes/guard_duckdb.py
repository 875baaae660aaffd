"""The guard's DuckDB refusals (issue 34): what reaches files, the environment or the engine's settings.

Before parsing (`duckdb_text_refusal`), outside string literals and quoted identifiers: the
file readers (`read_csv*`, `read_parquet`, `parquet_scan`, `read_json*`, `read_text`,
`read_blob`, `sniff_csv`, `glob`), `getenv`, `query` / `query_table` (SQL held in a string),
the `duckdb_*` catalogue functions, `pragma_*` and `which_secret`, and the statements `ATTACH`,
`DETACH`, `COPY`, `EXPORT`, `IMPORT`, `INSTALL`, `LOAD`, `PRAGMA`, `SET`, `RESET`, `CALL`, `USE`,
`CHECKPOINT`. After parsing (`duckdb_table_refusal`), a table named like a file (`FROM
'orders.csv'`, `FROM "x.parquet"`: DuckDB's replacement scans read the file). The engine holds
the same line itself (`probes.duckdb_runner`: no external access, configuration locked).
"""

import re

from sqlglot import exp

_QUOTED = re.compile(r"'(?:[^']|'')*+(?:'|\Z)|\"(?:[^\"]|\"\")*+(?:\"|\Z)|--[^\n]*+|/\*(?:[^*]|\*(?!/))*+(?:\*/|\Z)")
_WORDS = re.compile(
    r"\b(read_csv\w*|read_parquet|parquet_\w+|read_json\w*|read_ndjson\w*|read_text|read_blob|read_xlsx|sniff_csv|"
    r"glob|getenv|query|query_table|duckdb_\w+|pragma_\w+|which_secret|attach|detach|copy|export|import|install|"
    r"load|pragma|set|reset|call|use|checkpoint|force)\b",
    re.IGNORECASE,
)


def duckdb_text_refusal(sql: str) -> str | None:
    text = _QUOTED.sub(lambda m: " " if m.group().startswith(("--", "/*")) else "''", sql)
    word = _WORDS.search(text)
    if word:
        return (
            f"{word.group(1).upper()} is not allowed in a read-only probe on DuckDB (files, settings, SQL in strings)"
        )
    return None


def duckdb_table_refusal(node: exp.Table) -> str | None:
    name = node.name
    if any(mark in name for mark in "./\\:*?") and isinstance(node.this, exp.Identifier):
        return f"a table named like a file ({name!r}) is read from disk by DuckDB; not allowed"
    return None
