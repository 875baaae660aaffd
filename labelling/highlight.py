"""Server-side SQL highlighting from sqlglot's tokenizer: no JavaScript library needed.

Each token becomes a <span> with a short class (k keyword, s string, n number, c comment,
f function or type); everything is HTML-escaped first, so the output is safe to render.
"""

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Tokenizer, TokenType

from probes.fingerprint import sqlglot_dialect

STRING_TYPES = {
    TokenType.STRING,
    TokenType.NATIONAL_STRING,
    TokenType.RAW_STRING,
    TokenType.BIT_STRING,
    TokenType.HEX_STRING,
    TokenType.BYTE_STRING,
    TokenType.HEREDOC_STRING,
}
PLAIN_TYPES = {TokenType.VAR, TokenType.IDENTIFIER}
KEYWORDS = {word.upper() for word in Tokenizer.KEYWORDS}


def _token_class(token) -> str:
    if token.token_type in STRING_TYPES:
        return "s"
    if token.token_type == TokenType.NUMBER:
        return "n"
    if token.token_type in PLAIN_TYPES:
        return ""
    if token.text.upper() in KEYWORDS and token.text[:1].isalpha():
        return "k"
    return ""


def _gap(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith(("--", "/*")):
        return f'<span class="c">{escape(text)}</span>'
    return escape(text)


def highlight_sql(sql: str, dialect: str = "sqlite") -> SafeString:
    """Return the SQL as escaped HTML with token spans; plain escaped text if it cannot be tokenized."""
    try:
        tokens = Dialect.get_or_raise(sqlglot_dialect(dialect)).tokenize(sql)
    except (SqlglotError, ValueError):
        return mark_safe(escape(sql))  # noqa: S308 - escaped above
    parts, position = [], 0
    for token in tokens:
        start, end = token.start, token.end + 1
        if start < position or end > len(sql):
            continue
        parts.append(_gap(sql[position:start]))
        text = escape(sql[start:end])
        css = _token_class(token)
        parts.append(f'<span class="{css}">{text}</span>' if css else text)
        position = end
    parts.append(_gap(sql[position:]))
    return mark_safe("".join(parts))  # noqa: S308 - every piece is escaped
