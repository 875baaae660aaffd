"""The guard's MySQL / MariaDB refusals (issue 34): what sqlglot and the server could read differently.

Before parsing (`mysql_text_refusal`), outside string literals and backtick identifiers:
a backslash anywhere (escapes in strings, `\\G`, `\\N`), executable and hint comments (`/*!`,
`/*M!`, `/*+` — a hint can raise the statement's time limit), `#` comments, a `--` not
followed by a space (MySQL reads it as two minus signs), user and system variables (`@x :=`,
`@@global`), ODBC escapes (`{fn ...}`), and the words that reach outside a query:
`INTO OUTFILE/DUMPFILE/@var`, `LOAD_FILE`, `SLEEP`, `BENCHMARK`, `GET_LOCK` and the other lock
functions, `HANDLER`, `PROCEDURE`, `SET`. After parsing, `mysql_schema_refusal` refuses the
`mysql`, `performance_schema` and `sys` schemas (information_schema is refused for every
dialect). The function allow-list is `probes.allowlist`'s mysql families.
"""

import re

from sqlglot import exp

# Literals, identifiers and comments in reading order; a backslash escape inside a literal is
# matched so the literal is not ended early (and then refused).
_LEXEMES = re.compile(
    r"'(?:[^'\\]|''|\\.)*+(?:'|\Z)|\"(?:[^\"\\]|\"\"|\\.)*+(?:\"|\Z)|`(?:[^`]|``)*+(?:`|\Z)"
    r"|/\*(?:[^*]|\*(?!/))*+(?:\*/|\Z)|--[^\n]*+|#[^\n]*+",
    re.DOTALL,
)
_WORDS = re.compile(
    r"\b(into\s+(?:outfile|dumpfile)|load_file|sleep|benchmark|get_lock|release_lock|release_all_locks|"
    r"is_free_lock|is_used_lock|master_pos_wait|source_pos_wait|handler|procedure|set)\b",
    re.IGNORECASE,
)
_INTO_VARIABLE = re.compile(r"\binto\s*@", re.IGNORECASE)
SYSTEM_SCHEMAS = frozenset({"mysql", "performance_schema", "sys"})


def _outside(sql: str) -> tuple[str, str | None]:
    """Return the text with literals and identifiers blanked, or a refusal met on the way."""
    kept, position = [], 0
    for match in _LEXEMES.finditer(sql):
        kept.append(sql[position : match.start()])
        lexeme = match.group()
        position = match.end()
        if lexeme.startswith("/*"):
            if re.match(r"/\*\s*(?:!|M!|\+)", lexeme):
                return "", "an executable or hint comment (/*! */, /*M! */, /*+ */) is not allowed on MySQL"
            kept.append(" ")
        elif lexeme.startswith("#"):
            return "", "a # comment is not allowed on MySQL (write -- with a space)"
        elif lexeme.startswith("--"):
            if len(lexeme) > 2 and not lexeme[2].isspace():
                return "", "'--' not followed by a space: MySQL reads it as two minus signs, not a comment"
            kept.append(" ")
        else:
            kept.append(lexeme[0] + " " * (len(lexeme) - 2) + lexeme[-1] if len(lexeme) > 1 else lexeme)
    kept.append(sql[position:])
    return "".join(kept), None


def mysql_text_refusal(sql: str) -> str | None:
    """Refuse what the server and sqlglot could read differently, and what reaches outside a query."""
    if "\\" in sql:
        if re.search(r"\\[gG]\s*$", sql):
            return "\\G is a client command, not SQL; not allowed"
        return "a backslash is not allowed on MySQL (escapes in strings are read differently by the server)"
    text, refusal = _outside(sql)
    if refusal:
        return refusal
    if "@" in text:
        return "user and system variables (@x, @x :=, @@setting) are not allowed on MySQL"
    if "{" in text:
        return "ODBC escape syntax ({fn ...}, {d '...'}) is not allowed on MySQL"
    if _INTO_VARIABLE.search(text):
        return "SELECT ... INTO a variable is not allowed"
    word = _WORDS.search(text)
    if word:
        name = " ".join(word.group(1).upper().split())
        return f"{name} is not allowed in a read-only probe on MySQL"
    return None


def mysql_schema_refusal(node: exp.Table) -> str | None:
    """Refuse the server's own schemas: users and grants, sessions and statements, settings."""
    for part in (node.catalog, node.db):
        if (part or "").lower() in SYSTEM_SCHEMAS:
            return f"reading the system schema {part} is not allowed"
    return None
