"""The guard's first step: refusals read from the raw text, before any parsing.

Over `WAREHOUSE_MAX_SQL_BYTES`, not valid UTF-8, a control character (tab, CR and LF are
fine), or anything two readers (sqlglot and the database) could read differently: `U&`
identifiers and strings, `UESCAPE`, a backslash in a quoted identifier, `E'...'` escape
strings, dollar quoting, nested block comments (PostgreSQL nests them, SQLite does not),
a quoted function name; or more tokens than the node limit could ever allow.
"""

import re
import unicodedata

from probes.guard_limits import GuardLimits

# Control characters other than tab, LF and CR (C0, DEL, C1).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_U_AMP = re.compile(r"u&\s*['\"]", re.IGNORECASE)
_UESCAPE = re.compile(r"\buescape\b", re.IGNORECASE)
# Comments, quoted identifiers and string literals, in reading order: an E'...' escape
# string is a literal whose opening quote follows a lone E. Every repetition is possessive
# and an unclosed one runs to the end of the text, so one pass is linear in the text's
# length whatever it holds (many unclosed `/*` took seconds, many `"` minutes, before).
_LEXEMES = re.compile(r"--[^\n]*+|/\*(?:[^*]|\*(?!/))*+(?:\*/|\Z)|\"(?:[^\"]|\"\")*+(?:\"|\Z)|'(?:[^']|'')*+(?:'|\Z)")
_DOLLAR_QUOTE = re.compile(r"\$(?:[A-Za-z_\x80-\uffff][\w\x80-\uffff]*+)?\$")
# A quoted identifier followed by "(" (comments between them count as space): a call of a
# quoted function name (sqlglot may read `"LOWER"(x)` as lower(), the database as a
# different, case-sensitive function), unless it names a CTE or an alias with a column list
# (`AS "t"(a, b)`, `WITH "t"(a) AS (...)`).
_OPEN_PAREN = re.compile(r"\s*+\(")
_BEFORE_COLUMN_LIST = re.compile(r"(?:\bas|\bwith|\brecursive|\))\s*$", re.IGNORECASE)
_CTE_COLUMN_LIST = re.compile(r"[^()]*+\)\s*+as\s*+(?:not\s++)?(?:materialized\s*+)?\(", re.IGNORECASE)
# A rough token count (a quoted string or a word is one token), so that a text with more
# tokens than the node limit could ever allow is refused without paying for a parse.
_TOKEN = re.compile(r"'(?:[^']|'')*+(?:'|\Z)|\"[^\"]*+(?:\"|\Z)|\w++|[^\w\s]")
TOKENS_PER_NODE = 2


def _control_character(sql: str) -> str | None:
    match = _CONTROL.search(sql)
    if match:
        char = match.group()
        name = "NUL" if char == "\x00" else unicodedata.name(char, "control character")
        return f"U+{ord(char):04X} ({name})"
    for match in _NON_ASCII.finditer(sql):
        char = match.group()
        if unicodedata.category(char) in ("Cf", "Cs", "Co", "Cn"):
            return f"U+{ord(char):04X} ({unicodedata.name(char, 'format or unassigned character')})"
    return None


def _nested_comment(sql: str) -> bool:
    """A block comment holding another `/*` (PostgreSQL would nest it; SQLite would not)."""
    return any(m.group().startswith("/*") and "/*" in m.group()[2:] for m in _LEXEMES.finditer(sql))


def _quoting_refusal(sql: str) -> str | None:
    """Read literals, quoted identifiers and comments in order; refuse escapes inside them."""
    for match in _LEXEMES.finditer(sql):
        start, lexeme = match.start(), match.group()
        if lexeme[0] == '"' and "\\" in lexeme:
            return "a backslash in a quoted identifier (a Unicode escape the guard cannot check)"
        if lexeme[0] == "'" and start and sql[start - 1] in "eE" and (start < 2 or not _is_word(sql[start - 2])):
            return "an E'...' escape string (the database and the guard could read it differently)"
    return None


def _is_word(char: str) -> bool:
    return char.isalnum() or char in "_$"


def without_comments(sql: str) -> str:
    """The text with each comment replaced by as many spaces (positions are kept)."""
    pieces, last = [], 0
    for match in _LEXEMES.finditer(sql):
        if match.group().startswith(("--", "/*")):
            pieces += [sql[last : match.start()], " " * (match.end() - match.start())]
            last = match.end()
    return "".join([*pieces, sql[last:]])


def _quoted_call(sql: str) -> str | None:
    text = without_comments(sql)
    for match in _LEXEMES.finditer(text):
        if match.group()[0] != '"':
            continue
        called = _OPEN_PAREN.match(text, match.end())
        if not called:
            continue
        before = text[max(0, match.start() - 20) : match.start()]
        if _BEFORE_COLUMN_LIST.search(before):
            continue
        if before.rstrip().endswith(",") and _CTE_COLUMN_LIST.match(text, called.end()):
            continue
        return match.group()[1:-1].replace('""', '"')
    return None


def text_refusal(sql: str, limits: GuardLimits) -> str | None:
    """Return why the raw text is refused before parsing, or None."""
    try:
        size = len(sql.encode("utf-8"))
    except UnicodeEncodeError:
        return "the SQL text is not valid UTF-8 (a lone surrogate)"
    if size > limits.max_bytes:
        return f"the SQL text is {size:,} bytes, over WAREHOUSE_MAX_SQL_BYTES ({limits.max_bytes:,})"
    control = _control_character(sql)
    if control:
        return f"control character {control} in the SQL text"
    if _U_AMP.search(sql):
        return "a U& Unicode-escaped identifier or string (the database and the guard could read it differently)"
    if _UESCAPE.search(sql):
        return "UESCAPE (the database and the guard could read it differently)"
    quoting = _quoting_refusal(sql) if ("'" in sql or '"' in sql) else None
    if quoting:
        return quoting
    if _DOLLAR_QUOTE.search(sql):
        return "a dollar-quoted string (the database and the guard could read it differently)"
    if _nested_comment(sql):
        return "a nested block comment (PostgreSQL nests /* */, SQLite does not)"
    if '"' in sql:
        quoted = _quoted_call(sql)
        if quoted is not None:
            return f'quoted function name "{quoted}" is not allowed'

    tokens = sum(1 for _ in _TOKEN.finditer(sql))
    if tokens > TOKENS_PER_NODE * limits.max_nodes:
        return f"the SQL text has {tokens:,} tokens, more than WAREHOUSE_MAX_SQL_NODES ({limits.max_nodes:,}) allows"
    return None
