"""The one SQL highlighter: Pygments' SQL lexers, rendered server-side, no JavaScript needed.

Each token becomes a <span> with Pygments' short class (`k` keyword, `s1` string, `mi`/`mf`
number, `c1`/`cm` comment, `n` name, ...; `static/css/docket.css` colours them under
`pre.sql`). Pygments escapes every token, so the output is safe to render.
"""

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import MySqlLexer, PostgresLexer, SqlLexer

LEXERS = {"postgres": PostgresLexer, "postgresql": PostgresLexer, "mysql": MySqlLexer}
FORMATTER = HtmlFormatter(nowrap=True)


def highlight_sql(sql: str, dialect: str = "sqlite") -> SafeString:
    """Return the SQL as escaped HTML with token spans (plain escaped text for no SQL)."""
    if not sql:
        return mark_safe(escape(sql or ""))  # noqa: S308 - escaped
    lexer = LEXERS.get((dialect or "").lower(), SqlLexer)(stripnl=False, ensurenl=False)
    return mark_safe(highlight(sql, lexer, FORMATTER))  # noqa: S308 - Pygments escapes every token
